"""
`vliw-pack` legality and semantics: for the DSP path's kernels and for hundreds of
hypothesis-generated straight-line blocks of HVX and scalar instructions, every packer
(SDA, its two ablations, the list scheduler) gives packets that llvm-mc-19 accepts and
that leave exactly the memory that one instruction a packet leaves under qemu-hexagon.
The cycle model's packet count is QEMU's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.hexagon.runner import run_program
from mobile_opt.checking.hvx_kernels import (
    ConvCase,
    compile_and_run,
    conv_program,
    elementwise_sum_program,
    run_conv_kernel,
)
from mobile_opt.dialects.vliw.dependences import DependenceGraph
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS
from mobile_opt.dialects.vliw import PacketOp
from mobile_opt.models.hvx_cycles import kernel_cost
from mobile_opt.pipelines import dsp_back_end
from mobile_opt.transforms.hvx_addresses import POST_INCREMENT_FORMS, fold_addresses
from mobile_opt.transforms.hvx_regalloc import allocate_registers
from mobile_opt.transforms.hvx_unroll import innermost_loops, unroll_function
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape
from mobile_opt.transforms.onnx_to_hvx.program import Program
from mobile_opt.transforms.vliw_pack import ALGORITHMS, VliwPackPass
from mobile_opt.transforms.vliw_pack.schedulers import check_schedule, list_schedule, sda

pytestmark = pytest.mark.usefixtures("hexagon_toolchain")

POST_INCREMENT = tuple(POST_INCREMENT_FORMS)

KERNELS = {
    "matmul": ConvShape(24, 1, 40, 12),
    "conv3x3": ConvShape(5, 6, 20, 8, (3, 3), (1, 1), (1, 1)),
    "conv3x3s2": ConvShape(8, 9, 30, 8, (3, 3), (2, 2), (1, 1)),
    "depthwise": ConvShape(6, 6, 40, 6, (3, 3), (1, 1), (1, 1), depthwise=True),
}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@pytest.mark.parametrize("kernel", KERNELS)
def test_packed_kernels_compute_what_single_packets_compute(kernel, layout, algorithm):
    shape = KERNELS[kernel]
    rng = np.random.default_rng(7)
    per_input = 1 if shape.depthwise else shape.channels
    x = rng.integers(0, 256, (shape.channels, shape.height, shape.width)).astype(np.uint8)
    w = rng.integers(-64, 64, (shape.out_channels, per_input, *shape.kernel)).astype(np.int8)
    bias = rng.integers(-3000, 3000, shape.out_channels)
    case = ConvCase(shape, x, w, bias, 9, 0.004, 120)
    single = run_conv_kernel(layout, case, dsp_back_end, packing="single")
    packed = run_conv_kernel(layout, case, dsp_back_end, packing=algorithm)
    assert np.array_equal(packed.got, single.got)
    assert np.array_equal(packed.got, packed.expected)
    assert packed.counted_packets == packed.predicted.packets
    assert packed.counted_packets < single.counted_packets


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_elementwise_sum(algorithm):
    program, expected = elementwise_sum_program(6)
    outputs, execution = compile_and_run(program, algorithm, dsp_back_end, counting=True)
    assert np.array_equal(outputs["r"], expected)
    assert execution.packets["sum3"] == kernel_cost(program.kernels[0]).packets


def test_sda_forwards_where_soft_to_hard_cannot():
    """GCD²'s Fig. 5: loads feed adds (.cur) and adds feed stores (.new) in one packet."""
    packets = {}
    for algorithm in ("sda", "soft-to-hard"):
        program, _ = elementwise_sum_program(4)
        compile_and_run(program, algorithm, dsp_back_end)
        loop = next(op for op in program.kernels[0].walk() if isinstance(op, ops.LoopOp))
        packets[algorithm] = [op for op in loop.body.block.ops if isinstance(op, PacketOp)]
    assert len(packets["sda"]) < len(packets["soft-to-hard"])
    from mobile_opt.dialects.vliw.packets import forwarded_reads

    assert any(forwarded_reads(p.instructions()) for p in packets["sda"])
    assert not any(forwarded_reads(p.instructions()) for p in packets["soft-to-hard"])


# ---------------------------------------------------------------- random blocks

VECTOR_OPS = [ops.VaddWOp, ops.VsubWOp, ops.VmaxWOp, ops.VminUbOp, ops.VxorOp, ops.VaddHOp]


class RandomBlock:
    """
    A random straight-line block: vector and scalar arithmetic, multiplies with tied
    accumulators, pairs and their halves, aligned/unaligned/post-increment loads,
    stores (some to addresses that later loads read back) and scalar memory. It ends
    by storing its newest values, so registers and memory are both compared.
    """

    def __init__(self, name: str, out: str, seed: int, length: int):
        self.rng = np.random.default_rng(seed)
        self.b = KernelBuilder(name)
        self.out = out
        self.vectors: list = []
        self.pairs: list = []
        self.scalars: list = []
        b = self.b
        self.inp = b(ops.AddressOp("inp"))
        self.outp = b(ops.AddressOp(out))
        self.unaligned = b(ops.AddImmOp(self.inp, 3))
        self.stream = b(ops.AddImmOp(self.inp, 1024))
        for k in range(3):
            self.vectors.append(b(ops.VmemLoadOp(self.inp, k, region="inp")))
            self.scalars.append(b(ops.LoadWordOp(self.inp, 4 * k, region="inp")))
        for _ in range(length):
            self.step()
        tail = b(ops.AddImmOp(self.outp, 512))
        for k, v in enumerate(self.vectors[-6:]):
            b.add(ops.VmemStoreOp(tail, v, k, region=out))
        for k, s in enumerate(self.scalars[-4:]):
            b.add(ops.StoreWordOp(self.outp, s, 1280 + 4 * k, region=out))

    def pick(self, pool: list):
        return pool[-1 - int(self.rng.integers(0, min(len(pool), 6)))]

    def step(self) -> None:
        b, rng = self.b, self.rng
        kind = rng.choice(["valu", "valu", "vmpy", "vrmpy", "pair", "load", "loadu", "loadpi",
                           "store", "reload", "salu", "sload", "sstore", "splat", "memd"])
        v, s = self.vectors, self.scalars
        if kind == "valu":
            op = VECTOR_OPS[int(rng.integers(0, len(VECTOR_OPS)))]
            v.append(b(op(self.pick(v), self.pick(v))))
        elif kind == "vmpy":
            product = b(ops.VmpyOp(self.pick(v), self.pick(s)))
            self.pairs.append(product)
        elif kind == "vrmpy":
            v.append(b(ops.VrmpyAccOp(b(ops.VxorOp(self.pick(v), self.pick(v))), self.pick(v),
                                      self.pick(s))))
        elif kind == "pair" and self.pairs:
            pair = self.pairs[-1]
            v.append(b((ops.LoOp if rng.integers(0, 2) else ops.HiOp)(pair)))
        elif kind == "load":
            v.append(b(ops.VmemLoadOp(self.inp, int(rng.integers(0, 8)), region="inp")))
        elif kind == "loadu":
            v.append(b(ops.VmemuLoadOp(self.unaligned, int(rng.integers(0, 6)), region="inp")))
        elif kind == "loadpi":
            load = ops.VmemLoadPostIncOp(self.stream, 1, region="inp")
            b.add(load)
            self.stream = load.new_base
            v.append(load.d)
        elif kind == "store":
            value = self.pick(v)  # drawn before the offset, as the blocks always were
            b.add(ops.VmemStoreOp(self.outp, value, int(rng.integers(0, 4)), region=self.out))
        elif kind == "reload":
            v.append(b(ops.VmemLoadOp(self.outp, int(rng.integers(0, 4)), region=self.out)))
        elif kind == "salu":
            s.append(b(ops.AddOp(self.pick(s), self.pick(s)) if rng.integers(0, 2)
                       else ops.AddImmOp(self.pick(s), int(rng.integers(-50, 50)))))
        elif kind == "sload":
            s.append(b(ops.LoadWordOp(self.inp, 4 * int(rng.integers(0, 64)), region="inp")))
        elif kind == "sstore":
            b.add(ops.StoreWordOp(self.outp, self.pick(s), 1296 + 4 * int(rng.integers(0, 4)),
                                  region=self.out))
        elif kind == "splat":
            v.append(b(ops.VsplatOp(self.pick(s))))
        elif kind == "memd":
            load = ops.LoadDoubleWordPostIncOp(self.stream, 8, region="inp")
            b.add(load)
            self.stream = load.new_base
            s.append(b(ops.LoOfPairOp(load.d)))


BLOCKS_PER_PROGRAM = 40
OUT_BYTES = 1408
"""Per block: 4 vectors it stores and reloads, 6 it ends with, then scalars."""


def _run_blocks(seeds: list[int], packing: str):
    program = Program()
    rng = np.random.default_rng(seeds[0])
    program.data("inp", rng.integers(0, 256, 4096).astype(np.uint8))
    for i, seed in enumerate(seeds):
        out = f"out{i}"
        program.storage(out, OUT_BYTES, fill=i)
        program.output(out, OUT_BYTES)
        program.kernels.append(RandomBlock(f"block{i}", out, seed, 12 + seed % 30).b.func)
    outputs, _ = compile_and_run(program, packing, dsp_back_end)
    return outputs, program


# each example runs five programs of forty blocks under QEMU: no shrinking
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(st.integers(0, 2**31), min_size=BLOCKS_PER_PROGRAM, max_size=BLOCKS_PER_PROGRAM))
def test_random_blocks_keep_their_semantics(seeds):
    reference, _ = _run_blocks(seeds, "single")
    for algorithm in ALGORITHMS:
        got, program = _run_blocks(seeds, algorithm)
        for name, value in reference.items():
            assert np.array_equal(got[name], value), f"{algorithm}: {name} differs"
        ModuleOp([k.clone() for k in program.kernels]).verify()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31))
def test_schedules_keep_every_dependence(seed):
    """Every packer's schedule of a random block keeps each edge and forms legal packets."""
    func = RandomBlock("block", "out", seed, 40).b.func
    allocate_registers(func)
    graph = DependenceGraph([op for op in func.body.block.ops if isinstance(op, ops.Instruction)])
    for packets in (sda(graph), sda(graph, soft="hard"), sda(graph, 0.9, 0.0, "none"),
                    sda(graph, 0.25, float("inf")), list_schedule(graph)):
        assert check_schedule(graph, packets) is None


def test_the_runner_runs_compiled_programs_only():
    """Backends allocate nothing: an unallocated program is one error naming the pass."""
    program, _ = elementwise_sum_program(1)
    with pytest.raises(DiagnosticException, match=r"@sum3 has unallocated registers "
                                                  r"\(run hvx-regalloc first\)"):
        run_program(program.module(), program.outputs)


def test_packing_needs_allocated_registers():
    func = RandomBlock("block", "out", 1, 5).b.func
    with pytest.raises(Exception, match="run hvx-regalloc first"):
        VliwPackPass().apply(Context(), ModuleOp([func]))


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@pytest.mark.parametrize("kernel", KERNELS)
def test_unrolled_kernels_with_folded_addresses_stay_exact(kernel, layout):
    """hvx-unroll's copies and the offsets their pointer steps fold into, packed by SDA."""
    shape = KERNELS[kernel]
    case = ConvCase.random(shape, seed=3)
    built = conv_program(layout, case)
    before = sum(isinstance(op, POST_INCREMENT) for op in built.kernel.func.walk())
    factor = unroll_function(built.kernel.func, 0)
    assert factor > 1
    for loop in innermost_loops(built.kernel.func.body.block):
        # one pointer chain a loop body at most: the steps became offsets
        steps = [op for op in loop.body.block.ops if isinstance(op, POST_INCREMENT)]
        assert len(steps) <= before
    outputs, execution = compile_and_run(built.program, "sda", dsp_back_end, counting=True)
    assert np.array_equal(built.out_geo.unpack(outputs["y"]), case.expected())
    assert execution.packets["conv"] == kernel_cost(built.kernel.func).packets


def test_folded_addresses_keep_the_pointers_that_leave_the_block():
    """A chain of post-increment loads: offsets off the first pointer, one add for the last."""
    b = KernelBuilder("chain")
    pointer = b(ops.AddressOp("a"))
    with b.loop(2, "loop0", [pointer]) as loop:
        (p,) = loop.args
        values = []
        for _ in range(3):
            load = ops.VmemLoadPostIncOp(p, 1, region="a")
            b.add(load)
            values.append(load.d)
            p = load.new_base
        b.add(ops.VmemStoreOp(p, b(ops.VaddWOp(values[0], values[2])), 0, region="a"))
        loop.next(p)
    body = next(op for op in b.func.walk() if isinstance(op, ops.LoopOp)).body.block
    fold_addresses(body)
    names = [op.name for op in body.ops]
    assert names.count("hvx.vmem_load") == 3 and "hvx.vmem_load_pi" not in names
    assert [op.offset.value.data for op in body.ops if isinstance(op, ops.VmemLoadOp)] == [0, 1, 2]
    store = next(op for op in body.ops if isinstance(op, ops.VmemStoreOp))
    assert store.base is body.args[0] and store.offset.value.data == 3
    (step,) = [op for op in body.ops if isinstance(op, ops.AddImmOp)]
    assert step.s is body.args[0] and step.value.value.data == 3 * 128
    assert body.last_op.operands[0] is step.d
    b.func.verify()
