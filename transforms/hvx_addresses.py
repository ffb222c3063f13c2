"""
Address folding in a basic block of `hvx` code: pointer steps (post-increment loads
and stores, `add(Rs,#c)`) become immediate offsets from the first pointer they derive
from, and a pointer that leaves the block (or feeds anything but an address) is made
once, by one `add` from that first pointer.

An unrolled loop body is a long chain of post-increments through one register, each
waiting for the one before: at most one of them per packet. Off one base they are
independent, so the packer can put two loads in a packet, as LLVM's own loop strength
reduction lets its packetizer do. An offset the instruction cannot encode without a
constant extender (which takes a packet word) is left as it was.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation, SSAValue

from mobile_opt.dialects.hvx import ops

VECTOR = 128

POST_INCREMENT_FORMS: dict[type[ops.Instruction], type[ops.Instruction]] = {
    ops.VmemLoadPostIncOp: ops.VmemLoadOp,
    ops.VmemStorePostIncOp: ops.VmemStoreOp,
    ops.LoadWordPostIncOp: ops.LoadWordOp,
    ops.LoadDoubleWordPostIncOp: ops.LoadDoubleWordOp,
}
"""Each post-increment access and the base+offset access at the same address."""

SCALAR_OFFSETS = range(-1024, 1024)
"""Byte offsets every scalar access encodes without an extender (memb's is the least)."""


ADD_IMMEDIATES = range(-(2**15), 2**15)
"""What `add(Rs,#c)` encodes without an extender."""


def _unit(kind: type[Operation]) -> int:
    """Bytes per step of an access's offset."""
    return VECTOR if issubclass(kind, ops.VectorMemory) else 1


def _encodable(kind: type[Operation], offset: int) -> bool:
    """Can a base+offset access of `kind` encode the byte `offset` without an extender?"""
    unit = _unit(kind)
    if offset % unit:
        return False
    if issubclass(kind, ops.VectorMemory):
        low, high = kind.OFFSET_RANGE
        return low <= offset // unit <= high
    return offset in SCALAR_OFFSETS and offset % kind.ALIGN == 0  # type: ignore[attr-defined]


def _is_offset_access(op: Operation) -> bool:
    return (isinstance(op, (ops.VectorMemory, ops.ScalarMemory)) and not op.TIED
            and hasattr(op, "base") and op.MEMORY is not None)


def fold_addresses(block: Block) -> None:
    """Fold the pointer steps of `block`'s straight-line code (not of nested loops)."""
    derived: dict[SSAValue, tuple[SSAValue, int]] = {}  # pointer -> (first pointer, bytes)
    stepped: list[tuple[Operation, SSAValue]] = []  # erased steps and the pointer they made

    def origin(value: SSAValue) -> tuple[SSAValue, int]:
        return derived.get(value, (value, 0))

    for op in list(block.ops):
        if isinstance(op, ops.AddImmOp):
            root, delta = origin(op.s)
            if delta + op.value.value.data in ADD_IMMEDIATES:
                derived[op.d] = (root, delta + op.value.value.data)
                stepped.append((op, op.d))
        elif type(op) in POST_INCREMENT_FORMS:
            root, delta = origin(op.base)  # type: ignore[attr-defined]
            form = POST_INCREMENT_FORMS[type(op)]
            unit = _unit(form)
            step = op.offset.value.data * unit  # type: ignore[attr-defined]
            if not _encodable(form, delta) or delta + step not in ADD_IMMEDIATES:
                continue  # it stays; the pointer it makes is a new first pointer
            region = op.region.data if op.region is not None else None  # type: ignore[attr-defined]
            if isinstance(op, ops.VmemStorePostIncOp):
                access = ops.VmemStoreOp(root, op.s, delta // unit, region)
            else:
                access = form(root, delta // unit, region)  # type: ignore[call-arg]
                op.results[0].replace_all_uses_with(access.results[0])
            block.insert_op_before(access, op)
            derived[op.results[-1]] = (root, delta + step)
            stepped.append((op, op.results[-1]))
        elif _is_offset_access(op):
            root, delta = origin(op.base)  # type: ignore[attr-defined]
            unit = _unit(type(op))
            offset = op.offset.value.data * unit + delta  # type: ignore[attr-defined]
            if root is not op.base and _encodable(type(op), offset):  # type: ignore[attr-defined]
                op.operands[list(op.operands).index(op.base)] = root  # type: ignore[attr-defined]
                op.offset = IntegerAttr(offset // unit, i64)  # type: ignore[attr-defined]

    # every pointer still used is made once, from its first pointer, where its step was
    # (last first: a step's only uses may be the later steps of its chain)
    for op, pointer in reversed(stepped):
        root, delta = derived[pointer]
        if pointer.uses:
            made = ops.AddImmOp(root, delta, pointer.type)  # type: ignore[arg-type]
            block.insert_op_before(made, op)
            pointer.replace_all_uses_with(made.d)
        op.detach()
        op.erase(safe_erase=False)
