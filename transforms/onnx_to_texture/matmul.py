"""
Matrix products: `MatMul` (numpy.matmul: 1-D operands, broadcast batch axes),
`Gemm` (`alpha * op(A) op(B) + beta * C`) and their fused forms (a bias, then an
activation).

One work-item computes the output pixel at its column block n..n+3 for
`ROWS_PER_ITEM` consecutive rows m of one matrix (one pixel, four lanes along the
packed axis, when an operand is a vector), so each pixel of B it reads serves
several rows. The contraction runs over K in blocks of four. How a block is read
depends on which axis of each operand's storage is packed:

- A packed along K (rows4 [.., M, K], the usual case): one pixel holds
  A[m, k..k+3]; otherwise the four elements are gathered with scalar reads.
- B packed along N (rows4 [.., K, N], TMModel's row-major pattern): four pixels
  hold B[k+j, n..n+3] and `acc = fma(a[j], b_j, acc)` ("axpy" form).
- B packed along K (Gemm with transB, i.e. rows4 of B's [N, K]; cols4 of B's
  [K, N]; or a 1-D B): each output lane keeps its own float4 of partial dot
  products, summed at the end ("dot" form). Constant weights are packed as they
  come, so a transposed weight needs no host transpose.

`texture-tile` may choose B's layout (its access pattern, `dialects/texture/tiling.py`);
the host packs a weight or graph input in it, and the views read any layout.

A last partial block of K reads only the rows of B that exist; the padding lanes
of a K-packed pixel are zero, so they add nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_host_packed, is_none
from mobile_opt.dialects.onnx.nn import GemmAttrsOp
from mobile_opt.dialects.texture import Image2DType, Layout, image_size
from mobile_opt.dialects.texture.layouts import ceil4
from mobile_opt.dialects.texture.tiling import GemmPlan, TileConfig, plan_gemm

from .blocked import blocked_product
from .context import UNLIMITED_IMAGE, KernelContext, LoweringContext
from .nodes import LoweringError, node_label, shape
from .elementwise import activation
from .kernel_builder import KernelBuilder, Operand, Val
from .rules import lowers
from .views import OutputPixel, TensorView, delinearize


@dataclass
class MatrixOperand:
    """
    One side of a product seen as [batch.., rows, cols] (or 1-D): where its
    contraction axis K and its free axis (M of A, N of B) sit among its axes.
    """

    view: TensorView
    k_axis: int
    free_axis: int | None
    """None for a 1-D operand."""

    @property
    def k_packed(self) -> bool:
        return self.view.packed_axis == self.k_axis

    @property
    def free_packed(self) -> bool:
        return self.free_axis is not None and self.view.packed_axis == self.free_axis

    def index(self, batch: Sequence[Operand], k: Operand, free: Operand) -> list[Operand]:
        """The operand's index for batch index `batch` (of the result), K index k and free index."""
        dims = self.view.shape
        own_batch = len(dims) - 2 if self.free_axis is not None else 0
        lead = len(batch) - own_batch
        idx: list[Operand] = [0 if dims[j] == 1 else batch[lead + j] for j in range(own_batch)]
        idx += [0] * (len(dims) - own_batch)
        idx[self.k_axis] = k
        if self.free_axis is not None:
            idx[self.free_axis] = free
        return idx

    def k_block(self, batch: Sequence[Operand], free: Operand, k4: Val, valid: int) -> Val:
        """Elements k4*4 .. k4*4+3 along K as a float4; lanes from `valid` on are 0."""
        kb = self.view.kb
        if self.k_packed:
            return self.view.read_block(self.index(batch, k4, free))
        lanes: list[Operand] = [
            self.view.read(self.index(batch, k4 * 4 + j, free)) for j in range(valid)
        ]
        return kb.vec4(lanes + [0.0] * (4 - valid))


def _horizontal_sum(kb: KernelBuilder, v: Val) -> Val:
    x, y, z, w = kb.lanes(v)
    return (x + y) + (z + w)


def _operands(k: KernelContext, op: Operation,
              along_n: bool = False) -> tuple[MatrixOperand, MatrixOperand]:
    """A and B of a MatMul or Gemm, with Gemm's transA/transB applied to their axes;
    `along_n`: a constant B is packed along N (the wide and blocked kernels' form)."""
    a_value, b_value = op.operands[0], op.operands[1]
    a_rank, b_rank = len(shape(a_value)), len(shape(b_value))
    trans_a = isinstance(op, GemmAttrsOp) and op.int_attr("transA")
    trans_b = isinstance(op, GemmAttrsOp) and op.int_attr("transB")
    a_view = k.input(a_value, hint="a")
    b_layout = k.config.layout if k.config else None
    if (k.ctx.buffers or along_n) and b_rank >= 2 and is_host_packed(b_value):
        b_layout = Layout.COLS4 if trans_b else Layout.ROWS4  # packed along N: the wide form
    why = b_layout.check_rank(b_rank) if b_layout is not None else None
    if why:
        raise LoweringError(f"{node_label(op)}: B: {why}")
    b_view = k.input(b_value, layout=b_layout, hint="b")
    # A contracts its last axis and B its second-to-last, unless transposed
    a = _matrix_operand(a_view, a_rank, a_rank - 1, a_rank - 2, swap=trans_a)
    b = _matrix_operand(b_view, b_rank, b_rank - 2, b_rank - 1, swap=trans_b)
    return a, b


def _matrix_operand(view, rank: int, inner: int, outer: int, swap: bool) -> MatrixOperand:
    if rank == 1:
        return MatrixOperand(view, 0, None)
    return MatrixOperand(view, outer, inner) if swap else MatrixOperand(view, inner, outer)


@lowers(onnx.MatMulOp, onnx.FusedMatMulOp, onnx.GemmOp, onnx.FusedGemmOp)
def lower_matmul(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """`A @ B` (numpy semantics) or Gemm, plus bias/C and activation."""
    gemm = isinstance(op, GemmAttrsOp)
    a_shape, b_shape = shape(op.operands[0]), shape(op.operands[1])
    if gemm and (len(a_shape) != 2 or len(b_shape) != 2):
        raise LoweringError(f"{node_label(op)}: Gemm takes 2-D A and B, got "
                            f"{list(a_shape)} and {list(b_shape)}")
    if not a_shape or not b_shape:
        raise LoweringError(f"{node_label(op)}: MatMul operands must have rank 1 or more")
    k = KernelContext(ctx, op, "gemm" if gemm else "matmul", epilogue)
    if k.out.layout is not Layout.ROWS4:
        raise LoweringError(f"{node_label(op)}: the product must be stored in rows4, "
                            f"not {k.out.layout.value}")
    kb = k.kb
    if ctx.buffers:
        k.config = None  # texture-tile's configurations are the image kernels'
    plan = gemm_plan(k, op)
    if plan is None and k.config is not None and k.config.plan is not None:
        k.config = None  # a blocked choice it cannot take (blocked=false): the defaults
    gemv = plan is None and gemv_group(k, op)
    a, b = _operands(k, op, along_n=plan is not None or bool(gemv))
    depth = a.view.shape[a.k_axis]
    if depth != b.view.shape[b.k_axis]:
        raise LoweringError(f"{node_label(op)}: inner dimensions differ "
                            f"({list(a_shape)} x {list(b_shape)})")

    out_shape = k.out.shape
    has_m, has_n = a.free_axis is not None, b.free_axis is not None
    n_batch = len(out_shape) - has_m - has_n
    extent = out_shape[-1] if out_shape else 1
    lanes = min(4, extent)
    targets = _output_rows(k, n_batch, has_m, has_n)
    batch = targets[0].batch
    x = k.pixel.x

    def lane_index(lane: int) -> Operand:
        """The output element of a lane along the packed axis (clamped past the end)."""
        element = x * 4 + lane
        return kb.min(element, extent - 1) if lane and extent % 4 else element

    full, rest = divmod(depth, 4)

    def contract(step, init: list[Val]) -> list[Val]:
        """Run `step(k4, valid, *accs)` over the full K blocks, then over the partial one."""
        def body(k4: Val, *accs: Val) -> list[Val]:
            return step(k4, 4, *accs)

        accs = kb.loop(0, full, body, init, name="k4")
        if rest:
            accs = step(kb.int(full), rest, *accs)
        return accs

    if plan is not None:
        blocked_gemm(k, op, a, b, plan)
        k.finish()
        return
    if gemv:
        split_gemv(k, op, a, b, gemv)
        k.finish()
        return
    if ctx.buffers and has_n and b.free_packed:
        wide_axpy(k, op, a, b, targets, contract)
        k.finish()
        return
    if has_n and b.free_packed:
        # axpy form: acc_r += A[m_r, k+j] * B[k+j, n..n+3]
        def axpy(k4: Val, valid: int, *accs: Val) -> list[Val]:
            b_rows = [b.view.read_block(b.index(batch, k4 * 4 + j, x)) for j in range(valid)]
            result = []
            for target, acc in zip(targets, accs, strict=True):
                a_block = a.k_block(batch, target.m, k4, valid)
                for j, b_row in enumerate(b_rows):
                    acc = kb.fma(kb.lane(a_block, j), b_row, acc)
                result.append(acc)
            return result

        values = contract(axpy, [kb.float4(0.0) for _ in targets])
    else:
        # dot form: every output element accumulates its own float4 of partial sums
        def dot(k4: Val, valid: int, *accs: Val) -> list[Val]:
            if has_n:
                rights = [b.k_block(batch, lane_index(i), k4, valid) for i in range(lanes)]
                lefts = [[a.k_block(batch, t.m, k4, valid)] * lanes for t in targets]
            else:  # a matrix-vector product: the lanes run along M
                rights = [b.k_block(batch, 0, k4, valid)] * lanes
                lefts = [[a.k_block(batch, lane_index(i) if has_m else 0, k4, valid)
                          for i in range(lanes)]]
            pairs = [(left, right) for row in lefts for left, right in zip(row, rights)]
            return [kb.fma(p, q, acc) for (p, q), acc in zip(pairs, accs, strict=True)]

        sums = contract(dot, [kb.float4(0.0) for _ in range(len(targets) * lanes)])
        values = [
            kb.vec4([*(_horizontal_sum(kb, v) for v in sums[r * lanes:(r + 1) * lanes]),
                     *[0.0] * (4 - lanes)])
            for r in range(len(targets))
        ]

    for target, value in zip(targets, values, strict=True):
        k.pixel = target.pixel
        k.store(_epilogue(k, op, value))
    k.finish()


def wide_axpy(k: KernelContext, op: Operation, a: MatrixOperand, b: MatrixOperand,
              targets: list[OutputRow], contract) -> None:
    """
    The axpy form sixteen columns at a time, in buffers (as the wide conv): per K
    element, A[m, k] splat times B[k, n..n+15] (four pixels of B packed along N) into a
    float16 per row; a work-item takes four output pixels of each of its rows.
    """
    kb = k.kb
    pixels = k.out.image_size[0]
    k.global_size = (-(-pixels // 4), k.global_size[1])
    batch = targets[0].batch
    columns = [k.pixel.x * 4 + p for p in range(4)]
    reads = [kb.min(x, pixels - 1) if p and pixels % 4 else x for p, x in enumerate(columns)]
    # B's rows of four whole pixels side by side: one 16-wide read each
    rows16 = (type(b.view) is TensorView and b.view.layout is Layout.ROWS4
              and b.free_axis == len(b.view.shape) - 1 and pixels % 4 == 0)

    def row_of_b(k: Val) -> Val:
        if rows16:
            return b.view.read_row16(b.index(batch, k, columns[0]))
        return kb.vec16([b.view.read_block(b.index(batch, k, x)) for x in reads])

    def axpy(k4: Val, valid: int, *accs: Val) -> list[Val]:
        b_rows = [row_of_b(k4 * 4 + j) for j in range(valid)]
        result = []
        for target, acc in zip(targets, accs, strict=True):
            a_block = a.k_block(batch, target.m, k4, valid)
            for j, b_row in enumerate(b_rows):
                acc = kb.fma(kb.splat16(kb.lane(a_block, j)), b_row, acc)
            result.append(acc)
        return result

    zero = kb.vec16([kb.float4(0.0)] * 4)
    values = contract(axpy, [zero for _ in targets])
    for target, value in zip(targets, values, strict=True):
        for p, x in enumerate(columns):
            k.store_at(OutputPixel(x, target.pixel.y, [*target.pixel.block[:-1], x]),
                       lambda part=kb.part4(value, p): _epilogue(k, op, part),
                       [x < pixels] if p and pixels % 4 else [])


def gemm_plan(k: KernelContext, op: Operation) -> GemmPlan | None:
    """
    The blocked product's plan for `op` (`blocked.py`), or None where it does not apply
    (`_images_for_blocks`) or `texture-tile` chose a one-pixel kernel: the recorded
    configuration's plan, else (no configuration) the fixed rule's.
    """
    product = _images_for_blocks(k, op)
    if product is None:
        k.recorded_plan_over_limit(_images_for_blocks(k, op, UNLIMITED_IMAGE) is not None)
        return None
    if k.config is None:
        return plan_gemm(*product)
    plan = k.config.plan
    if plan is not None and plan.split > 1:
        raise LoweringError(f"{k.label}: the recorded {k.config.describe()}: a "
                            "product's K is not split (only a convolution's)")
    return plan


def blocked_product_of(op: Operation, layout_of: Callable[[SSAValue], Layout],
                       max_image: tuple[int, int]) -> tuple[int, int, int] | None:
    """
    The product (rows, columns, K) that `op` is as the blocked product and `split_gemv`
    read it, or None where they cannot: A in rows4 (batch axes folded into rows), not
    transposed; a 2-D B packed along N (a host-packed B in either form, an activation
    only as [K, N] in rows4); A, B and C within the image limits, whose clamped reads give
    the zeros past each edge. `layout_of` gives an activation's layout. The lowering
    asks this, and `prune_configs.kernel_of` asks it before the layouts are chosen.
    """
    a_value, b_value = op.operands[0], op.operands[1]
    a_shape, b_shape, c_shape = shape(a_value), shape(b_value), shape(op.results[0])
    trans_a = isinstance(op, GemmAttrsOp) and op.int_attr("transA")
    trans_b = isinstance(op, GemmAttrsOp) and op.int_attr("transB")
    if len(a_shape) < 2 or len(b_shape) != 2 or trans_a or not c_shape:
        return None
    if not is_host_packed(b_value) and (trans_b or layout_of(b_value) is not Layout.ROWS4):
        return None
    b_layout = Layout.COLS4 if trans_b else Layout.ROWS4  # packed along N
    max_w, max_h = max_image
    if layout_of(a_value) is not Layout.ROWS4 or any(
            w > max_w or h > max_h
            for w, h in (image_size(Layout.ROWS4, a_shape), image_size(b_layout, b_shape),
                         image_size(Layout.ROWS4, c_shape))):
        return None
    return image_size(Layout.ROWS4, a_shape)[1], c_shape[-1], a_shape[-1]


def _images_for_blocks(k: KernelContext, op: Operation,
                       max_image: tuple[int, int] | None = None) -> tuple[int, int, int] | None:
    """The product as the blocked product and `split_gemv` read it (`blocked_product_of`),
    where the lowering has them and its operands are stored in images, not views, within
    `max_image` (default: the lowering's limit)."""
    ctx = k.ctx
    a_value, b_value = op.operands[0], op.operands[1]
    if not ctx.blocked or ctx.buffers or a_value in ctx.views or b_value in ctx.views:
        return None
    if not isinstance(k.out_stored.storage.type, Image2DType):
        return None
    stored = [ctx.stored.get(v) for v in (a_value, b_value)]
    if not all(s is None or isinstance(s.storage.type, Image2DType) for s in stored):
        return None

    def layout_of(value: SSAValue) -> Layout:
        held = ctx.stored.get(value)
        return held.layout if held else ctx.layout_for(value)

    return blocked_product_of(op, layout_of, max_image or ctx.max_image)


GEMV_ROWS = 4
"""Products of at most this many rows (a batch-1 fully connected layer) take `split_gemv`."""

GEMV_MIN_DEPTH = 256
"""...and K at least this long: shorter, each work-item's share is too small to pay."""


def gemv_group(k: KernelContext, op: Operation) -> int:
    """
    The work-group size of `split_gemv` for `op`, or 0 where it does not apply: as the
    blocked product, images with B packed along N, but few rows and a long K; the longer
    K, the larger the group.
    """
    a_shape = shape(op.operands[0])
    if _images_for_blocks(k, op) is None or a_shape[-1] < GEMV_MIN_DEPTH:
        return 0
    if image_size(Layout.ROWS4, a_shape)[1] > GEMV_ROWS:
        return 0
    blocks = -(-a_shape[-1] // 4)
    return 256 if blocks >= 4096 else 128 if blocks >= 1024 else 64


def split_gemv(k: KernelContext, op: Operation, a: MatrixOperand, b: MatrixOperand,
               group: int) -> None:
    """
    A product of a few rows, K split across a work group: each group computes one output
    pixel of every row, its work-items a strided share of K's pixels (reads past K are
    zeros), then adds the shares by halves in local memory.
    """
    kb = k.kb
    pixels, rows = k.out.image_size
    t, x = kb.local_id(0), kb.group_id(0)
    sums = kb.local_array(rows * group, "sums")

    def step(i: Val, *accs: Val) -> list[Val]:
        k4 = t + i * group
        b_px = [_read_along_n(b, k4 * 4 + j, x) for j in range(4)]
        result = []
        for r, acc in enumerate(accs):
            a_px = kb.read(a.view.storage, k4, kb.int(r))
            for j, b_j in enumerate(b_px):
                acc = kb.fma(kb.lane(a_px, j), b_j, acc)
            result.append(acc)
        return result

    steps = -(-ceil4(a.view.shape[-1]) // group)  # K's pixels over the group
    accs = kb.loop(0, steps, step, [kb.float4(0.0) for _ in range(rows)], name="i")
    for r, acc in enumerate(accs):
        kb.local_store(sums, r * group + t, acc)
    kb.barrier()
    half = group // 2
    while half:
        def add(half: int = half) -> list[Val]:
            for r in range(rows):
                here = r * group + t
                kb.local_store(sums, here, kb.local_load(sums, here)
                               + kb.local_load(sums, here + half))
            return []

        kb.if_(t < half, add)
        kb.barrier()
        half //= 2
    out_rows = k.out.shape[:-1]
    for r in range(rows):
        y = kb.int(r)
        k.store_at(OutputPixel(x, y, [*delinearize(kb, y, out_rows), x]),
                   lambda r=r: _epilogue(k, op, kb.local_load(sums, r * group)), [t.eq(0)])
    k.global_size = (pixels * group, 1)
    k.config = TileConfig((1, rows), (group, 1))
    kb.require_group((group, 1))


def blocked_gemm(k: KernelContext, op: Operation, a: MatrixOperand, b: MatrixOperand,
                 plan: GemmPlan) -> None:
    """The product by `blocked_product`: rows of A and C are their images' rows."""
    kb = k.kb
    out_rows = k.out.shape[:-1]

    def store(m: Val, x: Val, acc: Val, guards: list[Val]) -> None:
        k.store_at(OutputPixel(x, m, [*delinearize(kb, m, out_rows), x]),
                   lambda: _epilogue(k, op, acc), guards)

    pixels, rows = k.out.image_size
    k.global_size = blocked_product(
        kb, plan, rows, pixels, a.view.shape[-1],
        lambda m: lambda kq: kb.read(a.view.storage, kq, m),
        lambda kk, x: _read_along_n(b, kk, x), store)
    k.config = TileConfig.blocked(plan)


def _read_along_n(b: MatrixOperand, kk: Val, x: Val) -> Val:
    """B[kk, 4x..4x+3] of a B packed along N: rows4 of [K, N], or (transB) cols4 of
    [N, K], where x runs along K."""
    if b.view.layout is Layout.COLS4:
        return b.view.kb.read(b.view.storage, kk, x)
    return b.view.kb.read(b.view.storage, x, kk)


ROWS_PER_ITEM = 4
"""Output rows one work-item computes when both operands are matrices (each pixel
of B read serves that many rows), unless `texture-tile` chose another tile."""


@dataclass
class OutputRow:
    """One row a work-item computes: its batch index, row index m and output pixel."""

    batch: list[Operand]
    m: Operand
    pixel: OutputPixel


def _output_rows(k: KernelContext, n_batch: int, has_m: bool, has_n: bool) -> list[OutputRow]:
    """
    The output rows of this work-item. A matrix product gives each work-item
    `ROWS_PER_ITEM` consecutive rows of one matrix (the last rows repeat the final
    row where M runs out, rewriting the same values); otherwise its one pixel.
    """
    kb = k.kb
    out_shape = k.out.shape
    per_item = k.config.rows if k.config else ROWS_PER_ITEM
    rows = min(per_item, out_shape[-2]) if has_m and has_n else 1
    if rows == 1:
        block = k.pixel.block
        m = block[n_batch] if has_m and has_n else 0
        return [OutputRow(block[:n_batch], m, k.pixel)]
    height = out_shape[-2]
    row_blocks = -(-height // rows)
    y, x = k.pixel.y, k.pixel.x
    matrix = y // row_blocks
    first = (y % row_blocks) * rows
    batch: list[Operand] = list(delinearize(kb, matrix, out_shape[:n_batch]))
    k.global_size = (k.global_size[0], prod(out_shape[:n_batch]) * row_blocks)
    result = []
    for r in range(rows):
        m = first + r
        if r and height % rows:
            m = kb.min(m, height - 1)
        result.append(OutputRow(batch, m, OutputPixel(x, matrix * height + m, [*batch, m, x])))
    return result


def _epilogue(k: KernelContext, op: Operation, value: Val) -> Val:
    """Gemm's alpha and beta * C, FusedMatMul's bias, a fused op's activation."""
    kb = k.kb

    def broadcast(operand) -> Val:
        view = k.input(operand, hint="bias")
        return view.read_broadcast_block(k.pixel.block, k.out.shape, k.out.packed_axis)

    if isinstance(op, GemmAttrsOp):
        alpha, beta = op.float_attr("alpha"), op.float_attr("beta")
        value = value * alpha
        if not is_none(op.C) and beta != 0.0:
            value = kb.fma(broadcast(op.C), kb.float4(beta), value) if beta != 1.0 else (
                value + broadcast(op.C))
    if isinstance(op, onnx.FusedMatMulOp) and not is_none(op.Bias):
        value = value + broadcast(op.Bias)
    if isinstance(op, onnx.FusedGemmOp | onnx.FusedMatMulOp):
        params = op.floats_attr("activation_params") or ()
        value = activation(kb, op.activation.data, params, value)
    return value
