"""
CDMPP against its gradient-boosting baseline (issue 23) on a dataset of
`bench/cdmpp_data.py`, on the same splits (`mobile_learn.splits`): a random 8:1:1 split
by kernel, and a cross-model split that holds out every kernel of some models
(`--hold-out`; the predictor not fine-tuned on them). The baseline is scikit-learn's
histogram gradient boosting on the pooled compact ASTs (`cdmpp_features.pooled`) and the
device's features, fitted to log latency; CDMPP is `mobile-learn`'s training. Both score
the test set's MAPE. Kernels whose runs spread by more than `STEADY` of their median are
under the noise floor and left out; the floor itself (the median run-to-run spread) is
reported.

    python3 bench/cdmpp.py bench/data/cdmpp-pocl.npz

Needs the `learn` extra (scikit-learn, scipy, torch). Results: a table,
`bench/results/cdmpp-<device>.json` and the learning curves beside it (`.png`); with
`--model`, the random split's trained weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import import_repo_package  # noqa: E402

import_repo_package()

from mobile_opt.models.cdmpp_features import pooled  # noqa: E402
from mobile_opt.tools.mobile_learn import (  # noqa: E402
    STEADY,
    Settings,
    fit,
    load_dataset,
    splits,
)

HOLD_OUT = "light_resnet50,mobilenetv2_small,gpt2_small"
"""The cross-model test set: ResNet-50, MobileNetV2 and a GPT-style decoder block."""


def noise_floor(data: dict) -> float:
    """The median run-to-run spread (median absolute deviation, seconds) over the kernels."""
    return float(np.median(data["spread"] * data["latency"]))


def mape(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.abs(predicted - actual) / actual))


def gbdt_mape(data: dict, parts: dict[str, np.ndarray], seed: int) -> float:
    from sklearn.ensemble import HistGradientBoostingRegressor

    x = np.stack([np.concatenate([pooled(a.leaves), data["device_features"]])
                  for a in data["asts"]])
    y = data["latency"]
    model = HistGradientBoostingRegressor(max_iter=600, learning_rate=0.08, random_state=seed)
    model.fit(x[parts["train"]], np.log(y[parts["train"]]))
    return mape(np.exp(model.predict(x[parts["test"]])), y[parts["test"]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--hold-out", default=HOLD_OUT)
    parser.add_argument("--epochs", type=int, default=Settings.epochs)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", type=Path, help="save the random split's weights here")
    parser.add_argument("--out")
    args = parser.parse_args()
    data = load_dataset(args.dataset)
    settings = replace(Settings(), epochs=args.epochs, seed=args.seed)
    rows, curves = {}, {}
    for name, hold_out in (("random", []), ("cross_model", args.hold_out.split(","))):
        parts = splits(data, hold_out, args.seed)
        arrays, trained = fit(data, parts, settings, f"cdmpp {name}")
        rows[name] = {"held_out": hold_out, "kernels": trained["kernels"],
                      "gbdt_test_mape": gbdt_mape(data, parts, args.seed),
                      "cdmpp_test_mape": trained["mape"]["test"],
                      "cdmpp_valid_mape": trained["mape"]["valid"],
                      "cdmpp_train_mape": trained["mape"]["train"],
                      "best_epoch": trained["best_epoch"]}
        curves[name] = trained["curve"]
        if name == "random" and args.model:
            np.savez_compressed(args.model, **arrays)
    device = str(data["device"])
    result = {"device": device, "dataset": str(args.dataset), "kernels": len(data["latency"]),
              "tasks": len(json.loads(str(data["tasks"]))),
              "noise_floor_s": noise_floor(data),
              "unsteady": int((data["spread"] >= STEADY).sum()),
              "settings": asdict(settings),
              **rows, "curves": curves}
    for name, row in rows.items():
        print(f"{name:12s} test kernels {row['kernels']['test']:5d}  "
              f"CDMPP MAPE {row['cdmpp_test_mape']:.3f}  gradient boosting "
              f"{row['gbdt_test_mape']:.3f}")
    out = Path(args.out or BENCH_DIR / "results" /
               f"cdmpp-{args.dataset.stem.removeprefix('cdmpp-')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    plot(curves, out.with_suffix(".png"), device.split(" [")[0])
    return 0


def plot(curves: dict[str, list[dict]], path: Path, device: str) -> None:
    """Validation MAPE by epoch, one line a split."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, curve in curves.items():
        axes.plot([c["epoch"] for c in curve], [c["valid_mape"] for c in curve], label=name)
    axes.set_yscale("log")
    axes.set_xlabel("epoch")
    axes.set_ylabel("validation MAPE")
    axes.set_title(f"CDMPP on {device}")
    axes.grid(True, color="0.9")
    axes.legend()
    figure.savefig(path)


if __name__ == "__main__":
    sys.exit(main())
