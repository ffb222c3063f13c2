"""
ONNX shape rules as pure functions over static shapes.

The op verifiers, the importer's cross-check of ONNX's own shape inference and the
graph passes that build new ops all use these, so a shape is computed one way only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """An op's operands or attributes admit no result shape."""


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def broadcast(*shapes: Sequence[int]) -> Shape:
    """Numpy-style multidirectional broadcasting."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            shown = " and ".join(str(list(s)) for s in shapes)
            raise ShapeError(f"shapes {shown} do not broadcast")
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def matmul(a: Sequence[int], b: Sequence[int]) -> Shape:
    """numpy.matmul semantics, including 1-D promotion."""
    if not a or not b:
        raise ShapeError("MatMul operands must have rank >= 1")
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise ShapeError(f"inner dimensions differ: {list(a)} x {list(b)}")
    batch = broadcast(a2[:-2], b2[:-2])
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def gemm(a: Sequence[int], b: Sequence[int], trans_a: bool, trans_b: bool) -> Shape:
    if len(a) != 2 or len(b) != 2:
        raise ShapeError("Gemm operands must be 2-D")
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    k2, n = (b[1], b[0]) if trans_b else (b[0], b[1])
    if k != k2:
        raise ShapeError(f"inner dimensions differ: {k} vs {k2}")
    return (m, n)


def window_output(
    size: int, kernel: int, stride: int, dilation: int, pad_begin: int, pad_end: int, ceil_mode: bool
) -> int:
    effective = (kernel - 1) * dilation + 1
    span = size + pad_begin + pad_end - effective
    if span < 0:
        raise ShapeError(f"window {effective} is larger than padded input {size + pad_begin + pad_end}")
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    # ceil mode must not start a window entirely in the trailing padding
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


def auto_pads(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str,
) -> list[int]:
    """Explicit begin/end pads (ONNX order) for an `auto_pad` mode."""
    n = len(spatial)
    if auto_pad in ("NOTSET", "VALID"):
        return [0] * (2 * n)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ShapeError(f"unknown auto_pad '{auto_pad}'")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def window(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    ceil_mode: bool = False,
) -> Shape:
    """Spatial output of a sliding window (conv or pool) with explicit pads."""
    n = len(spatial)
    if not (len(kernel) == len(strides) == len(dilations) == n and len(pads) == 2 * n):
        raise ShapeError(
            f"kernel/strides/dilations/pads do not match {n} spatial dimensions"
        )
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        raise ShapeError("strides and dilations must be positive")
    return tuple(
        window_output(spatial[i], kernel[i], strides[i], dilations[i], pads[i], pads[i + n], ceil_mode)
        for i in range(n)
    )


def conv_transpose_output(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    output_padding: Sequence[int],
) -> Shape:
    n = len(spatial)
    return tuple(
        strides[i] * (spatial[i] - 1)
        + output_padding[i]
        + (kernel[i] - 1) * dilations[i]
        + 1
        - pads[i]
        - pads[i + n]
        for i in range(n)
    )


def reshape(data: Sequence[int], target: Sequence[int], allowzero: bool) -> Shape:
    dims = list(target)
    if not allowzero:
        for i, d in enumerate(dims):
            if d == 0:
                if i >= len(data):
                    raise ShapeError("0 in Reshape shape has no input dimension to copy")
                dims[i] = data[i]
    if dims.count(-1) > 1:
        raise ShapeError("Reshape shape has more than one -1")
    total = math.prod(data)
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape {list(data)} into {list(target)}")
        dims[dims.index(-1)] = total // known
    if math.prod(dims) != total or any(d < 0 for d in dims):
        raise ShapeError(f"cannot reshape {list(data)} into {list(target)}")
    return tuple(dims)


def slice_dims(
    data: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    axes: Sequence[int] | None,
    steps: Sequence[int] | None,
) -> tuple[Shape, list[slice]]:
    """Result shape and per-axis python slices of ONNX Slice."""
    rank = len(data)
    axes = list(range(len(starts))) if axes is None else [normalize_axis(a, rank) for a in axes]
    steps = [1] * len(starts) if steps is None else list(steps)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ShapeError("starts, ends, axes and steps differ in length")
    if len(set(axes)) != len(axes):
        raise ShapeError("Slice axes repeat")
    slices = [slice(None)] * rank
    out = list(data)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if step == 0:
            raise ShapeError("Slice step is 0")
        size = data[axis]
        # ONNX clamps to the valid index range, which python slices already do
        # except for the huge sentinels exported models use for "to the end"
        start = max(min(start, size), -size)  # a start before the first element is index 0
        end = max(min(end, size), -size - 1)
        if step < 0 and end < -size:
            end = None  # type: ignore[assignment]
        s = slice(start, end, step)
        slices[axis] = s
        out[axis] = len(range(*s.indices(size)))
    return tuple(out), slices


def squeeze(data: Sequence[int], axes: Sequence[int] | None) -> Shape:
    rank = len(data)
    if axes is None:
        return tuple(d for d in data if d != 1)
    norm = {normalize_axis(a, rank) for a in axes}
    for a in norm:
        if data[a] != 1:
            raise ShapeError(f"cannot squeeze axis {a} of size {data[a]}")
    return tuple(d for i, d in enumerate(data) if i not in norm)


def unsqueeze(data: Sequence[int], axes: Sequence[int]) -> Shape:
    rank = len(data) + len(axes)
    norm = sorted(normalize_axis(a, rank) for a in axes)
    if len(set(norm)) != len(norm):
        raise ShapeError("Unsqueeze axes repeat")
    out = list(data)
    for a in norm:
        out.insert(a, 1)
    return tuple(out)


def transpose(data: Sequence[int], perm: Sequence[int] | None) -> Shape:
    perm = list(reversed(range(len(data)))) if perm is None else list(perm)
    if sorted(perm) != list(range(len(data))):
        raise ShapeError(f"perm {perm} is not a permutation of rank {len(data)}")
    return tuple(data[p] for p in perm)


def concat(shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("Concat needs at least one input")
    rank = len(shapes[0])
    axis = normalize_axis(axis, rank)
    for s in shapes:
        if len(s) != rank or any(s[i] != shapes[0][i] for i in range(rank) if i != axis):
            raise ShapeError(f"Concat inputs {[list(x) for x in shapes]} differ off axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return tuple(out)


def split_sizes(size: int, split: Sequence[int] | None, num_outputs: int) -> list[int]:
    if split is not None:
        if sum(split) != size:
            raise ShapeError(f"split sizes {list(split)} do not sum to {size}")
        return list(split)
    chunk = -(-size // num_outputs)
    sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    if len(sizes) != num_outputs:
        raise ShapeError(f"cannot split {size} into {num_outputs} parts")
    return sizes


def reduce(data: Sequence[int], axes: Sequence[int] | None, keepdims: bool) -> Shape:
    rank = len(data)
    norm = set(range(rank)) if axes is None else {normalize_axis(a, rank) for a in axes}
    if keepdims:
        return tuple(1 if i in norm else d for i, d in enumerate(data))
    return tuple(d for i, d in enumerate(data) if i not in norm)


def gather(data: Sequence[int], indices: Sequence[int], axis: int) -> Shape:
    axis = normalize_axis(axis, len(data))
    return (*data[:axis], *indices, *data[axis + 1 :])


def flatten(data: Sequence[int], axis: int) -> Shape:
    rank = len(data)
    if not -rank <= axis <= rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    return (math.prod(data[:axis]), math.prod(data[axis:]))


def expand(data: Sequence[int], shape: Sequence[int]) -> Shape:
    return broadcast(data, shape)


def pad(data: Sequence[int], pads: Sequence[int], axes: Sequence[int] | None) -> Shape:
    rank = len(data)
    axes = list(range(rank)) if axes is None else [normalize_axis(a, rank) for a in axes]
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"pads has {len(pads)} values for {len(axes)} axes")
    out = list(data)
    for i, a in enumerate(axes):
        out[a] += pads[i] + pads[i + len(axes)]
        if out[a] < 0:
            raise ShapeError(f"negative pads remove all of axis {a}")
    return tuple(out)


def range_length(start, limit, delta) -> int:
    """
    How many values Range gives: max(ceil((limit - start) / delta), 0), the difference
    taken in the operands' own type (numpy scalars) and the quotient in double, as
    ONNX Runtime computes it.
    """
    if delta == 0:
        raise ShapeError("Range delta is 0")
    return max(math.ceil(float(limit - start) / float(delta)), 0)
