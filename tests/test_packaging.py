"""The distribution maps the root folders onto `mobile_opt` for both install modes."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_PACKAGED = {"tests", "bench", "build", ".ci"}


def _declared_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def test_every_python_folder_is_packaged():
    found = {"mobile_opt"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts and (rel.parts[0] in NOT_PACKAGED or rel.parts[0].startswith(".")):
            continue
        found.add(".".join(("mobile_opt", *rel.parts)))
    assert found == _declared_packages()


def test_universe_entry_point_is_published():
    plugins = {e.name: e for e in entry_points(group="xdsl.universe")}
    universe = plugins["mobile_opt"].load()
    assert "onnx" in universe.all_dialects
    assert {"onnx-fold-constants", "onnx-fold-batchnorm", "onnx-fuse"} <= set(universe.all_passes)


def test_non_editable_install_imports(tmp_path):
    """`pip install .` (not -e) must give `import mobile_opt.dialects.onnx`."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
         "--target", str(target), str(ROOT)],
        check=True,
        capture_output=True,
    )
    assert (target / "mobile_opt" / "dialects" / "onnx" / "nn.py").is_file()
    # data files the code reads: the assembly grammar, the shipped device profiles and
    # predictors
    assert (target / "mobile_opt" / "backends" / "hexagon" / "hexagon.lark").is_file()
    assert (target / "mobile_opt" / "models" / "profiles" / "adreno740.json").is_file()
    assert (target / "mobile_opt" / "models" / "weights" / "cdmpp-pocl.npz").is_file()
    code = "import mobile_opt.dialects.onnx as d, mobile_opt.frontend.onnx_import; print(d.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert out.startswith(str(target))
