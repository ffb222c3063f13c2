"""
Winograd F(2x2, 3x3) in buffers (`onnx_to_texture/winograd.py`): its numerics against
onnxruntime, and its rounding error against a float64 reference, held to a bound derived
from the transform, beside the direct (wide) kernel's.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import lower_for_pocl
from test_opencl_conv_pool import (
    PASS_PIPELINE,
    ModelBuilder,
    add_conv,
    assert_close,
    rand,
    run,
)

from mobile_opt.transforms.onnx_to_texture import winograd
from mobile_opt.transforms.onnx_to_texture.winograd import AT, BT, G

pytest.importorskip("onnx")
pytest.importorskip("pyopencl")

NO_WINOGRAD = ["onnx-to-texture{buffers=true}"]
"""The default: the wide kernel (Winograd lost on whole models on PoCL)."""
ASKED = ["onnx-to-texture{buffers=true winograd=true}"]

WINOGRAD = {  # x, w, attrs: 3x3 stride 1, ungrouped, >= 8 input channels, >= 64 outputs
    "wino_pad1": ([1, 16, 8, 8], [16, 16, 3, 3], {"pads": [1, 1, 1, 1]}),
    "wino_pad0_odd": ([1, 17, 9, 13], [22, 17, 3, 3], {}),  # 7x11 out, C and M mid-block
    "wino_odd_batch2": ([2, 18, 7, 13], [13, 18, 3, 3], {"pads": [1, 1, 1, 1]}),
    "wino_asym_pads": ([1, 16, 9, 11], [8, 16, 3, 3], {"pads": [0, 1, 2, 1]}),
    "wino_wide_row": ([1, 20, 3, 30], [36, 20, 3, 3], {"pads": [1, 1, 1, 1]}),
}


def winograd_weights(module) -> list[tuple[int, ...]]:
    """The shapes of the transformed weights (M, C, 4, 4) that the module packs."""
    from mobile_opt.dialects import texture
    from mobile_opt.dialects.texture import Layout

    return [tuple(op.source.type.get_shape()) for op in module.walk()
            if isinstance(op, texture.PackOp) and op.layout.data is Layout.HWIO4
            and tuple(op.source.type.get_shape())[2:] == (4, 4)]


def test_winograd_conv(tmp_path, pocl_device):
    """Pads 0, 1 and uneven, odd output sizes (masked stores), batch 2, channels that end
    mid-block, with and without bias; each case takes Winograd, and none with
    winograd=false."""
    m = ModelBuilder()
    for name, (x, w, attrs) in WINOGRAD.items():
        add_conv(m, name, x, w, **attrs)
    add_conv(m, "wino_no_bias", [1, 20, 8, 9], [6, 20, 3, 3], bias=False, pads=[1, 1, 1, 1])
    path = m.save(tmp_path / "m.onnx")
    assert_close(path, pocl_device, ASKED)
    assert len(winograd_weights(lower_for_pocl(path, ASKED))) == len(WINOGRAD) + 1
    assert winograd_weights(lower_for_pocl(path, NO_WINOGRAD)) == []


def test_winograd_conv_epilogue(tmp_path, pocl_device):
    """A residual block's conv: FusedConv(Relu), then Add and Relu as the epilogue."""
    m = ModelBuilder()
    m.node("Conv", [m.input("x", [1, 24, 8, 9]), m.weight("w", rand(20, 24, 3, 3)),
                    m.weight("b", rand(20, seed=2))], ["c"], pads=[1, 1, 1, 1])
    m.node("Relu", ["c"], ["r"])
    m.node("Conv", [m.input("x2", [1, 20, 8, 9]), m.weight("w2", rand(20, 20, 3, 3))], ["c2"],
           pads=[1, 1, 1, 1])
    m.node("Add", ["r", "c2"], ["s"])
    m.node("Relu", ["s"], [m.output("y")])
    path = m.save(tmp_path / "m.onnx")
    assert_close(path, pocl_device, [*PASS_PIPELINE, *ASKED])
    assert len(winograd_weights(lower_for_pocl(path, [*PASS_PIPELINE, *ASKED]))) == 2


U32 = 2.0**-24
"""The unit roundoff of float32."""


def gamma(n: int) -> float:
    """γ_n = n u / (1 - n u): the relative bound of n float32 roundings in a chain."""
    return n * U32 / (1 - n * U32)


def winograd_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, pads, out_hw):
    """
    In float64 from the float32 operands: the conv computed by F(2x2, 3x3) with exact
    transforms, and S = Σ_ab |A_ap||A_bq| (|b|[ab = 11] + Σ_c |U_cab| (|Bᵀ||d_c||B|)_ab), the
    magnitude its rounding errors scale with, each cropped to the output.
    """
    x, w, b = (a.astype(np.float64) for a in (x, w, b))
    bt, at = np.array(BT, np.float64), np.array(AT, np.float64)
    (top, left, *_), (out_h, out_w) = pads, out_hw
    tiles_h, tiles_w = -(-out_h // 2), -(-out_w // 2)
    padded = np.zeros((*x.shape[:2], 2 * tiles_h + 2, 2 * tiles_w + 2))
    rows, cols = min(x.shape[2], padded.shape[2] - top), min(x.shape[3], padded.shape[3] - left)
    padded[:, :, top:top + rows, left:left + cols] = x[:, :, :rows, :cols]
    d = np.lib.stride_tricks.sliding_window_view(padded, (4, 4), axis=(2, 3))[:, :, ::2, ::2]
    u = np.einsum("ak,mckl,bl->mcab", G, w, G)
    v = np.einsum("ar,nchwrs,bs->nchwab", bt, d, bt)
    size = np.einsum("ar,nchwrs,bs->nchwab", abs(bt), abs(d), abs(bt))
    m = np.einsum("mcab,nchwab->nmhwab", u, v)
    s = np.einsum("mcab,nchwab->nmhwab", abs(u), size)
    m[..., 1, 1] += b[None, :, None, None]
    s[..., 1, 1] += abs(b)[None, :, None, None]

    def outputs(t):
        y = np.einsum("pa,nmhwab,qb->nmhpwq", at, t, at)
        return y.reshape(*y.shape[:2], 2 * tiles_h, 2 * tiles_w)[:, :, :out_h, :out_w]

    return outputs(m), np.einsum("pa,nmhwab,qb->nmhpwq", abs(at), s, abs(at)).reshape(
        *s.shape[:2], 2 * tiles_h, 2 * tiles_w)[:, :, :out_h, :out_w]


def direct_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, pads, out_hw):
    """In float64: the conv, and |b| + Σ |w||x| over each output's terms."""
    x, w, b = (a.astype(np.float64) for a in (x, w, b))
    (top, left, *_), (out_h, out_w) = pads, out_hw
    padded = np.zeros((*x.shape[:2], out_h + 2, out_w + 2))
    rows, cols = min(x.shape[2], out_h + 2 - top), min(x.shape[3], out_w + 2 - left)
    padded[:, :, top:top + rows, left:left + cols] = x[:, :, :rows, :cols]
    y = np.broadcast_to(b[None, :, None, None], (x.shape[0], w.shape[0], out_h, out_w)).copy()
    s = abs(y)
    for kh in range(3):
        for kw in range(3):
            window = padded[:, :, kh:kh + out_h, kw:kw + out_w]
            y += np.einsum("mc,nchw->nmhw", w[:, :, kh, kw], window)
            s += np.einsum("mc,nchw->nmhw", abs(w[:, :, kh, kw]), abs(window))
    return y, s


BOUND_CASES = {  # x, w, pads: a ResNet-like block, and an unpadded one of odd sizes
    "deep": ([1, 64, 14, 14], [32, 64, 3, 3], [1, 1, 1, 1]),
    "odd": ([1, 40, 11, 13], [20, 40, 3, 3], [0, 0, 0, 0]),
}


def bound_errors(tmp_path, device, passes) -> dict[str, tuple[float, float]]:
    """Per case: (max |ours - y| / the Winograd bound, the same over the direct bound),
    y the float64 conv."""
    m = ModelBuilder()
    operands = {}
    for name, (x, w, pads) in BOUND_CASES.items():
        weight = (rand(*w, seed=3) * (2 / (9 * w[1])) ** 0.5).astype(np.float32)
        bias = (rand(w[0], seed=4) * 0.1).astype(np.float32)
        m.node("Conv", [m.input(f"{name}_x", x), m.weight(f"{name}_w", weight),
                        m.weight(f"{name}_b", bias)], [m.output(name)], pads=pads)
        operands[name] = (weight, bias, pads)
    path = m.save(tmp_path / "bound.onnx")
    rng = np.random.default_rng(0)
    feeds = {f"{name}_x": rng.standard_normal(x).astype(np.float32)
             for name, (x, _, _) in BOUND_CASES.items()}
    got = run(path, device, feeds, passes)
    result = {}
    for name, (weight, bias, pads) in operands.items():
        x, ours = feeds[f"{name}_x"], got[name]
        exact, direct_size = direct_reference(x, weight, bias, pads, ours.shape[2:])
        via_winograd, winograd_size = winograd_reference(x, weight, bias, pads, ours.shape[2:])
        # the transforms are exact: F(2x2, 3x3) in float64 is the conv
        assert np.allclose(via_winograd, exact, rtol=0, atol=1e-12 * direct_size.max())
        channels = 4 * -(-weight.shape[1] // 4)
        error = abs(ours - exact)
        result[name] = (float((error / (gamma(channels + 8) * winograd_size)).max()),
                        float((error / (gamma(9 * channels + 1) * direct_size)).max()))
        print(f"{name}: max error {error.max():.2e}, {result[name][0]:.3f} of the Winograd "
              f"bound, {result[name][1]:.3f} of the direct one")
    return result


def test_winograd_error_bound(tmp_path, pocl_device, monkeypatch):
    """
    Winograd's rounding error, against the float64 conv of the same float32 operands, is
    within its bound, as the direct kernel's is within the direct bound; and the bound is
    tight enough that a transform off by 2^-13 breaks it.

    Bounds (u = 2^-24, γ_n = n u / (1 - n u); to first order in u):
    - direct: y = b + Σ w x is a chain of K = 9·4⌈C/4⌉ fmas from the bias (the padded
      channels add exact zeros), one rounding each: |ŷ - y| <= γ_{K+1} (|b| + Σ |w||x|).
    - Winograd: Y = Aᵀ M A, M_ab = b[ab = 11] + Σ_c U_cab V_cab. U = G g Gᵀ is computed in
      float64 and rounded once (u |U|); each V = Bᵀ d B entry is two passes of one add or
      subtract (γ_2 (|Bᵀ||d||B|)_ab); M is a chain of 4⌈C/4⌉ fmas (γ_{4⌈C/4⌉} of Σ |U||V|);
      each output of Aᵀ M A is two passes of two adds (γ_4 of Σ |A||M||A|). Adding the
      relative bounds: |Ŷ - Y| <= γ_{4⌈C/4⌉+7} S with
      S = Σ_ab |A_ap||A_bq| (|b|[ab = 11] + Σ_c |U_cab| (|Bᵀ||d_c||B|)_ab);
      γ_{4⌈C/4⌉+8} leaves one rounding of slack for the second-order terms.
    """
    for name, (wino, direct) in bound_errors(tmp_path, pocl_device, ASKED).items():
        assert wino <= 1.0, f"{name}: Winograd's error is {wino:.2f} of its bound"
    for name, (wino, direct) in bound_errors(tmp_path, pocl_device, NO_WINOGRAD).items():
        assert direct <= 1.0, f"{name}: the direct kernel's error is {direct:.2f} of its bound"
    perturbed = winograd.G * np.array([[1], [1 + 2.0**-13], [1], [1]])
    monkeypatch.setattr(winograd, "G", perturbed)
    worst = max(wino for wino, _ in bound_errors(tmp_path, pocl_device, ASKED).values())
    assert worst > 1.0, "a transform off by 2^-13 stays within the bound: it is vacuous"
