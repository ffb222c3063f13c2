"""The cost models behind the one `CostModel` protocol agree with the functions they wrap."""

from __future__ import annotations

import math

from mobile_opt import pipelines
from mobile_opt.checking.hvx_kernels import ConvCase, conv_program
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS
from mobile_opt.models.cost_model import CostModel
from mobile_opt.models.device_profile import load_profile, texture_constants
from mobile_opt.models.hvx_cycles import HvxCycleModel, kernel_cost
from mobile_opt.models.texture_kernels import (
    MatMulKernel,
    TMModel,
    candidates,
    predicted_cost,
    squareness,
)
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape


def cheapest(model: CostModel, options: list):
    """What a solver does with any model: the candidate of least cost."""
    return min(options, key=model.cost)


def test_tmmodel_costs_configurations_with_eq7():
    constants = texture_constants(load_profile("pocl"))
    model = TMModel(constants)
    kernel = MatMulKernel(128, 128, 128)
    configs = [c for c in candidates(kernel, 256) if c.group is not None]
    assert model.name == "tmmodel" and len(configs) > 4
    costs = [model.cost((kernel, c)) for c in configs]
    assert costs == [predicted_cost(constants, kernel, c) for c in configs]
    assert len(set(costs)) > 1  # the model tells configurations apart
    least = min(round(c, 6) for c in costs)
    chosen = model.choose(kernel, configs)
    assert round(model.cost((kernel, chosen)), 6) == least
    ties = [c for c in configs if round(model.cost((kernel, c)), 6) == least]
    assert squareness(kernel, chosen, constants.warp_size) == min(
        squareness(kernel, c, constants.warp_size) for c in ties)
    assert cheapest(model, [(kernel, c) for c in configs])[1] in ties


def test_hvx_cycle_model_costs_allocated_kernels_in_cycles():
    case = ConvCase.random(ConvShape(64, 8, 8, 64, (3, 3), (1, 1), (1, 1)), seed=1)
    model = HvxCycleModel()
    funcs = []
    for layout in MATRIX_LAYOUTS:
        built = conv_program(layout, case)
        pipelines.apply(built.program.module(), pipelines.dsp_back_end("greedy"))
        funcs.append(built.kernel.func)
    costs = [model.cost(f) for f in funcs]
    assert model.unit == "cycles"
    assert costs == [kernel_cost(f).cycles for f in funcs]
    # cycles, not packets: a packet costs at least its read and write stages
    assert all(c > kernel_cost(f).packets for c, f in zip(costs, funcs))
    assert not any(math.isinf(c) for c in costs) and len(set(costs)) > 1
    assert cheapest(model, funcs) is funcs[costs.index(min(costs))]


def test_buffers_where_the_profile_measured_images_slower():
    """Romou's storage criterion, and the GPU pipeline following it per device."""
    from types import SimpleNamespace

    from mobile_opt.models.device_profile import IMAGE_PENALTY, prefers_buffers

    assert prefers_buffers(load_profile("pocl"))  # images emulated in software
    assert not prefers_buffers(load_profile("nvidia-h100"))
    assert not prefers_buffers(load_profile("adreno740"))  # published figures: no bandwidths
    assert prefers_buffers({"bandwidth_gbs": {"buffer": IMAGE_PENALTY * 2.0 + 0.1, "texture": 2.0}})
    assert not prefers_buffers({"bandwidth_gbs": {"buffer": IMAGE_PENALTY * 2.0, "texture": 2.0}})

    def lowering(name: str, platform: str, spec: str = "") -> bool:
        device = SimpleNamespace(max_image_width=16384, max_image_height=16384, name=name,
                                 platform=platform)
        return pipelines.gpu_pipeline(spec, device, tile=False)[1].buffers

    assert lowering("cpu", "Portable Computing Language")
    assert not lowering("NVIDIA H100 80GB HBM3", "NVIDIA CUDA")
    assert not lowering("cpu", "Portable Computing Language", "onnx-to-texture{buffers=false}")
