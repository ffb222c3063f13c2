"""
Writes docs/results/: one page per benchmark family of bench/results/*.json, a section
per results file (one benchmark on one device) with its plots (the PNG or SVG of the
same name beside it, which the site serves through docs/gen/hooks.py) and one table of
the fields that summarise it, with the commit and date the file records. The numbers
are read from the files, never copied by hand.

It reads the JSON files only: it imports nothing from bench/.

    python3 docs/gen/results.py [--out DIR]
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path

from common import GENERATED, REPO, md_cell, parse_out, write_pages

HEADER = GENERATED.format(script="docs/gen/results.py")
RESULTS = REPO / "bench" / "results"
PLOTS = "plots"  # where docs/gen/hooks.py serves bench/results' images, beside the pages
LABELS = ["model", "shape", "kernel", "path", "section", "round"]
SKIPPED_SECTIONS = {"settings", "curves", "versions", "summary", "caps", "plans"}

# a results file's note may name the work it was recorded for ("issue 22: PoCL at ...");
# the file keeps its record as written, the page leaves the name out
_WORK_ITEM = [
    (re.compile(r"\s*\((?:issue|Issue) \d+\)"), ""),
    (re.compile(r"\((?:issue|Issue) \d+[;,]\s*"), "("),
    (re.compile(r"[;,]\s*(?:issue|Issue) \d+\)"), ")"),
    (re.compile(r",\s*(?:issue|Issue) \d+\b"), ""),
    (re.compile(r"\b(?:issue|Issue) \d+'s\s+"), "the "),
    (re.compile(r"\b(?:issue|Issue) \d+:?\s*"), ""),
]


def note_text(text: str) -> str:
    """A recorded value as a page shows it: without the work item it names."""
    for pattern, replacement in _WORK_ITEM:
        text = pattern.sub(replacement, text)
    return text


def _ratio(a: object, b: object) -> float | None:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return a / b
    return None


@dataclass(frozen=True)
class Family:
    """How a family of results files is summarised."""

    prefix: str
    title: str
    about: str
    columns: list[str]
    """fnmatch patterns of the flattened fields to show, in order."""
    source: str = "rows"
    """`rows`, `summary` (a row per dict in `summary`) or `sections` (per top-level dict)."""
    always: list[str] = field(default_factory=list)
    """patterns shown whenever a row has the field, even where every value is null."""
    derive: Callable[[dict], dict] | None = None
    images: list[str] = field(default_factory=list)
    """other image prefixes (folders included) shown on this page."""


def _kernels_derived(row: dict) -> dict:
    gflop, ms = row.get("gflop"), row.get("ours_ms")
    return {"ours_gflops": gflop / ms * 1e3 if gflop and ms else None}


def _flashmem_derived(row: dict) -> dict:
    return {"memory_x": _ratio(row.get("preload.peak"), row.get("streamed.peak")),
            "integrated_x": _ratio(row.get("streamed.integrated_s"),
                                   row.get("preload.integrated_s")),
            "execution_x": _ratio(row.get("streamed.execution_s"),
                                  row.get("preload.execution_s"))}


TORCH = ["torch_cuda_ms", "torch_cuda_gpu_ms", "torch_compile_ms", "torch_compile_gpu_ms",
         "torch_autotune_ms", "torch_autotune_gpu_ms", "torch_cudagraphs_ms",
         "torch_cudagraphs_gpu_ms", "ours_vs_torch", "ours_vs_best_torch"]

FAMILIES = [
    Family("e2e", "End to end",
           "Whole models through `mobile-run`'s default pipeline against onnxruntime on the "
           "host CPU and, on a GPU, PyTorch eager and torch.compile's three modes "
           "(`bench/e2e.py`). Times are medians in ms; `ours_vs_*` are our time over theirs.",
           ["model", "round", "status", "ours_ms", "ours_gpu_ms", "ours_kernel_ms", "kernels",
            "ort_ms", "ours_vs_ort", *TORCH, "rel_err"],
           always=TORCH[2:], images=["roofline-"]),
    Family("kernels", "Single kernels",
           "Single MatMul and Conv nodes through the default pipeline beside onnxruntime or "
           "PyTorch (`bench/kernels.py`); times in ms, `ours_gflops` from the node's FLOPs.",
           ["shape", "op", "gflop", "ours_ms", "ours_gflops", "ours_spread", "direct_ms",
            "ort_ms", "torch_ms", "rel_err", "error"], derive=_kernels_derived),
    Family("select", "Layout selection",
           "Every `select-layouts` solver on the benchmark graphs, and the builds of `local` "
           "and `gcd2` timed side by side (`bench/select_layouts.py`).",
           ["model", "kernel", "target", "solver", "nodes", "cost", "solve_s", "gap",
            "measured_vs_local", "noise", "transforms", "kernels", "correct",
            "total_us.*", "local", "gcd2"]),
    Family("tmmodel", "Kernel configurations: TMModel and CDMPP",
           "The cost models' choice of each kernel's configuration over the exhaustive "
           "search's best (geometric means; `bench/tmmodel.py`, `bench/tmmodel_recheck.py`).",
           ["section", "kernels", "model_over_exhaustive_geomean", "cdmpp_over_exhaustive_geomean",
            "search_over_exhaustive_geomean", "held_out_*_geomean", "*_now_geomean",
            "top1_accuracy", "cdmpp_top1_accuracy", "tuning_time_ratio",
            "cdmpp_tuning_time_ratio", "best_survives_fraction"], source="summary"),
    Family("cdmpp", "Learned cost model (CDMPP)",
           "Test error of the CDMPP predictor and its gradient-boosting baseline per split, "
           "and its adaptation to new models and devices (`bench/cdmpp.py`, "
           "`mobile-learn adapt`). MAPE as a fraction.",
           ["section", "tasks", "seeds", "members", "*test_mape*", "*pick_over_best*", "*_wins",
            "mape.test", "best_epoch"], source="sections"),
    Family("flashmem", "Streaming under a memory budget",
           "Preload-all against streamed weights within a budget (`bench/flashmem.py` and its "
           "companions): peak memory, integrated latency (load and first run) and execution "
           "latency in s; `memory_x` is preload-all's peak over streamed's, the other `_x` "
           "streamed over preload-all.",
           ["model", "path", "round", "budget", "least_budget", "memory_x", "integrated_x",
            "execution_x", "preload.integrated_s", "streamed.integrated_s",
            "preload.execution_s", "streamed.execution_s", "*@*.execution_s",
            "solver.status", "solver.seconds", "overlap.ratio", "seconds", "gb_per_s",
            "*.median_ms", "*.timeline.span_ms", "*.timeline.idle_on_copy_ms"],
           derive=_flashmem_derived),
    Family("zoo", "The real-model set",
           "Models others wrote, run through `mobile-run` as a user would (`bench/zoo.py`).",
           ["model", "group", "target", "status", "rel_err", "lsb_err", "ours_ms", "ort_ms",
            "ratio", "tool_s"]),
    Family("hvx_kernels", "DSP kernels",
           "DSP kernels in every layout under QEMU: the cycle model's packets against the "
           "measured ones (`bench/hvx_kernels.py`).",
           ["kernel", "shape", "layout", "instruction", "predicted_packets", "measured_packets",
            "predicted_cycles", "exact"]),
    Family("sda", "VLIW packing",
           "Packets per loop body of each packer and of LLVM's packetizer, beside the lower "
           "bound any packing could reach (`bench/sda.py`).",
           ["kernel", "shape", "layout", "bound.packets", "packings.*.body_packets",
            "llvm.body_packets", "packings.sda.kernel_cycles", "packings.sda.exact"]),
    Family("ace", "Address-code hoisting", "Models with and without `ace` (`bench/ace.py`).",
           ["model", "without_ms", "with_ms", "speedup"]),
    Family("tiling", "Configured against fixed kernels",
           "Models built with TMModel's configurations and with the lowering's fixed ones "
           "(`bench/tiling.py`).", ["model", "fixed_ms", "tmmodel_ms", "speedup"]),
    Family("host-phases", "Host phases", "A run's host-side phases in ms "
           "(`bench/host_phases.py`).", ["model", "run", "pack", "upload", "enqueue", "drain",
                                         "kernels", "download", "unpack", "launches"]),
]


def family_of(stem: str) -> Family | None:
    found = [f for f in FAMILIES if stem == f.prefix or stem.startswith(f.prefix + "-")]
    return max(found, key=lambda f: len(f.prefix)) if found else None


def flatten(value: dict, prefix: str = "", depth: int = 0) -> dict:
    """Scalars (and two-number ranges) of nested dicts as `a.b.c`."""
    out: dict = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and depth < 2:
            out.update(flatten(item, name + ".", depth + 1))
        elif isinstance(item, list) and len(item) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in item):
            out[name] = tuple(item)
        elif not isinstance(item, (dict, list)):
            out[name] = item
    return out


def rows_of(doc: dict, family: Family) -> list[dict]:
    """The rows a family's table has, each flattened, with its label first."""
    if family.source == "summary" and isinstance(doc.get("summary"), dict):
        return [{"section": k, **flatten(v)} for k, v in doc["summary"].items()
                if isinstance(v, dict)]
    if isinstance(doc.get("rows"), list):
        return [flatten(r) for r in doc["rows"] if isinstance(r, dict)]
    for key in ("rounds", "runs"):
        if isinstance(doc.get(key), list):
            return [{"round": i + 1, **flatten(r),
                     "commit": r.get("commit", run.get("commit")),
                     "date": r.get("date", run.get("date"))}
                    for i, run in enumerate(doc[key]) for r in run.get("rows", [])]
        if isinstance(doc.get(key), dict):
            return [{"section": k, **flatten(v)} for k, v in doc[key].items()
                    if isinstance(v, dict)]
    if isinstance(doc.get("models"), dict):
        return [{"model": k, **flatten(v)} for k, v in doc["models"].items()]
    if family.source == "sections":
        sections = [{"section": k, **flatten(v)} for k, v in doc.items()
                    if isinstance(v, dict) and k not in SKIPPED_SECTIONS]
        if sections:
            return sections
    return [{"section": "all", **flatten(doc)}]


def columns_of(rows: list[dict], family: Family) -> list[str]:
    keys = list(dict.fromkeys(k for r in rows for k in r))

    def matching(patterns: list[str], kept: Callable[[str], bool]) -> list[str]:
        return list(dict.fromkeys(k for p in patterns for k in keys
                                  if fnmatch.fnmatchcase(k, p) and kept(k)))

    def filled(key: str) -> bool:
        return any(r.get(key) is not None for r in rows)

    always = set(matching(family.always, lambda k: True))
    chosen = matching(family.columns, lambda k: filled(k) or k in always)
    label = [k for k in LABELS if k in keys][:1]
    rest = [c for c in chosen if c not in LABELS]
    if len(rest) < 2:  # a file of another shape: its scalar fields
        rest = [k for k in keys if k not in LABELS and k not in ("commit", "date")
                and filled(k) and not isinstance(next((r[k] for r in rows if k in r), ""), str)]
        rest = rest[:10]
    return label + rest


def fmt(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):
        return "–".join(fmt(v) for v in value)
    text = note_text(str(value))
    return md_cell(text if len(text) <= 60 else text[:57] + "...")


def measured_at(row: dict, doc: dict) -> str:
    commit = row.get("commit") or row.get("code") or doc.get("commit")
    date = row.get("date") or doc.get("date")
    parts = [f"`{commit}`" if commit else "", str(date)[:10] if date else ""]
    return ", ".join(p for p in parts if p) or "not recorded"


def images_for(stem: str) -> list[Path]:
    return sorted(p for p in RESULTS.glob(stem + ".*") if p.suffix in (".png", ".svg"))


def section(path: Path, family: Family) -> list[str]:
    doc = json.loads(path.read_text())
    rows = rows_of(doc, family)
    for row in rows:
        if family.derive:
            row.update(family.derive(row))
    columns = columns_of(rows, family)
    device = doc.get("device") or doc.get("then_device") or "device not recorded"
    lines = [f"## {path.stem}", "", f"`bench/results/{path.name}` on {md_cell(device)}.", ""]
    for image in images_for(path.stem):
        lines += [f"![{path.stem}]({PLOTS}/{image.name})", ""]
    header = [c.replace("_", "\\_") for c in columns] + ["measured at"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        cells = [fmt(row.get(c)) for c in columns] + [measured_at(row, doc)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    analysis = RESULTS / f"{path.stem}.md"  # a benchmark's own report of the file, if any
    if analysis.exists():
        lines += [analysis.read_text().rstrip(), ""]
    summary = doc.get("summary")
    if family.source != "summary" and isinstance(summary, dict):
        scalars = {k: v for k, v in flatten(summary).items() if "." not in k}
        if scalars:
            lines += ["Summary: " + "; ".join(f"`{k}` {fmt(v)}" for k, v in scalars.items())
                      + ".", ""]
    return lines


def pages() -> dict[str, str]:
    files: dict[str, list[Path]] = {}
    for path in sorted(RESULTS.glob("*.json")):
        family = family_of(path.stem)
        files.setdefault(family.prefix if family else "other", []).append(path)
    out = {}
    index = [HEADER + "# Results", "",
             "Measured results, generated from the JSON files under `bench/results/` "
             "(the benchmarks' own output; [Benchmarks](../guide/benchmarks.md) says how to "
             "run them). Each section is one benchmark on one device; *measured at* is the "
             "commit and date the file records. Machines vary from run to run; compare rows "
             "of one file.", "", "| page | results files |", "| --- | --- |"]
    generic = Family("other", "Other results", "Results files of other benchmarks.", [])
    for family in [*FAMILIES, generic]:
        paths = files.get(family.prefix, [])
        if not paths:
            continue
        lines = [HEADER + f"# {family.title}", "", family.about, ""]
        for path in paths:
            lines += section(path, family)
        extra = sorted(p for prefix in family.images for p in RESULTS.glob(prefix + "*/*")
                       if p.suffix in (".png", ".svg"))
        if extra:
            lines += ["## Other plots", ""]
            lines += [f"![{p.stem}]({PLOTS}/{p.parent.name}/{p.name})" for p in extra]
            lines.append("")
        out[f"{family.prefix}.md"] = "\n".join(lines)
        index.append(f"| [{family.title}]({family.prefix}.md) | {len(paths)} |")
    out["index.md"] = "\n".join(index)
    return out


if __name__ == "__main__":
    write_pages(parse_out("docs/results", __doc__), pages())
