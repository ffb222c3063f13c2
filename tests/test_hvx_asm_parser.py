"""
The Hexagon assembly parser read back against what wrote the text: our `-t
hexagon-asm` printer (the DSP path's kernels and random blocks, printed, parsed and
printed again: the same text), clang (its loops found and counted as a regex counts
them), and the hardware (a read inside a packet sees the old value unless it is
`.cur`/`.new`: the parsed SSA says so, and QEMU agrees once the packets are dissolved
and repacked).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt import pipelines
from mobile_opt.backends.hexagon import harness
from mobile_opt.backends.hexagon.asm_parser import (
    NotSupported,
    dissolve_packets,
    import_packets,
    innermost_loops,
    parse_assembly,
    parse_block,
    parse_program,
    units,
)
from mobile_opt.backends.hexagon.c_printer import kernels_as_c
from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS
from mobile_opt.backends.hexagon.runner import assembly
from mobile_opt.checking.hvx_kernels import (
    ConvCase,
    compile_and_run,
    conv_program,
    elementwise_sum_program,
)
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS
from mobile_opt.dialects.vliw import PacketOp
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape
from mobile_opt.transforms.onnx_to_hvx.program import Program
from test_hvx_packing import KERNELS, OUT_BYTES, RandomBlock

toolchain = pytest.mark.usefixtures("hexagon_toolchain")

PACKINGS = ("single", "greedy", "sda")


# ---------------------------------------------------------------- helpers


def kernel_program(shape: ConvShape, layout) -> Program:
    """The DSP path's kernel for `shape` (as tests/test_hvx_packing.py builds it), unrun."""
    rng = np.random.default_rng(7)
    per_input = 1 if shape.depthwise else shape.channels
    x = rng.integers(0, 256, (shape.channels, shape.height, shape.width)).astype(np.uint8)
    w = rng.integers(-64, 64, (shape.out_channels, per_input, *shape.kernel)).astype(np.int8)
    bias = rng.integers(-3000, 3000, shape.out_channels)
    return conv_program(layout, ConvCase(shape, x, w, bias, 9, 0.004, 120)).program


def assembled(module: ModuleOp, packing: str) -> str:
    """`-t hexagon-asm` of the module, allocated and packed by the DSP back end."""
    pipelines.apply(module, pipelines.dsp_back_end(packing))
    return assembly(module, packing if packing in PRINTER_PACKINGS else "greedy")


def printed(module: ModuleOp, packing: str) -> str:
    """`-t hexagon-asm` of a copy of the module (allocated and packed as `packing` says)."""
    return assembled(module.clone(), packing)


def reprinted(text: str, packing: str) -> tuple[str, ModuleOp]:
    module = parse_program(text, "program.s")
    module.verify()
    # the packets are all there: the printer packs nothing anew, in either mode
    return assembly(module, "single" if packing == "single" else "greedy"), module


def run_text(text: str, folder: Path) -> bytes:
    return harness.run(harness.build(text, folder))


def funcs(module: ModuleOp) -> list[ops.FuncOp]:
    return [op for op in module.walk() if isinstance(op, ops.FuncOp)]


def dissolved(module: ModuleOp) -> ModuleOp:
    module = module.clone()
    for func in funcs(module):
        dissolve_packets(func.body.block)
    assert not any(isinstance(op, PacketOp) for op in module.walk())
    return module


def old_value_reads(module: ModuleOp) -> int:
    """Reads, in packets, of a register another instruction of the packet writes."""
    count = 0
    for packet in module.walk():
        if not isinstance(packet, PacketOp):
            continue
        members = packet.instructions()
        for op in members:
            others = {u for other in members if other is not op
                      for r in other.results for u in units(r.type)}
            for value in op.operands:
                owner = value.owner
                outside = not isinstance(owner, Operation) or owner.parent_op() is not packet
                count += outside and bool(set(units(value.type)) & others)
    return count


def maker(value: SSAValue) -> Operation:
    """The instruction (or hvx.arg) that made a value, looking through packets."""
    owner = value.owner
    if isinstance(owner, PacketOp):
        return maker(owner.inner_values()[value.index])  # type: ignore[union-attr]
    assert isinstance(owner, Operation)
    return owner


def only_func(module: ModuleOp) -> ops.FuncOp:
    (func,) = funcs(module)
    return func


def packets_of(func: ops.FuncOp) -> list[PacketOp]:
    return [op for op in func.body.block.ops if isinstance(op, PacketOp)]


# ---------------------------------------------------------------- printed, parsed, printed


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_print_back_the_same(kernel, layout):
    module = kernel_program(KERNELS[kernel], layout).module()
    for packing in PACKINGS:
        text = printed(module, packing)
        again, parsed = reprinted(text, packing)
        assert again == text, f"{packing}: the reprinted program differs"
        assert len(funcs(parsed)) == len(funcs(module))
        loops = [op for op in parsed.walk() if isinstance(op, ops.LoopOp)]
        assert loops, "the kernel's loops come back as hvx.loop"


def test_elementwise_sum_prints_back_the_same():
    program, _ = elementwise_sum_program(4)
    module = program.module()
    for packing in (*PACKINGS, "list"):
        text = printed(module, packing)
        assert reprinted(text, packing)[0] == text, packing


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31), st.integers(1, 40), st.sampled_from([*PACKINGS, "list"]))
def test_random_blocks_print_back_the_same(seed, length, packing):
    func = RandomBlock("block", "out", seed, length).b.func
    module = ModuleOp([ops.BufferOp("inp", 4096), ops.BufferOp("out", 2048), func])
    text = printed(module, packing)
    assert reprinted(text, packing)[0] == text


# ---------------------------------------------------------------- SSA inside packets


def test_cur_load_feeds_its_packet():
    func = only_func(parse_block(
        "{ v0.cur = vmem(r1+#0); v2.w = vadd(v0.w,v1.w); v3.w = vasr(v0.w,r4) }"))
    args = {op.d.type.asm_name() for op in func.body.block.ops if isinstance(op, ops.ArgOp)}
    assert args == {"r1", "v1", "r4"}  # v0 is the packet's own
    (packet,) = packets_of(func)
    load, add, shift = packet.instructions()
    assert isinstance(load, ops.VmemLoadOp)
    assert add.u.owner is load and shift.u.owner is load
    assert isinstance(add.v.owner, ops.ArgOp)


def test_new_store_takes_the_value_of_its_packet():
    # written consumer first: the SSA order puts the producer first
    func = only_func(parse_block("""\
    { v0 = vmem(r1+#0) }
    { vmem(r2+#0) = v3.new; v3.w = vadd(v0.w,v0.w) }
    { r5 = add(r4,#1); memw(r2+#512) = r5.new }
    { v5:4.h = vmpy(v0.ub,r4.b); vmem(r2+#1) = v5.new }
"""))
    _, vector, scalar, pair = packets_of(func)
    add, store = vector.instructions()
    assert isinstance(add, ops.VaddWOp) and isinstance(store, ops.VmemStoreOp)
    assert store.s.owner is add
    addi, word = scalar.instructions()
    assert word.t.owner is addi
    vmpy, high = pair.instructions()
    view = high.s.owner
    assert isinstance(view, ops.HiOp) and view.parent_op() is pair and view.pair.owner is vmpy


def test_import_packets_of_a_parsed_file():
    asm = parse_assembly("kernel:\n  { v0.cur = vmem(r1+#0); v1.w = vadd(v0.w,v2.w) }\n"
                         "  { vmem(r1+#1) = v1 }\n", "k.s")
    func = import_packets(asm.function("kernel").packets(), "kernel", "k.s")
    ModuleOp([func]).verify()
    assert func.sym_name.data == "kernel"
    first, second = packets_of(func)
    (store,) = second.instructions()
    assert maker(store.s) is first.instructions()[1]


def test_unmarked_reads_in_a_packet_see_the_old_value():
    func = only_func(parse_block("""\
    { v0 = vmem(r1+#0); r3 = memw(r1+#8) }
    { v0 = vmem(r1+#2); v2.w = vadd(v0.w,v1.w); r3 = add(r3,#7); memw(r2+#0) = r3 }
"""))
    first, second = packets_of(func)
    old_load, old_word = first.instructions()
    members = second.instructions()
    add = next(op for op in members if isinstance(op, ops.VaddWOp))
    store = next(op for op in members if isinstance(op, ops.StoreWordOp))
    addi = next(op for op in members if isinstance(op, ops.AddImmOp))
    assert add.u.owner is first and maker(add.u) is old_load
    assert maker(store.t) is old_word and maker(addi.s) is old_word
    # a register read before the packet that writes it: the function's argument
    func = only_func(parse_block("{ v0 = vmem(r1+#1); v2.w = vadd(v0.w,v1.w) }"))
    (packet,) = packets_of(func)
    add = packet.instructions()[0]  # it reads before the load writes
    assert isinstance(add, ops.VaddWOp) and isinstance(add.u.owner, ops.ArgOp)


def test_a_swap_reads_both_old_values_and_cannot_dissolve():
    func = only_func(parse_block("{ v0 = v1; v1 = v0 }"))
    (packet,) = packets_of(func)
    a, b = packet.instructions()
    assert isinstance(a.u.owner, ops.ArgOp) and isinstance(b.u.owner, ops.ArgOp)
    with pytest.raises(NotSupported, match="overwrites first"):
        dissolve_packets(func.body.block)


OLD_VALUES_BLOCK = """\
    { r1 = ##inp; r2 = ##out }
    { v0 = vmem(r1+#0); r3 = memw(r1+#8) }
    { v1 = vmem(r1+#1); r4 = add(r3,#5) }
    { v0 = vmem(r1+#2); v2.w = vadd(v0.w,v1.w); r3 = add(r4,#7); memw(r2+#1024) = r3 }
    { v1.cur = vmem(r1+#3); v3.w = vsub(v1.w,v0.w) }
    { v4.w = vadd(v3.w,v2.w); vmem(r2+#0) = v4.new; v3 = v0 }
    { vmem(r2+#1) = v3; r5 = add(r3,r4) }
    { vmem(r2+#2) = v2; memw(r2+#1028) = r5 }
    { vmem(r2+#3) = v1 }
"""


@toolchain
def test_old_values_under_qemu():
    """The block as written, and dissolved then repacked, compute what numpy says."""
    rng = np.random.default_rng(1)
    inp = rng.integers(0, 256, 1024).astype(np.uint8)
    module = parse_block(OLD_VALUES_BLOCK, "kernel", "block.s")
    # the add's v0, the store's r3 (packet 4) and the add's v3 (packet 6) are old values
    assert old_value_reads(module) == 3
    vectors = inp.view("<i4").reshape(-1, 32).astype(np.int64)
    word = int(inp[8:12].view("<i4")[0])
    expected = np.zeros(512, np.int64)  # the words of out
    expected[0:32] = (vectors[3] - vectors[2]) + (vectors[0] + vectors[1])
    expected[32:64] = vectors[2]  # v3 = v0, the load of the packet before
    expected[64:96] = vectors[0] + vectors[1]  # v2 = the old v0 + v1
    expected[96:128] = vectors[3]  # the .cur load
    expected[256] = word  # the old r3, stored beside the add that overwrites it
    expected[257] = (word + 5 + 7) + (word + 5)
    expected_bytes = (expected & 0xFFFFFFFF).astype("<u4").view(np.uint8)

    def run(module: ModuleOp, packing: str) -> np.ndarray:
        program = Program()
        program.data("inp", inp)
        program.storage("out", 2048)
        program.output("out", 2048)
        func = only_func(module.clone())
        func.detach()
        program.kernels.append(func)
        return compile_and_run(program, packing, pipelines.dsp_back_end)[0]["out"]

    assert np.array_equal(run(module, "greedy"), expected_bytes)  # the packets as written
    flat = dissolved(module)
    for packing in ("single", "sda", "list"):
        assert np.array_equal(run(flat, packing), expected_bytes), packing


CUR_POST_INCREMENT_BLOCK = """\
    { r1 = ##out; r2 = ##inp }
    { v5 = vmem(r2+#0); r1 = add(r1,#128) }
    { vmem(r1+#0) = v5 }
    { v0.cur = vmem(r1++#1); v6.w = vadd(v0.w,v0.w); vmem(r1+#2) = v6.new }
    { vmem(r1+#0) = v0 }
"""


@toolchain
def test_cur_forwards_the_vector_not_the_new_base():
    """A `.cur` post-increment load: its vector is new in its packet, its base is old."""
    module = parse_block(CUR_POST_INCREMENT_BLOCK, "kernel", "block.s")
    func = only_func(module)
    packet = packets_of(func)[3]
    load, add, store = packet.instructions()
    assert add.u.owner is load and store.s.owner is add  # .cur, then .new
    assert isinstance(maker(store.base), ops.AddImmOp)  # r1 as the packet before left it
    with pytest.raises(NotSupported, match="overwrites first"):
        dissolve_packets(func.clone().body.block)  # the store needs r1 before and v6 after
    inp = np.random.default_rng(2).integers(0, 256, 128).astype(np.uint8)
    program = Program()
    program.data("inp", inp)
    program.storage("out", 5 * 128)
    program.output("out", 5 * 128)
    func.detach()
    program.kernels.append(func)
    out = compile_and_run(program, "greedy", pipelines.dsp_back_end)[0]["out"].reshape(5, 128)
    doubled = (inp.view("<i4").astype(np.int64) * 2 & 0xFFFFFFFF).astype("<u4").view(np.uint8)
    assert not out[0].any() and not out[4].any()
    assert (out[1] == inp).all() and (out[2] == inp).all()
    assert (out[3] == doubled).all()  # stored at the old base + 2 vectors


@toolchain
def test_random_programs_keep_their_meaning_dissolved(tmp_path):
    """
    Packed by SDA, printed, parsed, dissolved, printed one instruction a packet: the
    same memory, though many packets read registers that they also overwrite.
    """
    program = Program()
    rng = np.random.default_rng(3)
    program.data("inp", rng.integers(0, 256, 4096).astype(np.uint8))
    for i in range(6):
        program.storage(f"out{i}", OUT_BYTES, fill=i)
        program.output(f"out{i}", OUT_BYTES)
        # long blocks: registers get reused, so packets hold writes after reads
        program.kernels.append(RandomBlock(f"block{i}", f"out{i}", 100 + i, 150).b.func)
    text = assembled(program.module(), "sda")
    parsed = parse_program(text, "program.s")
    assert old_value_reads(parsed) > 10
    flat = dissolved(parsed)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run_text(text, tmp_path / "a") == run_text(assembled(flat, "single"), tmp_path / "b")


@toolchain
def test_kernel_with_loops_keeps_its_meaning_dissolved(tmp_path):
    program = kernel_program(KERNELS["conv3x3"], MATRIX_LAYOUTS[1])
    text = assembled(program.module(), "sda")
    parsed = parse_program(text, "program.s")
    assert old_value_reads(parsed) > 50
    flat = dissolved(parsed)
    for folder in ("packed", "single", "repacked"):
        (tmp_path / folder).mkdir()
    reference = run_text(text, tmp_path / "packed")
    assert run_text(assembled(flat.clone(), "single"), tmp_path / "single") == reference
    assert run_text(assembled(flat, "list"), tmp_path / "repacked") == reference


# ---------------------------------------------------------------- clang's assembly

SCALE_ADD_C = """\
#include <hexagon_types.h>
#include <hexagon_protos.h>

void scale_add(HVX_Vector *restrict out, const HVX_Vector *restrict a,
               const HVX_Vector *restrict b, int n, int shift) {
    #pragma clang loop unroll(disable)
    for (int i = 0; i < n; i++) {
        HVX_VectorPair p = Q6_Wh_vmpy_VubRb(a[i], 0x01020304);
        HVX_Vector s = Q6_Vw_vadd_VwVw(Q6_V_lo_W(p), Q6_V_hi_W(p));
        out[i] = Q6_Vw_vasr_VwR(Q6_Vw_vadd_VwVw(s, b[i]), shift);
    }
}
"""

_PACKET = re.compile(r"\{[^{}]*\}(?:\s*:endloop(\d+))?")
_LOOP_SETUP = re.compile(r"(?:sp\d)?loop([01])\(#*(\.L\w+),")
_JUMP = re.compile(r"jump(?::n?t)?\s+(\.L\w+)")


def regex_innermost_loops(text: str) -> dict[str, int]:
    """
    Header label -> packets of each innermost loop, by regular expressions alone: a
    loop runs from its label to the first `:endloopN` after it (`loopN` set up to the
    label) or to a packet jumping back to it; innermost: holding no other loop.
    """
    text = re.sub(r"//[^\n]*", "", text)
    labels = {m.group(1): m.start() for m in re.finditer(r"^(\.L\w+):", text, re.M)}
    packets = [(m.start(), m.group(0), m.group(1) or "") for m in _PACKET.finditer(text)]
    spans = set()
    for setup in _LOOP_SETUP.finditer(text):
        digit, label = setup.groups()
        start = labels[label]
        end = next(at for at, _, endloop in packets if at > start and digit in endloop)
        spans.add((label, start, end))
    for at, body, _ in packets:
        for label in _JUMP.findall(body):
            if labels.get(label, at) < at:
                spans.add((label, labels[label], at))
    innermost = [
        (label, start, end) for label, start, end in spans
        if not any((s, e) != (start, end) and start <= s and e <= end for _, s, e in spans)
    ]
    return {label: sum(start <= at <= end for at, _, _ in packets)
            for label, start, end in innermost}


def check_clang_loops(c_source: str, function: str) -> dict[str, int]:
    text = harness.compile_c_to_assembly(c_source)
    asm = parse_assembly(text, f"{function}.s")
    found = {loop.header: len(loop) for loop in innermost_loops(asm, function)}
    assert found, "clang's loop is found"
    assert found == regex_innermost_loops(text)
    return found


@toolchain
def test_clang_loop_of_a_c_kernel():
    found = check_clang_loops(SCALE_ADD_C, "scale_add")
    assert all(size >= 1 for size in found.values())


@toolchain
def test_clang_loop_of_the_elementwise_sum():
    program, _ = elementwise_sum_program(6)
    source = kernels_as_c(program.kernels, [b.sym_name.data for b in program.buffers])
    text = harness.compile_c_to_assembly(source)
    asm = parse_assembly(text, "sum3.s")
    (loop,) = innermost_loops(asm, "sum3")
    assert {loop.header: len(loop)} == regex_innermost_loops(text)
    # its packets are hvx IR too; a `.new` store reads a value its packet makes
    func = import_packets(loop.packets, "loop", "sum3.s")
    ModuleOp([func]).verify()
    stores = [op for packet in packets_of(func) for op in packet.instructions()
              if isinstance(op, ops.VmemStoreOp)]
    assert any(s.s.owner.parent_op() is s.parent_op() for s in stores)


@toolchain
@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@pytest.mark.parametrize("kernel", KERNELS)
def test_clang_loops_of_the_kernels(kernel, layout):
    program = kernel_program(KERNELS[kernel], layout)
    source = kernels_as_c(program.kernels, [b.sym_name.data for b in program.buffers])
    check_clang_loops(source, "conv")


# ---------------------------------------------------------------- errors


def test_syntax_errors_name_file_line_and_column():
    with pytest.raises(DiagnosticException) as e:
        parse_assembly("kernel:\n    { r0 = add(r1,#2) \n", "bad.s")
    assert str(e.value) == (
        "bad.s:2:23: syntax error: unexpected end of input in '{ r0 = add(r1,#2)'")
    with pytest.raises(DiagnosticException) as e:
        parse_assembly("kernel:\n    { r0 = add(r1,#2) }\n    { v0 = vmem(r1+#0) } }\n", "bad.s")
    assert str(e.value) == "bad.s:3:26: syntax error: unexpected '}' in '{ v0 = vmem(r1+#0) } }'"
    with pytest.raises(DiagnosticException, match=r"^bad\.s:2:22: syntax error: unexpected "):
        parse_assembly("kernel:\n  { r0 = add(r1,#2) }:endloop2\n", "bad.s")


def test_unsupported_instructions_are_named():
    text = "kernel:\n    { r1 = add(r1,#1) }\n    { p0 = cmp.eq(r1,#0) }\n"
    message = "unsupported.s:3: 'p0 = cmp.eq(r1,#0)' is not supported (no hvx op has its syntax)"
    for parse in (parse_block, parse_program):
        with pytest.raises(NotSupported) as e:
            parse(text, source="unsupported.s")
        assert str(e.value) == message
    parse_assembly(text)  # structure only: any instruction reads
    with pytest.raises(NotSupported, match=r"^p\.s:4: directive \.word is not supported"):
        parse_program("    .text\nk:\n    { r0 = add(r1,#2) }\n    .word 5\n", "p.s")


def test_illegal_marks_and_packets_are_errors():
    cases = {
        "{ vmem(r1+#0) = v3.new }": "v3.new: no instruction of the packet writes it",
        "{ v0.cur = vmemu(r1+#0); v2.w = vadd(v0.w,v1.w) }": r"\.cur is not supported here",
        "{ v0 = vmem(r1+#0); v1 = vmem(r1+#1) }": "do not fit the slots",
        "{ v0.w = vadd(v1.w,v2.w); v0.w = vsub(v1.w,v2.w) }":
            "two instructions of the packet write v0",
        "{ v0.w = vadd(v1.w,v2.w); if (q0) vmem(r1+#0) = v0.new }": "cannot forward",
    }
    for text, message in cases.items():
        with pytest.raises(DiagnosticException, match=r"^b\.s:1: .*" + message):
            parse_block(text, source="b.s")
