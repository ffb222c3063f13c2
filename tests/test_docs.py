"""
The documentation holds: the generated pages (dialect and CLI references, results) are
what their generators write now, no user-facing page speaks of development history, and
every example marked runnable (a `<!-- run -->` line before its code block) runs.

The generators run as scripts in a child process (`docs/gen/*.py --out DIR`), as
`make docs-gen` runs them.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

GENERATED = {
    "dialects": "docs/reference/dialects",
    "cli": "docs/reference/cli",
    "results": "docs/results",
}


def _tree(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_pages_are_current(name: str, tmp_path: Path):
    out = tmp_path / name
    env = dict(os.environ, MOBILE_OPT_WEIGHT_DIR=str(tmp_path / "weights"))
    done = subprocess.run([sys.executable, f"docs/gen/{name}.py", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    committed = REPO / GENERATED[name]
    new, old = _tree(out), _tree(committed)
    stale = sorted(new ^ old) + sorted(
        f for f in new & old if not filecmp.cmp(out / f, committed / f, shallow=False))
    assert not stale, (f"{GENERATED[name]} is stale (run `make docs-gen` and commit): "
                       + ", ".join(stale))


def user_pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


HISTORY = [
    (re.compile(r"\bissues?\s*#?\d+", re.I), "an issue number"),
    (re.compile(r"\bsessions?\b", re.I), "a session"),
    (re.compile(r"\b(?:PR|pull request)\s*#?\d+", re.I), "a pull request"),
    (re.compile(r"\b(?:at|since|before|after|from) [0-9a-f]{7,40}\b"), "a commit as a time"),
    (re.compile(r"\bcommits?\b", re.I), "commits"),
]
"""What a user page must not speak of. A results page's `measured at` column (and the
results index that explains it) names the commit a file records: the one exception."""


def history(path: Path, text: str) -> list[str]:
    results = path.is_relative_to(DOCS / "results")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in HISTORY:
            if results and what in ("commits", "a commit as a time"):
                continue
            match = pattern.search(line)
            if match:
                found.append(f"{path.relative_to(REPO)}:{number}: {what}: {match.group(0)!r}")
    return found


def test_user_pages_have_no_history():
    found = [hit for page in user_pages() for hit in history(page, page.read_text())]
    assert not found, "development history in user docs:\n" + "\n".join(found)


@pytest.mark.parametrize("text, hits", [
    ("fixed in issue 21", 1), ("see Issue #3", 1), ("this session's run", 1),
    ("faster since 1fc351b", 1), ("the commit before", 1), ("an issue with PoCL", 0),
    ("sessionless", 0), ("at 0.5 ms", 0),
])
def test_history_check_finds_what_it_should(text: str, hits: int):
    assert len(history(REPO / "README.md", text)) == hits


AUTODOC = re.compile(r"^::: ([\w.]+)\s*$", re.M)
"""A line that has mkdocstrings render an object from its docstrings."""

_DOCSTRINGS = """
import importlib, inspect, json, sys

def doc(value):
    return inspect.getdoc(value) or ""

found = {}
for name in sys.argv[1:]:
    module, _, attribute = name.rpartition(".")
    value = getattr(importlib.import_module(module), attribute)
    found[name] = doc(value)
    if inspect.isclass(value):  # and its public methods and properties
        for member, item in vars(value).items():
            if not member.startswith("_") and (inspect.isfunction(item)
                                               or isinstance(item, property)):
                found[f"{name}.{member}"] = doc(item)
print(json.dumps(found))
"""


def rendered_docstrings(names: list[str]) -> dict[str, str]:
    """The docstrings mkdocstrings renders for the objects `names`, of this tree's package
    (imported in a child process run from the tree's root), with their public members'."""
    done = subprocess.run([sys.executable, "-c", _DOCSTRINGS, *names], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


API_PAGES = [page for page in sorted(DOCS.rglob("*.md")) if AUTODOC.search(page.read_text())]


def test_api_reference_is_documented_without_history():
    assert API_PAGES, "no page renders docstrings (reference/api.md)"
    for page in API_PAGES:
        names = AUTODOC.findall(page.read_text())
        docs = rendered_docstrings(names)
        assert not [n for n, text in docs.items() if not text.strip()], \
            f"{page.relative_to(REPO)} renders objects without a docstring"
        found = [f"{name} (on {page.relative_to(REPO)}): {hit.split(': ', 1)[1]}"
                 for name, text in docs.items() for hit in history(page, text)]
        assert not found, "development history in docstrings:\n" + "\n".join(found)


RUN_MARK = "<!-- run -->"
FENCE = re.compile(r"^```(\w+)\s*$")


def runnable_blocks(path: Path) -> list[tuple[str, str, str]]:
    """(where, language, code) of each code block right after a `<!-- run -->` line."""
    lines = path.read_text().splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != RUN_MARK:
            continue
        fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        where = f"{path.relative_to(REPO)}:{i + 1}"
        assert fence, f"{where}: {RUN_MARK} is not followed by a code block"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        blocks.append((where, fence.group(1), "\n".join(lines[i + 2:end]) + "\n"))
    return blocks


EXAMPLES = [block for page in user_pages() for block in runnable_blocks(page)]


def test_readme_quick_start_is_runnable():
    assert any(where.startswith("README.md") for where, _, _ in EXAMPLES)


def _shims(folder: Path) -> Path:
    """The package's console scripts, each running this tree's module."""
    folder.mkdir()
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        script = folder / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {target.split(":")[0]} "$@"\n')
        script.chmod(0o755)
    return folder


@pytest.mark.parametrize("where, language, code", EXAMPLES, ids=[w for w, _, _ in EXAMPLES])
def test_runnable_example(where: str, language: str, code: str, tmp_path: Path):
    if "hexagon" in code and shutil.which("qemu-hexagon") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("qemu-hexagon is missing (make install-apt installs it)")
        pytest.skip("qemu-hexagon is not installed")
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "models").symlink_to(REPO / "tests" / "models")
    env = dict(os.environ, PYTHONPATH=str(REPO),
               PATH=f"{_shims(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}",
               MOBILE_OPT_WEIGHT_DIR=str(tmp_path / "weights"))
    if language in ("bash", "sh"):
        command = ["bash", "-euo", "pipefail", "-c", code]
    elif language == "python":
        command = [sys.executable, "-c", code]
    else:
        pytest.fail(f"{where}: cannot run a {language} block")
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"{where} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
