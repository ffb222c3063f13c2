"""The `stream` dialect: FlashMem's weight streaming into textures, and its overlap plan."""

from .attributes import (
    PLAN,
    PRELOAD_LAYER,
    WEIGHT_PLAN,
    ChunkRangeAttr,
    Decision,
    DecisionAttr,
    PlanAttr,
    SolverStatus,
    StagingType,
    StatusAttr,
    TokenType,
    WeightPlanAttr,
    chunk_count,
    layer_chunks,
    module_plan,
)
from .ops import STREAM, ChunkOp, LoadOp, TransformOp, WaitOp

__all__ = [
    "PLAN",
    "PRELOAD_LAYER",
    "STREAM",
    "WEIGHT_PLAN",
    "ChunkOp",
    "ChunkRangeAttr",
    "Decision",
    "DecisionAttr",
    "LoadOp",
    "PlanAttr",
    "SolverStatus",
    "StagingType",
    "StatusAttr",
    "TokenType",
    "TransformOp",
    "WaitOp",
    "WeightPlanAttr",
    "chunk_count",
    "layer_chunks",
    "module_plan",
]
