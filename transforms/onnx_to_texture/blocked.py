"""
The blocked product: C[rows, cols] = A[rows, K] B[K, cols] a block of C per work group,
for GPU images (`onnx-to-texture{blocked=true}`, the default). MatMul and Gemm
(`matmul.py`) and ungrouped convolutions as implicit GEMM (`conv.py`) take it where
their blocks are many enough; each says how a pixel of A and of B is read and where a
pixel of C goes.

Per K step a group stages `bk` columns of A's block (transposed: a local float4 holds
four rows of one column) and `bk` rows of B's in local memory, in two buffers: the next
step's pixels are read into registers while this step computes, and stored after it,
so one barrier a step suffices. Each work-item accumulates `tm` x `tn` outer products
of float4 local loads; its row quads and pixels are strided by the group's height and
width, so a warp's loads are broadcasts or runs. Pixels of A and B past K read as zero
(the callers make sure of it), so K need not fill the last step.

Where too few blocks would keep a large GPU busy, K is split (`GemmPlan.split`): group
z of the launch computes one slice of K into its own rows of a partial-sum image, and a
second kernel adds the slices (the conv's; see `conv.py`).

The blocks, the plans and the fixed rule that chooses one where `texture-tile` did not
are configurations, with `TileConfig` in `dialects/texture/tiling.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from mobile_opt.dialects.texture.tiling import GemmPlan

from .kernel_builder import KernelBuilder, Operand, Val

ReadA = Callable[[Val], Callable[[Val], Val]]
"""row m -> (K pixel kq -> A[m, 4kq..4kq+3]): the per-row part runs once, before the loop."""
ReadB = Callable[[Val, Val], Val]
"""(k, pixel x) -> B[k, 4x..4x+3]."""
StoreC = Callable[[Val, Val, Val, list[Val]], None]
"""(row m, pixel x, the float4 of C[m, 4x..4x+3], guards: m and x in range)."""


def blocked_product(kb: KernelBuilder, plan: GemmPlan, rows: int, pixels: int, depth: int,
                    read_a: ReadA, read_b: ReadB, store: StoreC) -> tuple[int, ...]:
    """
    Emit the product into `kb` (a kernel of the group size it returns); `pixels` of C
    per row (cols / 4, rounded up). Returns the launch's global size (3-D with a split).
    """
    block = plan.block
    wx, wy = block.group
    threads, quads, bn4, bm4 = block.threads, block.tn // 4, block.bn // 4, block.bm // 4
    a_pixels, b_pixels = block.staged
    a_size, b_size = block.bk * bm4, block.bk * bn4  # float4s of one buffer
    a_tile, b_tile = kb.local_array(2 * a_size, "a_tile"), kb.local_array(2 * b_size, "b_tile")
    tx, ty = kb.local_id(0), kb.local_id(1)
    t = ty * wx + tx
    m0, n0 = kb.group_id(1) * block.bm, kb.group_id(0) * bn4
    steps = -(-depth // block.bk)
    per_slice = -(-steps // plan.split)
    first = kb.group_id(2) * per_slice if plan.split > 1 else kb.int(0)
    staged = [t + p * threads for p in range(max(a_pixels, b_pixels))]
    a_rows = [(q // block.bm * 4, read_a(m0 + q % block.bm)) for q in staged[:a_pixels]]

    def fetch(step: Operand) -> list[Val]:
        k0 = kb.like(step, kb.int(0)) * block.bk
        result = [row(k0 // 4 + column // 4) for column, row in a_rows]
        result += [read_b(k0 + q // bn4, n0 + q % bn4) for q in staged[:b_pixels]]
        return result

    def stage(buffer: Operand, fetched: list[Val]) -> None:
        for q, px in zip(staged, fetched[:a_pixels]):
            column, m = q // block.bm * 4, q % block.bm
            for lane in range(4):
                index = buffer * a_size * 4 + (column + lane) * block.bm + m
                kb.local_store(a_tile, index, kb.lane(px, lane))
        for q, px in zip(staged, fetched[a_pixels:]):
            kb.local_store(b_tile, buffer * b_size + q, px)

    stage(0, fetch(first))
    kb.barrier()

    def step(s: Val, *accs: Val) -> list[Val]:
        buffer = s % 2
        ahead = fetch(first + s + 1)  # past K (or into the next slice: unused) reads zeros
        accs = list(accs)
        for kk in range(block.bk):
            a_q = [kb.local_load(a_tile, buffer * a_size + kk * bm4 + ty + wy * i)
                   for i in range(block.tm // 4)]
            b_q = [kb.local_load(b_tile, buffer * b_size + kk * bn4 + tx + wx * j)
                   for j in range(quads)]
            for i, quad in enumerate(a_q):
                for r in range(4):
                    a_r = kb.lane(quad, r)
                    for j, b_px in enumerate(b_q):
                        n = (4 * i + r) * quads + j
                        accs[n] = kb.fma(a_r, b_px, accs[n])
        stage(1 - buffer, ahead)
        kb.barrier()
        return accs

    accs = kb.loop(0, per_slice, step, [kb.float4(0.0) for _ in range(block.tm * quads)], name="s")
    for i in range(block.tm // 4):
        for r in range(4):
            m = m0 + (ty + wy * i) * 4 + r
            row_guard = [m < rows] if rows % block.bm else []
            for j in range(quads):
                x = n0 + tx + wx * j
                guards = row_guard + ([x < pixels] if pixels % bn4 else [])
                store(m, x, accs[(4 * i + r) * quads + j], guards)
    kb.require_group(plan.group)
    size: tuple[int, ...] = (-(-pixels // bn4) * wx, -(-rows // block.bm) * wy)
    return (*size, plan.split) if plan.split > 1 else size
