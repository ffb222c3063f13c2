"""
Measuring kernel configurations: a node of an `onnx`-level module, under each of a
list of `TileConfig`s, lowered and built for an OpenCL device and run; its kernel's
time from profiling events (the least of a few runs after a warm-up). This is the
executor `mobile-tune` and the measured `texture-tile` searches share.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError
from mobile_opt.backends.reference.interpreter import find_function
from mobile_opt.dialects.texture.tiling import TileConfig


@dataclass
class Measurement:
    config: TileConfig
    seconds: float
    """The node's kernel time (infinite where the device cannot launch it)."""
    cost_seconds: float
    """What measuring it took: lowering, building and the runs."""


def node_name(op: Operation) -> str:
    """The ONNX node's name (kernel time records name their nodes by it)."""
    from mobile_opt.backends.reference.interpreter import describe_location

    return describe_location(op.location) or op.name


def random_feeds(module: ModuleOp, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for the module's graph, drawn as `mobile-run` draws them."""
    from mobile_opt.tools.mobile_run import make_inputs

    return make_inputs(find_function(module, "main_graph"), {}, seed)


def measure(module: ModuleOp, node: str, configs: Sequence[TileConfig], device,
            repeat: int = 3, progress: Callable[[str], None] | None = None) -> list[Measurement]:
    """Each configuration of node `node` (its label) measured on `device` (a DeviceInfo)."""
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

    from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
    from mobile_opt.transforms.texture_to_ocl import TextureToOclPass

    feeds = random_feeds(module)
    results = []
    for index, config in enumerate(configs):
        if progress:
            progress(f"{node} {config.describe()} ({index + 1}/{len(configs)})")
        start = time.perf_counter()
        clone = module.clone()
        target = next(op for op in clone.walk() if _is_node(op, node))
        config.apply(target)
        ctx = Context()
        OnnxToTexturePass(max_image_width=device.max_image_width,
                          max_image_height=device.max_image_height,
                          remarks=False).apply(ctx, clone)
        TextureToOclPass().apply(ctx, clone)
        CommonSubexpressionElimination().apply(ctx, clone)
        compiled = CompiledModel(clone, device)
        times = []
        try:
            for _ in range(repeat + 1):
                run = compiled.run(feeds)
                times.append(sum(t.seconds for t in run.kernel_times if _names(t.node, node)))
        except OpenCLRunError as e:
            if "OUT_OF_RESOURCES" not in str(e):
                raise
            times = [math.inf] * 2  # the device cannot launch it: a configuration never to pick
        results.append(Measurement(config, min(times[1:]), time.perf_counter() - start))
    return results


def _names(label: str, node: str) -> bool:
    """Whether a kernel's node label (`node 'a' (MatMul) + node 'b' (Relu)`) names `node`."""
    return any(part.startswith(f"node '{node}' ") for part in label.split(" + "))


def _is_node(op: Operation, node: str) -> bool:
    return op.name.startswith("onnx.") and node_name(op) == node
