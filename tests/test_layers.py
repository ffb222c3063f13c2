"""
The layers of DESIGN.md hold: import-linter's contract in pyproject.toml is kept
(`lint-imports`, as `make test` runs it), and bench/ and tests/, which sit above the
package, do not reach into each other (what both need lives in the package).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

LOADERS = {"spec_from_file_location", "SourceFileLoader", "run_path", "import_module",
           "__import__", "exec"}
"""Calls that load a file or a name as a module (`importlib.util.spec_from_file_location`,
`runpy.run_path`, ...); `sys.path.insert/append/extend` put a folder on the import path."""


def test_import_contract_is_kept():
    # a fresh interpreter: the contract is checked on the package as a user imports it
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, "lint-imports: a broken contract\n" + done.stdout + done.stderr


def _modules(folder: Path) -> set[str]:
    """The names a script or package of `folder` imports as when `folder` is on the path."""
    packages = {p.parent.name for p in folder.glob("*/__init__.py")}
    return {p.stem for p in folder.glob("*.py")} | packages


def _called(call: ast.Call) -> str:
    """`f` for `f(...)` or `x.f(...)`; `sys.path.f` for the import path's methods."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if not isinstance(func, ast.Attribute):
        return ""
    owner = func.value
    on_path = (isinstance(owner, ast.Attribute) and owner.attr == "path"
               and isinstance(owner.value, ast.Name) and owner.value.id == "sys")
    return f"sys.path.{func.attr}" if on_path else func.attr


def reaches(path: Path, folder: str, modules: set[str]) -> list[str]:
    """
    Where the Python file `path` imports a module of the other tree (`folder`, whose
    scripts import as `modules`), or names that tree in a call that loads code or
    extends the import path: one entry per line, as `file:line: what`.
    """
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [(node.lineno, f"imports {name}") for name in names
                  if name.split(".")[0] in {folder, *modules}]
        if isinstance(node, ast.Call):
            called = _called(node)
            strings = {n.value for a in [*node.args, *(k.value for k in node.keywords)]
                       for n in ast.walk(a)
                       if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if (called in LOADERS or called.startswith("sys.path.")) and any(
                    s == folder or s.startswith(f"{folder}/") for s in strings):
                found.append((node.lineno, f"{called}(...{folder}...)"))
    return [f"{shown}:{line}: {what}" for line, what in sorted(found)]


@pytest.mark.parametrize("tree, other", [("bench", "tests"), ("tests", "bench")])
def test_bench_and_tests_do_not_import_each_other(tree: str, other: str):
    modules = _modules(REPO / other)
    found = [hit for path in sorted((REPO / tree).rglob("*.py"))
             for hit in reaches(path, other, modules)]
    assert not found, f"{tree}/ reaches into {other}/:\n" + "\n".join(found)


def test_the_check_sees_a_reach(tmp_path: Path):
    """The walk above finds each way a file can load the other tree, and only those."""
    script = tmp_path / "script.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "sys.path.insert(0, str(Path(__file__).parent.parent / 'tests'))\n"
        "from hvx_harness import run\n"
        "import importlib.util\n"
        "importlib.util.spec_from_file_location('e2e', 'bench/e2e.py')\n"
        "subprocess.run([sys.executable, 'bench/e2e.py'])\n"
        "options.append('tests')\n")
    assert [h.split(": ", 1)[1] for h in reaches(script, "tests", {"hvx_harness"})] == [
        "sys.path.insert(...tests...)", "imports hvx_harness"]
    assert [h.split(": ", 1)[1] for h in reaches(script, "bench", {"e2e"})] == [
        "spec_from_file_location(...bench...)"]
