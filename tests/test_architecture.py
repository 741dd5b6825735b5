"""The import graph of ``ragloom`` (function-level imports included, read by grimp): no module
imports itself back through others, and no package does either (the top-level modules count as
packages of their own).

The layer rules themselves are import-linter contracts (``.importlinter``, run by ``make test``).
The service's functions take the application context and the metadata DB session first, in that order
(README, "How it is built").
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

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


def test_service_functions_take_the_context_then_the_session_first() -> None:
    """``(ctx: Context, session: Session, ...)``, ``(session: Session, ...)`` or ``(ctx: Context, ...)``."""
    names = {"Context": "ctx", "Session": "session"}
    service = Path(__file__).resolve().parents[1] / "src" / "ragloom" / "service"
    off = []
    for path in sorted(service.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            kinds = [ast.unparse(a.annotation) if a.annotation else "" for a in args]
            wanted = [k for k in names if k in kinds]
            if kinds[:len(wanted)] != wanted or any(a.arg != names[k] for a, k in zip(args, kinds, strict=True)
                                                    if k in names):
                off.append(f"{path.relative_to(service)}:{node.lineno} {node.name}")
    assert off == []
