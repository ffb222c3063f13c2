"""
The `stream` dialect's ops: moving a weight from the weight store into its texture
chunk by chunk while kernels run (FlashMem, issue 21).

They live in the host function among the `ocl.launch` ops, and program order is time:
a `stream.load` or `stream.transform` placed before the launch of layer l is issued
before that kernel and runs while it does. For one chunk range of a weight:

    %s = stream.load {store = "net.onnx", key = "w", chunks = #stream.chunks<...>} : !stream.staging<N>
    %t = stream.transform %s, %img {chunks = #stream.chunks<...>, layout = ...} : ...
    ...                                 // launches of the layers the move overlaps
    stream.wait %t                      // then the kernel that reads %img
    ocl.launch @consumer(..., %img, ...)

The load reads the chunks' bytes from the store into a staging buffer; the transform
starts once the load is done (its operand), rearranges the elements into the pixels of
the texture layout and gives a token; the wait blocks until the tokens' transforms are
done. The verifier makes every other use of the texture come after the wait on each
transform that writes it, so no kernel reads a texture that is still being filled.
Weights are named by store and key, as `onnx.Weight` names them (`dialects/weights.py`).
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import StringAttr
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

from mobile_opt.dialects.texture.layouts import Layout
from mobile_opt.dialects.texture.ops import (
    Image2DType,
    LayoutAttr,
    PixelBufferType,
    PixelStorageType,
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
                f"{self.chunks.weight} holds {want} bytes, not {staging}")
        plan = module_plan(self)
        if plan is not None and plan.chunk.data != self.chunks.size.data:
            raise VerifyException(
                f"{self.name}: chunk size {self.chunks.size.data} differs from the "
                f"{plan.chunk.data} of the module's stream.plan")


@irdl_op_definition
class LoadOp(ChunkOp):
    """
    Read chunks of the weight `key` of the store file `store` into a new staging buffer
    in unified memory, asynchronously: FlashMem's load from disk, issued at the weight's
    load layer z_w. The buffer is ready for the `stream.transform` that takes it.
    """

    name = "stream.load"
    store = prop_def(StringAttr)
    key = prop_def(StringAttr)
    staging = result_def(StagingType)
    assembly_format = "attr-dict `:` type($staging)"

    def __init__(self, store: str, key: str, chunks: ChunkRangeAttr):
        super().__init__(
            properties={"store": StringAttr(store), "key": StringAttr(key), "chunks": chunks},
            result_types=[StagingType(chunks.bytes)],
        )

    def staging_type(self) -> StagingType:
        return self.staging.type


@irdl_op_definition
class TransformOp(ChunkOp):
    """
    Move the staged chunks into their pixels of `dest`, the texture of the whole weight
    in `layout` (packing four elements to a pixel as `texture.pack` does), asynchronously
    and alongside the kernels launched after it: FlashMem's transform from unified to
    texture memory, x_{w,l} chunks of it at layer l. Other chunks of the weight go into
    the same texture through other transforms. The result is done once a `stream.wait`
    on its token returns; every other use of `dest` comes after that wait.
    """

    name = "stream.transform"
    layout = prop_def(LayoutAttr)
    staging = operand_def(StagingType)
    dest = operand_def(Image2DType | PixelBufferType)
    token = result_def(TokenType())
    assembly_format = "$staging `,` $dest attr-dict `:` type($staging) `,` type($dest)"

    def __init__(self, staging: SSAValue, dest: SSAValue, chunks: ChunkRangeAttr,
                 layout: Layout):
        super().__init__(
            operands=[staging, dest],
            properties={"chunks": chunks, "layout": LayoutAttr(layout)},
            result_types=[TokenType()],
        )

    def staging_type(self) -> StagingType:
        return self.staging.type

    def verify_(self) -> None:
        super().verify_()
        weight, layout = self.chunks.weight, self.layout.data
        storage = self.dest.type
        assert isinstance(storage, PixelStorageType)
        check_storage_size(self, layout, weight.get_shape(), storage, "weight")
        check_tensor_element(self, weight, storage)
        load = self.staging.owner
        if isinstance(load, LoadOp) and load.chunks != self.chunks:
            raise VerifyException(
                f"{self.name}: moves {self.chunks.describe()} of {self.chunks.weight}, but its "
                f"staging buffer holds {load.chunks.describe()} of {load.chunks.weight}")
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
