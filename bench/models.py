"""
Benchmark models written in PyTorch and exported to ONNX.

Three architectures that the shipped light models do not cover, each small enough
(< 2 MB of float32 weights) to keep as test data (`MODELS`):

- `vit_tiny`: a vision transformer on a 1x3x64x64 image (16x16 patches, class
  token, learned position embedding, 4 pre-norm blocks, head of 100 classes);
- `mobilenetv2_small`: MobileNetV2 inverted residual blocks on a 1x3x96x96 image;
- `gpt2_small`: 2 GPT-2 decoder blocks on hidden states of shape [1, 64, 128].

Two of the same classes at full scale (`LARGE_MODELS`), exported only where named,
never kept as test data:

- `gpt2_base`: GPT-2 small's 12 decoder blocks (d 768, 12 heads, MLP 3072) and final
  LayerNorm on hidden states [1, 64, 768], then an untied LM head of 768 x 50257
  (124 M parameters, 0.5 GB of float32);
- `vit_b16`: ViT-B/16 on a 1x3x224x224 image (d 768, 12 blocks of 12 heads, MLP
  3072, class token, 1000 classes; 86 M parameters, 0.35 GB).

Models are built in eval mode with seeded weights and exported with fixed shapes
(batch 1) by the TorchScript exporter at opset 17, whose graphs keep to plain ops
(LayerNormalization, MatMul, Softmax, Conv, Clip, ...). Usage:

    python3 bench/models.py OUT_DIR             # writes OUT_DIR/{vit_tiny,...}.onnx
    python3 bench/models.py OUT_DIR gpt2_base   # the models named, large ones included
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar

import torch
from torch import nn

OPSET = 17
"""The opset the models are exported at."""


# vit_tiny ---------------------------------------------------------------------------


class Attention(nn.Module):
    """Multi-head self attention written as explicit MatMul/Softmax (no fused SDPA)."""

    def __init__(self, dim: int, heads: int, tokens: int, causal: bool = False):
        super().__init__()
        self.heads, self.head_dim, self.tokens = heads, dim // heads, tokens
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(self.head_dim)
        mask = torch.triu(torch.full((tokens, tokens), -1e4), diagonal=1) if causal else None
        self.register_buffer("mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = self.heads * self.head_dim
        # shapes are Python ints, so the exporter writes constant Reshape shapes
        q, k, v = self.qkv(x).split(dim, dim=-1)
        q = q.reshape(1, self.tokens, self.heads, self.head_dim).transpose(1, 2)
        k = k.reshape(1, self.tokens, self.heads, self.head_dim).permute(0, 2, 3, 1)
        v = v.reshape(1, self.tokens, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k) * self.scale
        if self.mask is not None:
            scores = scores + self.mask
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.proj(out.transpose(1, 2).reshape(1, self.tokens, dim))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, dim: int, heads: int, hidden: int, tokens: int, causal: bool, gelu: str):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, tokens, causal)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(approximate=gelu), nn.Linear(hidden, dim)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class VitTiny(nn.Module):
    """A vision transformer: patch-embedding Conv, class token, 4 blocks, LayerNorm, head."""

    def __init__(self, image=64, patch=16, dim=64, heads=4, depth=4, mlp=4, classes=100):
        super().__init__()
        self.patches, self.dim = (image // patch) ** 2, dim
        tokens = self.patches + 1
        self.input_shape = (1, 3, image, image)
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(
            *[Block(dim, heads, mlp * dim, tokens, False, "none") for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x).reshape(1, self.dim, self.patches).transpose(1, 2)
        x = torch.cat([self.cls_token, x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


# mobilenetv2_small ------------------------------------------------------------------


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, relu6=True):
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if relu6:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """1x1 expand, 3x3 depthwise (stride 1 or 2), 1x1 linear project; residual if shapes match."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [conv_bn(cin, hidden, 1)] if expand != 1 else []
        layers += [
            conv_bn(hidden, hidden, 3, stride, groups=hidden),
            conv_bn(hidden, cout, 1, relu6=False),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2Small(nn.Module):
    """A stem Conv, 7 inverted residual blocks, a 1x1 Conv, global average pool, Linear."""

    BLOCKS: ClassVar = [
        (1, 16, 1),
        (6, 24, 2),
        (6, 24, 1),
        (6, 32, 2),
        (6, 32, 1),
        (6, 64, 2),
        (6, 64, 1),
    ]
    """(expansion, output channels, stride) of each block."""

    def __init__(self, image=96, classes=100):
        super().__init__()
        self.input_shape = (1, 3, image, image)
        layers: list[nn.Module] = [conv_bn(3, 16, 3, 2)]
        cin = 16
        for expand, cout, stride in self.BLOCKS:
            layers.append(InvertedResidual(cin, cout, stride, expand))
            cin = cout
        layers.append(conv_bn(cin, 256, 1))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(256, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.pool(self.features(x)).flatten(1))


# gpt2_small -------------------------------------------------------------------------


class Gpt2Small(nn.Module):
    """
    GPT-2 decoder blocks (causal attention, tanh GELU) on float hidden states [1, S, D],
    then the final LayerNorm and, if `vocab`, an untied LM head (Linear D -> vocab, no bias).
    """

    def __init__(self, tokens=64, dim=128, heads=4, depth=2, vocab=0):
        super().__init__()
        self.input_shape = (1, tokens, dim)
        self.blocks = nn.Sequential(
            *[Block(dim, heads, 4 * dim, tokens, True, "tanh") for _ in range(depth)]
        )
        self.ln_f = nn.LayerNorm(dim)
        # made last, so that the weights drawn before it stay those of the model without one
        self.lm_head = nn.Linear(dim, vocab, bias=False) if vocab else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln_f(self.blocks(x))
        return self.lm_head(x) if self.lm_head is not None else x


# building and exporting -------------------------------------------------------------

MODELS: dict[str, Callable[[], nn.Module]] = {
    "vit_tiny": VitTiny,
    "mobilenetv2_small": MobileNetV2Small,
    "gpt2_small": Gpt2Small,
}
"""The small models by name: `export_all` writes these, and tests keep them as data."""

LARGE_MODELS: dict[str, Callable[[], nn.Module]] = {
    "gpt2_base": partial(Gpt2Small, tokens=64, dim=768, heads=12, depth=12, vocab=50257),
    "vit_b16": partial(
        VitTiny, image=224, patch=16, dim=768, heads=12, depth=12, mlp=4, classes=1000
    ),
}
"""Full-scale models by name, exported only where named (hundreds of MB each)."""


def _randomize_norms(module: nn.Module, generator: torch.Generator) -> None:
    """Give BatchNorm/LayerNorm non-trivial statistics and affine parameters."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=generator) * 0.5 + 0.75)
        if isinstance(m, nn.BatchNorm2d | nn.LayerNorm):
            m.weight.data.copy_(1 + torch.randn(m.weight.shape, generator=generator) * 0.1)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=generator) * 0.1)


def build(name: str, seed: int = 0) -> nn.Module:
    """Model `name` in eval mode with weights drawn from `seed`."""
    torch.manual_seed(seed)
    model = {**MODELS, **LARGE_MODELS}[name]()
    with torch.no_grad():
        _randomize_norms(model, torch.Generator().manual_seed(seed + 1))
    return model.eval()


def example_input(model: nn.Module, seed: int = 0) -> torch.Tensor:
    return torch.randn(model.input_shape, generator=torch.Generator().manual_seed(seed))


def export(name: str, path: Path, seed: int = 0) -> Path:
    """Export model `name` to `path` (input `input`, output `output`, fixed shapes)."""
    import onnx

    model = build(name, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            model,
            (example_input(model),),
            str(path),
            input_names=["input"],
            output_names=["output"],
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    # keep the file self-contained and loadable by every onnxruntime of the last years
    proto = onnx.load(str(path))
    proto.ir_version = min(proto.ir_version, 8)
    proto.producer_name = "mobile-opt bench/models.py"
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    check_export(model, path)
    return path


def check_export(model: nn.Module, path: Path) -> None:
    """The ONNX file computes what the module does (`e2e.py --torch-cuda` times the module)."""
    import numpy as np
    import onnx.reference

    x = example_input(model, seed=1)
    with torch.no_grad():
        want = model(x).numpy()
    got = onnx.reference.ReferenceEvaluator(str(path)).run(None, {"input": x.numpy()})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                               err_msg=f"{path}: the export differs from its module")


def export_all(out_dir: str | Path, seed: int = 0) -> dict[str, Path]:
    """Export every model of `MODELS` to `out_dir/NAME.onnx`."""
    out_dir = Path(out_dir)
    return {name: export(name, out_dir / f"{name}.onnx", seed) for name in MODELS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="folder for the .onnx files")
    parser.add_argument(
        "names", nargs="*", metavar="NAME",
        help=f"models to export (default: the small ones; large: {', '.join(LARGE_MODELS)})",
    )
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default %(default)s)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in MODELS and n not in LARGE_MODELS]
    if unknown:  # argparse's choices reject an empty nargs="*" list on Python 3.11
        parser.error(f"no model {unknown[0]!r} (models: {', '.join([*MODELS, *LARGE_MODELS])})")
    out_dir = Path(args.out_dir)
    if args.names:
        paths = {n: export(n, out_dir / f"{n}.onnx", args.seed) for n in args.names}
    else:
        paths = export_all(out_dir, args.seed)
    for name, path in paths.items():
        print(f"{name}: {path} ({path.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
