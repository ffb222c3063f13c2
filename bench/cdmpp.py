"""
CDMPP's evaluation (issue 23) on a dataset of `bench/cdmpp_data.py`: so far the
gradient-boosting baseline on the pooled compact ASTs (`cdmpp_features.pooled`, with the
device's features), on a random 8:1:1 split by sample and on a split that holds out the
tasks of some models (`--hold-out`). Latencies are learnt as their logarithm; the error is
the MAPE of the test set. Kernels whose runs spread by more than `STEADY` of their
median are under the noise floor and left out; the floor itself (`noise_floor`, the
median run-to-run spread) is reported.

    python3 bench/cdmpp.py bench/data/cdmpp-pocl.npz --hold-out light_resnet50,mobilenetv2_small,gpt2_small

Needs scikit-learn (`pip install -e .[learn]`). Results: a table and
`bench/results/cdmpp-<device>.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import import_repo_package  # noqa: E402

import_repo_package()

from mobile_opt.models.cdmpp_features import pooled  # noqa: E402


def load(path: Path) -> dict:
    data = dict(np.load(path, allow_pickle=False))
    offsets = data["leaf_offsets"]
    data["pooled"] = np.stack([pooled(data["leaves"][a:b])
                               for a, b in zip(offsets[:-1], offsets[1:])])
    return data


STEADY = 0.1
"""A kernel whose runs' median absolute deviation is over this share of its median is
under the noise floor: flagged, and left out of training and scoring."""


def noise_floor(data: dict) -> float:
    """The median run-to-run spread (median absolute deviation, seconds) over the kernels."""
    return float(np.median(data["spread"] * data["latency"]))


def mape(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.abs(predicted - actual) / actual))


def gbdt(train_x, train_y, test_x, seed: int) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingRegressor

    model = HistGradientBoostingRegressor(max_iter=600, learning_rate=0.08, random_state=seed)
    model.fit(train_x, np.log(train_y))
    return np.exp(model.predict(test_x))


def evaluate(data: dict, train: np.ndarray, test: np.ndarray, seed: int) -> dict:
    if not train.any() or not test.any():
        return {"train": int(train.sum()), "test": int(test.sum()), "gbdt_mape": None}
    x = np.hstack([data["pooled"], np.tile(data["device_features"], (len(data["pooled"]), 1))])
    y = data["latency"]
    predicted = gbdt(x[train], y[train], x[test], seed)
    return {"train": int(train.sum()), "test": int(test.sum()),
            "gbdt_mape": mape(predicted, y[test])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--hold-out", default="light_resnet50,mobilenetv2_small,gpt2_small",
                        help="models whose tasks form the cross-model test set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out")
    args = parser.parse_args()
    data = load(args.dataset)
    floor = noise_floor(data)
    above = data["spread"] < STEADY
    rng = np.random.default_rng(args.seed)
    split = rng.permutation(len(above)) % 10  # 8:1:1
    random_split = evaluate(data, above & (split < 8), above & (split == 9), args.seed)
    held = np.isin(data["source"], args.hold_out.split(","))
    cross_model = evaluate(data, above & ~held, above & held, args.seed)
    device = str(data["device"])
    result = {"device": device, "dataset": str(args.dataset), "kernels": int(len(above)),
              "tasks": len(json.loads(str(data["tasks"]))), "noise_floor_s": floor,
              "unsteady": int((~above).sum()),
              "median_spread": float(np.median(data["spread"])),
              "random_split": random_split,
              "cross_model": {"held_out": args.hold_out.split(","), **cross_model}}
    print(json.dumps(result, indent=1))
    out = Path(args.out or BENCH_DIR / "results" /
               f"cdmpp-{args.dataset.stem.removeprefix('cdmpp-')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
