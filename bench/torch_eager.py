"""
Run an ONNX graph op by op with PyTorch eager kernels, the baseline that
`bench/e2e.py` times on CUDA (fp32, TF32 off). Covers the operators of the
shipped CNNs and of `bench/models.py`'s exports; anything else raises KeyError.
"""

from __future__ import annotations

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper


def _attrs(node: onnx.NodeProto) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _pads(a: dict, rank: int) -> tuple[list[int], list[int]]:
    pads = list(a.get("pads", [0] * 2 * rank))
    return pads[:rank], pads[rank:]


def _padded(x: torch.Tensor, a: dict, value: float = 0.0) -> torch.Tensor:
    begin, end = _pads(a, x.dim() - 2)
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise KeyError("auto_pad")
    if any(begin) or any(end):
        spec = []
        for b, e in zip(reversed(begin), reversed(end)):
            spec += [b, e]
        x = F.pad(x, spec, value=value)
    return x


def _conv(x, w, b=None, **a):
    x = _padded(x, a)
    return F.conv2d(x, w, b, stride=a.get("strides", 1), dilation=a.get("dilations", 1),
                    groups=a.get("group", 1))


def _maxpool(x, **a):
    x = _padded(x, a, float("-inf"))
    return F.max_pool2d(x, a["kernel_shape"], a.get("strides", 1), dilation=a.get("dilations", 1),
                        ceil_mode=bool(a.get("ceil_mode", 0)))


def _avgpool(x, **a):
    if a.get("count_include_pad", 0):
        x = _padded(x, a)
        return F.avg_pool2d(x, a["kernel_shape"], a.get("strides", 1),
                            ceil_mode=bool(a.get("ceil_mode", 0)))
    begin, end = _pads(a, 2)
    ceil = bool(a.get("ceil_mode", 0))
    if begin == end and all(p <= k // 2 for p, k in zip(begin, a["kernel_shape"])):
        return F.avg_pool2d(x, a["kernel_shape"], a.get("strides", 1), padding=begin,
                            ceil_mode=ceil, count_include_pad=False)
    # asymmetric pads: average the padded sums by the padded window counts
    ones = torch.ones_like(x[:1, :1])
    total = F.avg_pool2d(_padded(x, a), a["kernel_shape"], a.get("strides", 1), ceil_mode=ceil)
    count = F.avg_pool2d(_padded(ones, a), a["kernel_shape"], a.get("strides", 1), ceil_mode=ceil)
    return total / count


def _gemm(a_, b_, c=None, **a):
    if a.get("transA", 0):
        a_ = a_.t()
    if a.get("transB", 0):
        b_ = b_.t()
    y = a.get("alpha", 1.0) * (a_ @ b_)
    return y if c is None else y + a.get("beta", 1.0) * c


def _lrn(x, **a):
    return F.local_response_norm(x, a["size"], a.get("alpha", 1e-4), a.get("beta", 0.75),
                                 a.get("bias", 1.0))


def _softmax(x, **a):
    return torch.softmax(x, a.get("axis", -1))


def _reshape(x, shape, **a):
    shape = [int(s) for s in shape.tolist()]
    shape = [x.shape[i] if s == 0 and not a.get("allowzero", 0) else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _layernorm(x, scale, bias=None, **a):
    axis = a.get("axis", -1) % x.dim()
    return F.layer_norm(x, x.shape[axis:], scale, bias, a.get("epsilon", 1e-5))


def _split(x, split=None, **a):
    axis = a.get("axis", 0)
    if split is None:
        split = a.get("split")
    if split is None:
        n = a["num_outputs"]
        return torch.chunk(x, n, axis)
    return torch.split(x, [int(s) for s in split.tolist()] if torch.is_tensor(split) else list(split), axis)


def _slice(x, starts, ends, axes=None, steps=None, **a):
    idx = [slice(None)] * x.dim()
    axes = range(len(starts)) if axes is None else axes.tolist()
    steps = [1] * len(starts) if steps is None else steps.tolist()
    for ax, s, e, st in zip(axes, starts.tolist(), ends.tolist(), steps):
        if st != 1:
            raise KeyError("Slice step")
        n = x.shape[ax]
        s, e = max(min(s + n if s < 0 else s, n), 0), max(min(e + n if e < 0 else e, n), 0)
        idx[ax] = slice(s, e)
    return x[tuple(idx)]


def _gather(x, i, **a):
    return torch.index_select(x, a.get("axis", 0), i.reshape(-1).long()).reshape(
        *x.shape[: a.get("axis", 0)], *i.shape, *x.shape[a.get("axis", 0) + 1:])


def _unsqueeze(x, axes, **a):
    for ax in sorted(int(v) % (x.dim() + len(axes)) for v in axes.tolist()):
        x = x.unsqueeze(ax)
    return x


def _squeeze(x, axes=None, **a):
    if axes is None:
        return x.squeeze()
    for ax in sorted((int(v) % x.dim() for v in axes.tolist()), reverse=True):
        x = x.squeeze(ax)
    return x


def _clip(x, lo=None, hi=None, **a):
    return torch.clamp(x, lo, hi)


def _gelu(x, **a):
    return F.gelu(x, approximate=a.get("approximate", b"none").decode() if isinstance(
        a.get("approximate"), bytes) else a.get("approximate", "none"))


def _reduce_mean(x, axes=None, **a):
    axes = a.get("axes") if axes is None else axes.tolist()
    return torch.mean(x, dim=axes, keepdim=bool(a.get("keepdims", 1)))


OPS = {
    "Conv": _conv, "Relu": lambda x, **a: torch.relu(x), "MaxPool": _maxpool,
    "AveragePool": _avgpool, "GlobalAveragePool": lambda x, **a: x.mean((2, 3), keepdim=True),
    "GlobalMaxPool": lambda x, **a: x.amax((2, 3), keepdim=True),
    "Add": lambda x, y, **a: x + y, "Sub": lambda x, y, **a: x - y,
    "Mul": lambda x, y, **a: x * y, "Div": lambda x, y, **a: x / y,
    "Pow": lambda x, y, **a: torch.pow(x, y), "Sqrt": lambda x, **a: torch.sqrt(x),
    "Erf": lambda x, **a: torch.erf(x), "Tanh": lambda x, **a: torch.tanh(x),
    "Sigmoid": lambda x, **a: torch.sigmoid(x), "Gemm": _gemm, "MatMul": lambda x, y, **a: x @ y,
    "Concat": lambda *xs, **a: torch.cat(xs, a["axis"]), "LRN": _lrn, "Softmax": _softmax,
    "Reshape": _reshape, "Flatten": lambda x, **a: x.flatten(a.get("axis", 1)),
    "Transpose": lambda x, **a: x.permute(a["perm"]) if "perm" in a else x.permute(*reversed(range(x.dim()))),
    "Dropout": lambda x, *r, **a: x, "Identity": lambda x, **a: x,
    "BatchNormalization": lambda x, s, b, m, v, **a: F.batch_norm(x, m, v, s, b, False, 0.0, a.get("epsilon", 1e-5)),
    "Sum": lambda *xs, **a: sum(xs[1:], xs[0]), "LayerNormalization": _layernorm,
    "Split": _split, "Slice": _slice, "Gather": _gather, "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze, "Clip": _clip, "Gelu": _gelu, "ReduceMean": _reduce_mean,
    "Shape": lambda x, **a: torch.tensor(x.shape, dtype=torch.int64, device=x.device),
    "ConstantOfShape": lambda shape, **a: torch.full(
        [int(v) for v in shape.tolist()],
        float(numpy_helper.to_array(a["value"]).reshape(-1)[0]) if "value" in a else 0.0,
        device=shape.device),
    "Cast": lambda x, **a: x, "Neg": lambda x, **a: -x, "Exp": lambda x, **a: torch.exp(x),
}


class TorchEagerGraph:
    """An ONNX model's graph on `device`, its initializers uploaded once."""

    def __init__(self, path: str, device: str = "cuda"):
        from mobile_opt.frontend.onnx_import import prepare_model

        model = prepare_model(path)  # opset 21: one form per operator
        self.device = device
        self.graph = model.graph
        self.weights = {
            t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).to(device)
            for t in model.graph.initializer
        }
        for node in self.graph.node:
            if node.op_type != "Constant" and node.op_type not in OPS:
                raise KeyError(f"no torch kernel for {node.op_type}")

    @torch.no_grad()
    def __call__(self, inputs: dict[str, np.ndarray]) -> list[torch.Tensor]:
        env = dict(self.weights)
        for name, array in inputs.items():
            env[name] = torch.from_numpy(np.ascontiguousarray(array)).to(self.device)
        for node in self.graph.node:
            attrs = _attrs(node)
            if node.op_type == "Constant":
                env[node.output[0]] = torch.from_numpy(
                    numpy_helper.to_array(attrs["value"]).copy()).to(self.device)
                continue
            args = [env[n] if n else None for n in node.input]
            while args and args[-1] is None:
                args.pop()
            out = OPS[node.op_type](*args, **attrs)
            outs = out if isinstance(out, tuple | list) else (out,)
            for name, value in zip(node.output, outs):
                if name:
                    env[name] = value
        return [env[o.name] for o in self.graph.output]
