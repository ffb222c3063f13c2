"""TMModel's equations (`models/tmmodel.py`) on hand-computed cases, and the shipped profiles."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from mobile_opt.models.device_profile import ProfileError, load_profile, texture_constants
from mobile_opt.models import texture_kernels, tmmodel
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.models.texture_kernels import (
    B_LAYOUTS,
    FAMILIES,
    ConvKernel,
    MatMulKernel,
    candidates,
    TMModel,
)
from mobile_opt.models.tmmodel import FEATURES, InputAccess, TextureConstants

CONSTANTS = TextureConstants(beta=(10.0,) + (0.0,) * (len(FEATURES) - 1), thrash_factor=2.0,
                             cache_lines=64, cores=2, registers_per_core=65536, warp_size=64)


def access(reuse: int, accesses: int = 1) -> InputAccess:
    return InputAccess(tmmodel.cross_block_features(np.array([(0, 0), (1, 0)])), reuse, accesses)


def test_thread_latency_is_beta_dot_h():  # eq. 1
    features = np.arange(len(FEATURES), dtype=float)
    constants = TextureConstants(tuple(np.ones(len(FEATURES))), 1.0, 1, 1, 1, 1)
    assert tmmodel.thread_latency(constants, features) == pytest.approx(features.sum())


@pytest.mark.parametrize("threads, reuses, exponent", [
    (64, [1], 0),       # 64 lines: the cache holds them
    (64, [2], 1),       # 128 lines: one cache beyond
    (64, [4], 3),       # 256 lines
    (32, [1, 2], 1),    # eq. 3: the inputs share the cache (32 + 64 lines)
    (64, [0], 0),       # a coalesced column walk keeps no line
])
def test_thrashing_exponent(threads, reuses, exponent):  # eqs. 2-3
    inputs = [access(s) for s in reuses]
    assert tmmodel.thrashing_exponent(CONSTANTS, threads, inputs) == exponent
    latency = tmmodel.warp_latency(CONSTANTS, threads, inputs)
    assert latency == pytest.approx(10.0 * len(inputs) * 2.0**exponent)


def test_work_groups_and_rounds():  # eqs. 4-6
    assert tmmodel.work_groups((100, 64), (4, 1), (8, 8)) == 4 * 8
    assert tmmodel.occupancy(CONSTANTS, 64, 256) == 4.0
    assert tmmodel.occupancy_groups(CONSTANTS, 32, 64, 256) == 4
    # a group whose registers exceed the core's runs in rounds of its own
    assert tmmodel.occupancy(CONSTANTS, 128, 1024) == 0.5
    assert tmmodel.occupancy_groups(CONSTANTS, 2, 128, 1024) == 2


def test_kernel_cost_is_warp_latency_times_rounds():  # eq. 7
    inputs = [access(1, accesses=16)]
    cost = tmmodel.kernel_cost(CONSTANTS, inputs, output=(256, 256), tile=(4, 1), group=(16, 16),
                               warp_shape=(16, 4), footprint=32)
    rounds = tmmodel.occupancy_groups(CONSTANTS, tmmodel.work_groups((256, 256), (4, 1),
                                                                     (16, 16)), 32, 256)
    assert cost == pytest.approx(tmmodel.warp_latency(CONSTANTS, 64, inputs) * rounds)
    # a bigger thread tile needs fewer groups
    fewer = tmmodel.kernel_cost(CONSTANTS, inputs, (256, 256), (8, 1), (16, 16), (16, 4), 32)
    assert fewer < cost


def test_measured_profiles_give_constants():
    for name in ("pocl", "nvidia-h100"):
        constants = texture_constants(load_profile(name))
        assert len(constants.beta) == len(FEATURES) and constants.cores >= 1
        # the work-group sweep: every shape relative to the best, which is 1
        factors = [f for _, _, f in constants.group_factors]
        assert len(factors) >= 20 and min(factors) == 1.0
        # and one table per kernel family, from timing a kernel of the family
        tables = dict(constants.family_group_factors)
        assert sorted(tables) == sorted(FAMILIES)
        assert all(min(f for _, _, f in table) == 1.0 for table in tables.values())


def test_group_factor_scales_the_cost():
    shaped = replace(CONSTANTS, group_factors=((1, 1, 3.0), (16, 16, 1.0), (64, 4, 1.5)))
    assert tmmodel.group_factor(CONSTANTS, (16, 16)) == 1.0  # no sweep: no factor
    assert tmmodel.group_factor(shaped, (1, 1)) == 3.0
    assert tmmodel.group_factor(shaped, (32, 8)) == 1.0  # nearest in log2: 16x16
    assert tmmodel.group_factor(shaped, (128, 4)) == 1.5
    inputs = [access(1, accesses=16)]
    args = dict(output=(256, 256), tile=(4, 1), warp_shape=(1, 1), footprint=32)
    plain = tmmodel.kernel_cost(CONSTANTS, inputs, group=(1, 1), **args)
    assert tmmodel.kernel_cost(shaped, inputs, group=(1, 1), **args) == pytest.approx(3 * plain)


def test_group_factors_within_the_sweeps_noise_are_one():
    profile = load_profile("pocl")
    sweep = profile["tmmodel"]["work_groups"]
    sweep["relative_time"] = {"1x1": 1.2, "2x2": 1.0, "4x4": 1.5}
    sweep["round_spread"] = 0.3  # rounds of one shape lay 30 % apart
    factors = {(gx, gy): f for gx, gy, f in texture_constants(profile).group_factors}
    assert factors == {(1, 1): 1.0, (2, 2): 1.0, (4, 4): 1.5}
    sweep["round_spread"] = 0.0
    assert texture_constants(profile).group_factors[0] == (1, 1, 1.2)


def test_group_factor_takes_the_familys_table():
    generic = ((1, 1, 3.0), (16, 16, 1.0))
    conv = ((1, 1, 1.0), (16, 16, 2.0))
    shaped = replace(CONSTANTS, group_factors=generic, family_group_factors=(("conv", conv),))
    assert tmmodel.group_factor(shaped, (1, 1), "conv") == 1.0
    assert tmmodel.group_factor(shaped, (32, 8), "conv") == 2.0  # nearest: 16x16
    for family in ("matmul", "softmax", None):  # no table of their own: the generic one
        assert tmmodel.group_factor(shaped, (1, 1), family) == 3.0
        assert tmmodel.group_factor(shaped, (16, 16), family) == 1.0
    assert tmmodel.group_factor(CONSTANTS, (1, 1), "conv") == 1.0  # no tables at all
    inputs = [access(1, accesses=16)]
    args = dict(output=(256, 256), tile=(4, 1), group=(16, 16), warp_shape=(16, 4), footprint=32)
    plain = tmmodel.kernel_cost(CONSTANTS, inputs, **args)
    assert tmmodel.kernel_cost(shaped, inputs, **args, family="conv") == pytest.approx(2 * plain)
    assert tmmodel.kernel_cost(shaped, inputs, **args, family="matmul") == pytest.approx(plain)


def test_profile_family_tables_within_the_sweeps_noise_are_one():
    profile = copy.deepcopy(load_profile("pocl"))
    tm = profile["tmmodel"]
    tm["work_groups"]["round_spread"] = 0.3
    tm["kernel_groups"] = {
        "matmul": {"relative_time": {"8x8": 1.0, "1x1": 1.5}},
        "conv": {"relative_time": {"1x1": 1.2, "2x2": 1.0, "8x1": 2.0}},
    }
    constants = texture_constants(profile)
    assert constants.family_group_factors == (
        ("conv", ((1, 1, 1.0), (2, 2, 1.0), (8, 1, 2.0))),
        ("matmul", ((1, 1, 1.5), (8, 8, 1.0))),
    )
    assert tmmodel.group_factor(constants, (8, 1), "conv") == 2.0
    assert tmmodel.group_factor(constants, (8, 1), "softmax") == tmmodel.group_factor(
        constants, (8, 1))
    tm["work_groups"]["round_spread"] = 0.0
    assert dict(texture_constants(profile).family_group_factors)["conv"][0] == (1, 1, 1.2)
    for missing in (None, {}):  # not probed (a quick profile of other probes), or none
        tm["kernel_groups"] = missing
        assert texture_constants(profile).family_group_factors == ()
    del tm["kernel_groups"]
    assert texture_constants(profile).family_group_factors == ()


def _conv_kernel(stride: int) -> ConvKernel:
    from mobile_opt.models.conv_shape import ConvShape

    side = 32 // stride
    return ConvKernel(ConvShape(input=(1, 16, 32, 32), output=(1, 16, side, side),
                                kernel=(3, 3), strides=(stride,) * 2, dilations=(1, 1),
                                pads=(1, 1), group=1, transposed=False))


def test_the_choice_follows_the_familys_table():
    constants = replace(texture_constants(load_profile("pocl")), family_group_factors=(),
                        tile_group_factors=())  # the family's one table, not its tiles'
    conv = _conv_kernel(1)
    assert conv.family == "conv"
    space = list(texture_kernels.candidates(conv, 256))
    before = TMModel(constants).choose(conv, space)
    groups = sorted({c.group for c in space if c.group})
    target = next(g for g in groups if g != before.group)
    table = tuple((gx, gy, 1.0 if (gx, gy) == target else 50.0) for gx, gy in groups)
    shaped = replace(constants, family_group_factors=(("conv", table),))
    assert TMModel(shaped).choose(conv, space).group == target
    # kernels of other families keep their choice
    for other in (MatMulKernel(128, 128, 128), _conv_kernel(2)):
        assert other.family != "conv"
        configs = list(texture_kernels.candidates(other, 256))
        assert (TMModel(shaped).choose(other, configs)
                == TMModel(constants).choose(other, configs))


def test_published_presets_say_what_they_lack():
    with pytest.raises(ProfileError, match="no tmmodel.beta"):
        texture_constants(load_profile("adreno740"))


def test_pattern_factor_takes_the_familys_measured_patterns():
    """F(A): MatMul's B layouts as the kernel-groups probe timed them, 1 within the noise."""
    profile = copy.deepcopy(load_profile("pocl"))
    tm = profile["tmmodel"]
    tm["work_groups"]["round_spread"] = 0.1
    del tm["kernel_groups"]["matmul"]["tiles"]  # the family's one table, not its tiles'
    tm["kernel_groups"]["matmul"]["pattern_relative_time"] = {
        "rows4": 1.6, "block2": 1.0, "block4": 1.05, "block8": 1.3, "cols4": 1.0}
    constants = texture_constants(profile)
    assert dict(constants.family_pattern_factors)["matmul"] == (
        ("block2", 1.0), ("block4", 1.0), ("block8", 1.3), ("cols4", 1.0), ("rows4", 1.6))
    assert tmmodel.pattern_factor(constants, "matmul", "rows4") == 1.6
    assert tmmodel.pattern_factor(constants, "conv", None) == 1.0  # no table: no factor
    kernel = MatMulKernel(256, 256, 256, False, B_LAYOUTS)
    configs = list(candidates(kernel, 256))
    # β prefers block-8 strips on PoCL; measured 1.3 slower, they lose to block-4
    assert TMModel(constants).choose(kernel, configs).layout is Layout.BLOCK4
    tm["kernel_groups"]["matmul"]["pattern_relative_time"] = {
        "rows4": 1.0, "block2": 2.0, "block4": 2.0, "block8": 2.0, "cols4": 2.0}
    assert TMModel(texture_constants(profile)).choose(kernel, configs).layout is None
    # a [N, K] B lies otherwise in each layout: the table, measured on [K, N], leaves it be
    assert MatMulKernel(64, 64, 64, True, B_LAYOUTS).pattern(TileConfig((1, 1))) is None


def test_factors_are_read_at_the_nearest_tile_measured():
    """F(G) and F(A) per thread tile: the nearest tile's table (log2 of each side); the
    family's table where no tile is given or the family was timed at one tile only."""
    family = ((2, 16, 1.0), (8, 8, 1.5))
    by_tile = (((1, 1), ((2, 16, 1.0), (8, 8, 1.3))), ((1, 8), ((2, 16, 1.4), (8, 8, 1.0))))
    patterns = (((1, 1), (("cols4", 1.6), ("rows4", 1.0))),
                ((1, 8), (("cols4", 1.0), ("rows4", 1.5))))
    shaped = replace(CONSTANTS, family_group_factors=(("matmul", family),),
                     family_pattern_factors=(("matmul", (("cols4", 2.0),)),),
                     tile_group_factors=(("matmul", by_tile),),
                     tile_pattern_factors=(("matmul", patterns),))
    assert tmmodel.group_factor(shaped, (8, 8), "matmul") == 1.5  # no tile: the family's
    assert tmmodel.group_factor(shaped, (8, 8), "matmul", (1, 1)) == 1.3
    assert tmmodel.group_factor(shaped, (8, 8), "matmul", (1, 2)) == 1.3  # nearer to 1 than 8
    assert tmmodel.group_factor(shaped, (2, 16), "matmul", (1, 4)) == 1.4  # nearer to 8
    assert tmmodel.group_factor(shaped, (8, 8), "conv", (1, 8)) == 1.0  # no tables
    assert tmmodel.pattern_factor(shaped, "matmul", "cols4") == 2.0
    assert tmmodel.pattern_factor(shaped, "matmul", "cols4", (1, 1)) == 1.6
    assert tmmodel.pattern_factor(shaped, "matmul", "rows4", (1, 8)) == 1.5
    assert tmmodel.pattern_factor(shaped, "matmul", "block2", (1, 8)) == 1.0  # not timed
    # the model's choice follows the tile's table: T=8 wants B in cols4, T=1 in rows4
    args = dict(output=(64, 256), group=(8, 8), warp_shape=(8, 8), footprint=32)
    inputs = [access(0, accesses=16)]
    cost = {(t, p): tmmodel.kernel_cost(shaped, inputs, tile=t, family="matmul", pattern=p,
                                        **args)
            for t in ((1, 1), (1, 8)) for p in ("rows4", "cols4")}
    assert cost[(1, 1), "rows4"] < cost[(1, 1), "cols4"]
    assert cost[(1, 8), "cols4"] < cost[(1, 8), "rows4"]


def test_profile_tile_tables_within_the_sweeps_noise_are_one():
    profile = copy.deepcopy(load_profile("pocl"))
    tm = profile["tmmodel"]
    tm["work_groups"]["round_spread"] = 0.1
    tm["kernel_groups"] = {"matmul": {"relative_time": {"2x16": 1.0, "8x8": 1.05}, "tiles": {
        "1x1": {"relative_time": {"2x16": 1.0, "8x8": 1.05}},
        "1x8": {"relative_time": {"2x16": 1.3, "8x8": 1.0},
                "pattern_relative_time": {"rows4": 1.5, "cols4": 1.0, "block2": 1.02}}}}}
    constants = texture_constants(profile)
    assert constants.tile_group_factors == (("matmul", (
        ((1, 1), ((2, 16, 1.0), (8, 8, 1.0))),
        ((1, 8), ((2, 16, 1.3), (8, 8, 1.0))))),)
    assert constants.tile_pattern_factors == (("matmul", (
        ((1, 1), ()), ((1, 8), (("block2", 1.0), ("cols4", 1.0), ("rows4", 1.5))))),)
    del tm["kernel_groups"]["matmul"]["tiles"]  # a profile probed before tiles were
    assert texture_constants(profile).tile_group_factors == ()
    assert texture_constants(profile).tile_pattern_factors == ()
