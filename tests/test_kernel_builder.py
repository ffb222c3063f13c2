"""
`onnx-to-texture`'s kernel builder makes each constant and integer or float sum once
where it dominates its uses: asked again in the same block or in one nested inside it,
it gives back the value it made (what `cse` would have merged); asked in a block that the
first does not dominate, it makes another.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf

from mobile_opt.transforms.onnx_to_texture.kernel_builder import KernelBuilder


def _ops(kb: KernelBuilder, kind: type) -> list:
    return [op for op in kb.kernel.walk() if isinstance(op, kind)]


def test_constants_and_sums_are_made_once_where_they_dominate():
    kb = KernelBuilder("k", [])
    four = kb.int(4)
    assert kb.int(4) is four and kb.float(4.0) is not four
    gid = kb.emit(arith.ConstantOp.from_int_and_width(7, 32))  # opaque to the builder
    total = kb.binary("add", gid, four)
    assert kb.binary("add", gid, four) is total
    assert kb.binary("add", four, gid) is not total  # not commuted: cse would not either
    inner = {}

    def body(i, acc):
        assert kb.int(4) is four  # the outer block's, made before the loop
        assert kb.binary("add", gid, 4) is total
        inner["nine"] = kb.int(9)
        assert kb.int(9) is inner["nine"]
        return [acc + i]

    kb.loop(0, 16, body, [kb.int(0)])
    # made inside the loop, 9 does not dominate the block after it: another is made
    after = kb.int(9)
    assert after is not inner["nine"]
    assert after.value.owner.parent_block() is kb.kernel.body.block
    kb.finish()
    kb.kernel.verify()
    constants = [(op.value.value.data, op.result.type) for op in _ops(kb, arith.ConstantOp)
                 if op.parent_block() is kb.kernel.body.block and op is not gid.value.owner]
    assert len(constants) == len(set(constants))
    assert len(_ops(kb, scf.ForOp)) == 1


def test_one_scope_does_not_lend_to_its_sibling():
    """A value made in a branch is not reused by the other branch, which it does not
    dominate."""
    kb = KernelBuilder("k", [])
    cond = kb.compare("lt", kb.emit(arith.ConstantOp.from_int_and_width(1, 32)), 2)
    made = {}

    def then():
        made["then"] = kb.int(11)
        return [made["then"]]

    def otherwise():
        made["else"] = kb.int(11)
        return [made["else"]]

    kb.if_(cond, then, otherwise)
    assert made["then"] is not made["else"]
    kb.finish()
    kb.kernel.verify()
