"""
No module of the package imports itself back through others: grimp's import graph of
`mobile_opt` (imports inside functions and under TYPE_CHECKING count too) has no cycle.
import-linter's layers contract keeps folders apart; this keeps the modules of one
folder from tying each other in circles.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]

NESTED = "mobile_opt.mobile_opt"
"""The tree's `mobile_opt -> .` link, which grimp walks into again: the same files."""


def import_cycles(imports: Mapping[str, Set[str]]) -> list[list[str]]:
    """
    Each strongly connected group of two or more modules (Tarjan's algorithm, iterative),
    as one cycle through all of them where it finds one: the modules, the first repeated
    at the end, sorted.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(imports.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(_cycle(imports, set(group)) for group in groups)


def _cycle(imports: Mapping[str, Set[str]], group: set[str]) -> list[str]:
    """A closed path within `group` from its first module back to it (breadth first)."""
    start = min(group)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(imports.get(node, ())):
                if step == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [*reversed(path), start]
                if step in group and step not in came:
                    came[step] = node
                    following.append(step)
        frontier = following
    return sorted(group)


def package_imports() -> dict[str, set[str]]:
    """Each module of `mobile_opt` and the package's modules it imports directly (run from
    the tree's root, where `mobile_opt` is this tree)."""
    graph = grimp.build_graph("mobile_opt", include_external_packages=False, cache_dir=None)
    modules = {m for m in graph.modules if not m.startswith(NESTED)}
    return {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}


def test_the_package_has_no_import_cycle(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    cycles = import_cycles(package_imports())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("imports, cycles", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}, "e": {"a", "c"}},
     [["a", "b", "a"], ["c", "d", "c"]]),
    ({"a": {"a"}}, []),  # a module naming itself is no circle between modules
])
def test_the_search_finds_each_cycle(imports, cycles):
    assert import_cycles(imports) == cycles
