"""
A small transformer encoder on token ids, as torch exports it: `nn.Embedding` of
int64 ids plus a learned position embedding, a 2-layer `nn.TransformerEncoder`
(d_model 32, 4 heads, feed-forward 64, batch_first) with a key-padding mask
(`ids == 0`), and a linear head over the vocabulary of 100. Weights are seeded;
the ids are [2, 16].

It is committed as `tests/models/encoder_emb.onnx` (about 100 kB), so that the
tests see what the exporter writes for embeddings and masks (a run-time Gather of
the ids, Equal and Where on them, the attention's Expand of the mask) without torch.
Exported by torch's dynamo exporter at its default opset. Usage:

    /opt/zoo/bin/python bench/encoder_emb.py tests/models/encoder_emb.onnx
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

VOCAB, TOKENS, BATCH = 100, 16, 2


class EncoderEmb(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64, depth: int = 2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.position = nn.Embedding(TOKENS, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, hidden, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.embed(ids) + self.position(positions)
        return self.head(self.encoder(x, src_key_padding_mask=ids.eq(0)))


def example_ids(seed: int = 0) -> torch.Tensor:
    """Ids in 1..VOCAB-1, the second row padded (0) after 11 tokens."""
    ids = torch.randint(1, VOCAB, (BATCH, TOKENS), generator=torch.Generator().manual_seed(seed))
    ids[1, 11:] = 0
    return ids


def export(path: str, seed: int = 0) -> None:
    import onnx

    torch.manual_seed(seed)
    model = EncoderEmb().eval()
    with torch.no_grad():
        torch.onnx.export(model, (example_ids(seed),), path, input_names=["ids"],
                          output_names=["logits"], dynamo=True, external_data=False)
    proto = onnx.load(path)
    proto.producer_name = "mobile-opt bench/encoder_emb.py"
    onnx.checker.check_model(proto)
    onnx.save(proto, path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    export(args.out, args.seed)
