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
