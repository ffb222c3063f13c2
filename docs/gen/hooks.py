"""
MkDocs hooks: serve the plots under bench/results/ (PNG and SVG, folders included) as
docs/results/plots/..., so the generated results pages show them without a second copy
in the repository; and lay out the package `mobile_opt` for mkdocstrings (the API
reference, reference/api.md) without the tree's link `mobile_opt -> .`.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"

PACKAGE_VIEW = REPO / "build" / "api-docs"
"""The folder mkdocs.yml gives mkdocstrings as its `paths`: it holds `mobile_opt/`, a
link to each of the package's top-level folders and modules."""


def package_entries() -> list[str]:
    """The tree's entries that make up the package, as pyproject.toml installs it: the
    top-level folders of its packages and the modules beside them."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = project["tool"]["setuptools"]["packages"]
    folders = {name.split(".")[1] for name in packages if name.count(".") >= 1}
    return sorted(folders | {p.name for p in REPO.glob("*.py")})


@event_priority(100)  # before mkdocstrings's on_config reads `paths`
def on_config(config):
    # griffe walks a package's folder following links, and `mobile_opt -> .` would lead
    # it round the tree until the system's link limit; a view without that link has none
    view = PACKAGE_VIEW / "mobile_opt"
    shutil.rmtree(PACKAGE_VIEW, ignore_errors=True)
    view.mkdir(parents=True)
    for name in package_entries():
        (view / name).symlink_to(REPO / name)
    return config


def on_files(files: Files, config) -> Files:
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix in (".png", ".svg"):
            uri = "results/plots/" + path.relative_to(RESULTS).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
