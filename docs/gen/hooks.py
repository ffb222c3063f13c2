"""
MkDocs hook: serves the plots under bench/results/ (PNG and SVG, folders included) as
docs/results/plots/..., so the generated results pages show them without a second copy
in the repository.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def on_files(files: Files, config) -> Files:
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix in (".png", ".svg"):
            uri = "results/plots/" + path.relative_to(RESULTS).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
