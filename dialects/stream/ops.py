"""
The `stream` dialect's ops: moving a weight from the weight store into its texture
chunk by chunk while kernels run (FlashMem). `flashmem-stream` puts them where
`flashmem-plan`'s plan says, and the streaming runtime follows them.

They live in the host function among the `ocl.launch` ops, and program order is time:
a `stream.load` or `stream.transform` after the launch of layer l (and before the next)
is issued once that kernel is and runs while it does. For one chunk range of a weight:

    %img = texture.alloc {...}          // the weight's texture, from its load layer on
    %s = stream.load %w {chunks = #stream.chunks<...>, layout = ...} : tensor<...> -> !stream.staging<N>
    %t = stream.transform %s, %img {chunks = #stream.chunks<...>} : ...
    ...                                 // launches of the layers the move overlaps
    stream.wait %t                      // then the kernel that reads %img
    ocl.launch @consumer(..., %img, ...)

The load reads the chunks' bytes of the weight's pixels (in its storage's layout, as the
weight store holds them: the rearrangement into the layout is done when the store is
written) into a staging buffer; the transform starts once the load is done (its operand),
writes them into their pixels of the texture and gives a token; the wait blocks until the
tokens' transforms are done. The verifier makes every other use of the texture come after
the wait on each transform that writes it, so no kernel reads a texture still being
filled. The weight is a constant expression (an `onnx.Weight`, named by store and key,
or host ops over constants), as a `texture.pack` of it would take.
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.onnx.base import is_constant_expression
from mobile_opt.dialects.texture.layouts import Layout
from mobile_opt.dialects.texture.ops import (
    Image2DType,
    LayoutAttr,
    PixelBufferType,
    check_storage_size,
    check_tensor_element,
)

from .attributes import (
    ChunkRangeAttr,
    DecisionAttr,
    PlanAttr,
    StagingType,
    StatusAttr,
    TokenType,
    WeightPlanAttr,
    module_plan,
)


class ChunkOp(IRDLOperation, ABC):
    """An op that moves the chunks `chunks` of a weight through a staging buffer."""

    chunks = prop_def(ChunkRangeAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def staging_type(self) -> StagingType:
        raise NotImplementedError

    def verify_(self) -> None:
        staging = self.staging_type().bytes.data
        want = self.chunks.bytes
        if staging != want:
            raise VerifyException(
                f"{self.name}: a staging buffer of {self.chunks.describe()} of "
                f"{self.chunks.storage} holds {want} bytes, not {staging}")
        plan = module_plan(self)
        if plan is not None and plan.chunk.data != self.chunks.size.data:
            raise VerifyException(
                f"{self.name}: chunk size {self.chunks.size.data} differs from the "
                f"{plan.chunk.data} of the module's stream.plan")


@irdl_op_definition
class LoadOp(ChunkOp):
    """
    Read chunks of the pixels of the constant `weight` in `layout` from the weight store
    into a new staging buffer in unified memory, asynchronously: FlashMem's load from
    disk. The buffer is ready for the `stream.transform` that takes it.
    """

    name = "stream.load"
    layout = prop_def(LayoutAttr)
    weight = operand_def(TensorType)
    staging = result_def(StagingType)
    assembly_format = "$weight attr-dict `:` type($weight) `->` type($staging)"

    def __init__(self, weight: SSAValue, chunks: ChunkRangeAttr, layout: Layout):
        super().__init__(
            operands=[weight],
            properties={"chunks": chunks, "layout": LayoutAttr(layout)},
            result_types=[StagingType(chunks.bytes)],
        )

    def staging_type(self) -> StagingType:
        return self.staging.type

    def verify_(self) -> None:
        super().verify_()
        if not is_constant_expression(self.weight):
            raise VerifyException(
                f"{self.name}: streams a constant (an onnx.Weight or host ops over constants), "
                "not a value computed at run time")
        weight = self.weight.type
        assert isinstance(weight, TensorType)
        storage = self.chunks.storage
        check_storage_size(self, self.layout.data, weight.get_shape(), storage, "weight")
        check_tensor_element(self, weight, storage)


@irdl_op_definition
class TransformOp(ChunkOp):
    """
    Write the staged chunks into their pixels of `dest`, the texture of the whole weight,
    asynchronously and alongside the kernels launched after it: FlashMem's transform from
    unified to texture memory, x_{w,l} chunks of it at layer l. Other chunks of the weight
    go into the same texture through other transforms. The result is done once a
    `stream.wait` on its token returns; every other use of `dest` comes after that wait.
    """

    name = "stream.transform"
    staging = operand_def(StagingType)
    dest = operand_def(Image2DType | PixelBufferType)
    token = result_def(TokenType())
    assembly_format = "$staging `,` $dest attr-dict `:` type($staging) `,` type($dest)"

    def __init__(self, staging: SSAValue, dest: SSAValue, chunks: ChunkRangeAttr):
        super().__init__(
            operands=[staging, dest],
            properties={"chunks": chunks},
            result_types=[TokenType()],
        )

    def staging_type(self) -> StagingType:
        return self.staging.type

    def verify_(self) -> None:
        super().verify_()
        if self.dest.type != self.chunks.storage:
            raise VerifyException(
                f"{self.name}: moves chunks of {self.chunks.storage} into {self.dest.type}")
        load = self.staging.owner
        if isinstance(load, LoadOp) and load.chunks != self.chunks:
            raise VerifyException(
                f"{self.name}: moves {self.chunks.describe()} of {self.chunks.storage}, but its "
                f"staging buffer holds {load.chunks.describe()} of {load.chunks.storage}")
        other = streamed_from(self.dest)
        if isinstance(load, LoadOp) and other is not None and (
                other.weight, other.layout) != (load.weight, load.layout):
            raise VerifyException(
                f"{self.name}: fills a texture that other transforms fill from another weight "
                "or layout")
        self._verify_wait()
    def _verify_wait(self) -> None:
        """The token is waited on in this block, and no other op uses `dest` before that."""
        block = self.parent_block()
        if block is None:
            return
        before_wait: list[Operation] = []
        op = self.next_op
        while not (isinstance(op, WaitOp) and self.token in op.tokens):
            if op is None:
                raise VerifyException(
                    f"{self.name}: no stream.wait after it in its block takes its token")
            before_wait.append(op)
            op = op.next_op
        op = self.prev_op
        while op is not None and op is not self.dest.owner:
            before_wait.append(op)
            op = op.prev_op
        for op in before_wait:
            self._check_use(op)

    def _check_use(self, op: Operation) -> None:
        if isinstance(op, TransformOp):
            return  # other chunks of the same weight
        if any(self.dest in inner.operands for inner in op.walk()):
            raise VerifyException(
                f"{self.name}: {op.name} uses the texture before the stream.wait on this "
                "transform's token")


@irdl_op_definition
class WaitOp(IRDLOperation):
    """
    Block the host until the transforms that gave `tokens` are done: the point before
    which a kernel may not read the textures they fill. A lowering puts one before the
    launch of each layer that first reads streamed weights, waiting on all their chunks.
    """

    name = "stream.wait"
    tokens = var_operand_def(TokenType())
    assembly_format = "$tokens attr-dict"

    def __init__(self, *tokens: SSAValue):
        super().__init__(operands=[list(tokens)])

    def verify_(self) -> None:
        if not self.tokens:
            raise VerifyException(f"{self.name}: waits on no token")
        if len(set(self.tokens)) != len(self.tokens):
            raise VerifyException(f"{self.name}: waits on a token twice")


STREAM = Dialect(
    "stream",
    [LoadOp, TransformOp, WaitOp],
    [TokenType, StagingType, DecisionAttr, StatusAttr, ChunkRangeAttr, WeightPlanAttr, PlanAttr],
)


def streamed_from(storage: SSAValue) -> LoadOp | None:
    """A `stream.load` whose chunks a `stream.transform` writes into `storage` (a streamed
    weight's texture; the verifier makes all of them load the same weight), or None."""
    for use in storage.uses:
        move = use.operation
        if isinstance(move, TransformOp) and move.dest is storage:
            load = move.staging.owner
            if isinstance(load, LoadOp):
                return load
    return None
