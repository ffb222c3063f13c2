"""
`texture-to-ocl`: pixel reads and writes in kernel bodies become OpenCL's
accesses for their storage — `read_imagef/h`, `write_imagef/h` for images,
`vload4`/`vload_half4` at pixel y·width + x for the buffer fallback. Kernels
compute in float4, so half storage converts at each access. A buffer pixel read only
for lanes picked at run time (`ocl.lane`, a gather's) becomes one scalar load per lane;
`texture.read16`, four pixels of a row, one `vload16` (four image reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float16Type, IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mobile_opt.dialects import ocl, texture


def _is_half(storage: SSAValue) -> bool:
    return isinstance(storage.type.element_type, Float16Type)


def _pixel_offset(op: texture.ReadOp | texture.Read16Op | texture.WriteOp,
                  new_ops: list[Operation]) -> SSAValue:
    width = arith.ConstantOp(IntegerAttr(op.storage.type.width.data, i32))
    row = arith.MuliOp(op.y, width)
    offset = arith.AddiOp(row, op.x)
    offset.result.name_hint = "offset"
    new_ops += [width, row, offset]
    return offset.result


class LowerRead(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: texture.ReadOp, rewriter: PatternRewriter) -> None:
        new_ops: list[Operation] = []
        if isinstance(op.storage.type, texture.PixelBufferType):
            offset = _pixel_offset(op, new_ops)
            load = (ocl.VLoadHalf4Op if _is_half(op.storage) else ocl.VLoad4Op)(op.storage, offset)
            new_ops.append(load)
        elif _is_half(op.storage):
            read = ocl.ReadImageHOp(op.storage, op.x, op.y)
            new_ops += [read, arith.ExtFOp(read.result, ocl.FLOAT4)]
        else:
            new_ops.append(ocl.ReadImageFOp(op.storage, op.x, op.y))
        rewriter.replace(op, new_ops)


class LowerRead16(RewritePattern):
    """Four pixels of a row: one 16-wide load from a buffer, four reads from an image."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: texture.Read16Op, rewriter: PatternRewriter) -> None:
        new_ops: list[Operation] = []
        if isinstance(op.storage.type, texture.PixelBufferType):
            offset = _pixel_offset(op, new_ops)
            load = ocl.VLoadHalf16Op if _is_half(op.storage) else ocl.VLoad16Op
            new_ops.append(load(op.storage, offset))
        else:
            pixels = []
            for j in range(4):
                step = arith.ConstantOp(IntegerAttr(j, i32))
                x = arith.AddiOp(op.x, step)
                read = texture.ReadOp(op.storage, x.result, op.y)
                new_ops += [step, x, read]
                pixels.append(read.result)
            new_ops.append(ocl.Vec16Op(pixels))
        rewriter.replace(op, new_ops)


class LowerLanesOfRead(RewritePattern):
    """A buffer read whose every use is `ocl.lane`: a scalar load per lane, no pixel."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: texture.ReadOp, rewriter: PatternRewriter) -> None:
        uses = [use.operation for use in op.result.uses]
        if (not isinstance(op.storage.type, texture.PixelBufferType) or not uses
                or not all(isinstance(u, ocl.LaneOp) for u in uses)):
            return
        load = ocl.LoadHalfLaneOp if _is_half(op.storage) else ocl.LoadLaneOp
        new_ops: list[Operation] = []
        offset = _pixel_offset(op, new_ops)
        for use in uses:
            assert isinstance(use, ocl.LaneOp)
            rewriter.replace(use, load(op.storage, offset, use.lane))
        rewriter.replace(op, new_ops, [None])  # the offset where the read was


class LowerWrite(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: texture.WriteOp, rewriter: PatternRewriter) -> None:
        new_ops: list[Operation] = []
        if isinstance(op.storage.type, texture.PixelBufferType):
            offset = _pixel_offset(op, new_ops)
            store = ocl.VStoreHalf4Op if _is_half(op.storage) else ocl.VStore4Op
            new_ops.append(store(op.value, op.storage, offset))
        elif _is_half(op.storage):
            half = arith.TruncFOp(op.value, ocl.HALF4)
            new_ops += [half, ocl.WriteImageHOp(half.result, op.storage, op.x, op.y)]
        else:
            new_ops.append(ocl.WriteImageFOp(op.value, op.storage, op.x, op.y))
        rewriter.replace(op, new_ops, [])


@dataclass(frozen=True)
class TextureToOclPass(ModulePass):
    name = "texture-to-ocl"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerRead16(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(LowerLanesOfRead(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(LowerRead(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(LowerWrite(), apply_recursively=False).rewrite_module(op)
