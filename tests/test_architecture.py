"""The import graph of ``ragloom`` (function-level imports included, read by grimp): no module
imports itself back through others, and no package does either (the top-level modules count as
packages of their own).

The layer rules themselves are import-linter contracts (``.importlinter``, run by ``make test``).
"""

from __future__ import annotations

from collections import defaultdict

import grimp


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of nodes that reach each other (iterative Tarjan), each sorted; single nodes left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                    out.append(sorted(group))
    return out


def graph() -> tuple[set[str], dict[str, set[str]]]:
    g = grimp.build_graph("ragloom", cache_dir=None)
    modules = set(g.modules)
    return modules, {m: set(g.find_modules_directly_imported_by(m)) & modules for m in modules}


def test_no_module_imports_itself_back() -> None:
    modules, edges = graph()
    assert strongly_connected(modules, edges) == []


def test_packages_form_no_loop() -> None:
    modules, edges = graph()
    package = {m: m.split(".")[1] if "." in m else m for m in modules}
    between: dict[str, set[str]] = defaultdict(set)
    for m, targets in edges.items():
        between[package[m]].update(package[t] for t in targets if package[t] != package[m])
    assert strongly_connected(set(package.values()), between) == []


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected({"a", "b", "c", "d"}, edges) == [["a", "b", "c"]]
