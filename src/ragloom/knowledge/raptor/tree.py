"""A RAPTOR tree, layer by layer (REFERENCE §8).

From the leaves (a document's chunks in reading order, or the roots of documents' trees):

1. cluster the layer's vectors (:func:`plan_layer`: :func:`~ragloom.knowledge.raptor.cluster.cluster`,
   then any cluster whose texts are over the summary call's token budget split again, as the RAPTOR
   paper does);
2. a cluster of one row moves up unchanged; every other cluster becomes a summary node whose
   ``source_ids`` are its members' ids;
3. the next layer is the new nodes and the rows that moved up; stop at one row or at ``max_depth``.
   A layer that does not shrink is summarised as one cluster (the tree always ends).

A node's id is given by the caller (``hooks.node_id(layer, source_ids)``), a pure function of what it
summarises: a run that stopped (a crash, a cancel, a failed call) and runs again finds the nodes it
already made with ``hooks.stored`` and skips them, so nothing is summarised, embedded or stored twice.
New nodes go to ``hooks.save`` layer by layer. Nothing here knows where rows are stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragloom.knowledge.raptor.cluster import cluster, split_in_two
from ragloom.knowledge.raptor.summarize import Cluster, CountTokens, Summarizer
from ragloom.schemas.builds import RaptorSettings

MAX_SPLITS = 4  # how many times an over-budget cluster is split again


@dataclass(frozen=True, slots=True)
class Node:
    """A row of the tree: a leaf (``layer`` 0, no sources) or a summary of ``source_ids``."""

    id: str
    text: str
    vector: np.ndarray
    layer: int = 0
    source_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class TreeHooks:
    """What the caller provides: ids, the nodes already stored, the embedder, where new nodes go, and a
    progress callback (``progress(message, done, total)``, called from the building thread; it may
    raise to stop)."""

    node_id: Callable[[int, Sequence[str]], str]
    stored: Callable[[Sequence[str]], dict[str, Node]]
    embed: Callable[[Sequence[str]], np.ndarray]
    save: Callable[[Sequence[Node]], None]
    progress: Callable[[str, int, int], None] = lambda message, done, total: None


@dataclass(slots=True)
class Tree:
    """What a build produced: every summary node (old and new), the top layer, and counts."""

    nodes: list[Node] = field(default_factory=list)
    roots: list[Node] = field(default_factory=list)
    layers: int = 0
    made: int = 0
    reused: int = 0


def plan_layer(vectors: np.ndarray, tokens: Sequence[int], settings: RaptorSettings, budget: int) -> list[list[int]]:
    """The clusters of one layer (row indices), each within ``budget`` tokens when it can be split."""
    groups = cluster(vectors, max_cluster=settings.max_cluster, threshold=settings.threshold,
                     seed=settings.random_seed)
    out: list[list[int]] = []
    for g in groups:
        out.extend(_fit(g, vectors, tokens, settings, budget, 0))
    return sorted(out, key=lambda g: g[0])


def _fit(group: list[int], vectors: np.ndarray, tokens: Sequence[int], settings: RaptorSettings, budget: int,
         depth: int) -> list[list[int]]:
    if len(group) <= 2 or depth >= MAX_SPLITS or sum(tokens[i] for i in group) <= budget:
        return [group]
    sub = cluster(vectors[group], max_cluster=settings.max_cluster, threshold=settings.threshold,
                  seed=settings.random_seed)
    if len(sub) == 1:
        sub = split_in_two(vectors[group], seed=settings.random_seed)
    out: list[list[int]] = []
    for s in sub:
        out.extend(_fit([group[i] for i in s], vectors, tokens, settings, budget, depth + 1))
    return out


def _groups(frontier: Sequence[Node], settings: RaptorSettings, count_tokens: CountTokens, budget: int,
            shrank: bool) -> list[list[int]]:
    if not shrank:
        return [list(range(len(frontier)))]
    vectors = np.stack([n.vector for n in frontier])
    groups = plan_layer(vectors, [count_tokens(n.text) for n in frontier], settings, budget)
    if all(len(g) == 1 for g in groups):
        return [list(range(len(frontier)))]
    return groups


def build_tree(leaves: Sequence[Node], settings: RaptorSettings, summarizer: Summarizer, *,
               count_tokens: CountTokens, budget: int, hooks: TreeHooks) -> Tree:
    """Summary layers over ``leaves`` (see the module docstring)."""
    tree = Tree(roots=list(leaves))
    frontier, shrank = list(leaves), True
    while len(frontier) > 1 and tree.layers < settings.max_depth:
        layer = tree.layers + 1
        groups = _groups(frontier, settings, count_tokens, budget, shrank)
        made = [g for g in groups if len(g) > 1]
        ids = [hooks.node_id(layer, [frontier[i].id for i in g]) for g in made]
        have = hooks.stored(ids)
        todo = [(g, node_id) for g, node_id in zip(made, ids, strict=True) if node_id not in have]
        hooks.progress(f"layer {layer}: {len(made)} clusters of {len(frontier)} rows, {len(todo)} to summarise",
                       0, len(todo))
        texts = summarizer.summarize_many(
            [Cluster(tuple(frontier[i].text for i in g), np.stack([frontier[i].vector for i in g])) for g, _ in todo],
            _layer_progress(hooks, layer))
        vectors = hooks.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
        new = [Node(node_id, text, np.asarray(vec, dtype=np.float32), layer, tuple(frontier[i].id for i in g))
               for (g, node_id), text, vec in zip(todo, texts, vectors, strict=True)]
        if new:
            hooks.save(new)
        nodes = {n.id: n for n in [*have.values(), *new]}
        tree.nodes.extend(nodes[i] for i in dict.fromkeys(ids))
        tree.made += len(new)
        tree.reused += len(made) - len(new)
        nxt: dict[str, Node] = {}
        it = iter(ids)
        for g in groups:
            node = frontier[g[0]] if len(g) == 1 else nodes[next(it)]
            nxt.setdefault(node.id, node)
        shrank = len(nxt) < len(frontier)
        frontier = list(nxt.values())
        tree.layers = layer
    tree.roots = frontier
    return tree


def _layer_progress(hooks: TreeHooks, layer: int) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        hooks.progress(f"layer {layer}: summarising ({done}/{total})", done, total)

    return progress


@dataclass(frozen=True, slots=True)
class TreeEstimate:
    """What building a tree over some leaves would take: summary calls and prompt tokens. The first
    layer is planned for real (its clusters and prompts are exact: ``first_layer`` holds each call's
    member texts); the layers above are projected with the first layer's reduction ratio, each summary
    taken at ``max_token`` tokens."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    layers: int
    first_layer: list[tuple[str, ...]]


def estimate_tree(leaves: Sequence[Node], settings: RaptorSettings, *, count_tokens: CountTokens, budget: int,
                  prompt_tokens: Callable[[Sequence[str]], int]) -> TreeEstimate:
    """Estimate :func:`build_tree` over ``leaves`` without calling a model (see :class:`TreeEstimate`)."""
    if len(leaves) <= 1:
        return TreeEstimate(0, 0, 0, 0, [])
    groups = _groups(leaves, settings, count_tokens, budget, True)
    first = [tuple(leaves[i].text for i in g) for g in groups if len(g) > 1]
    calls, tokens = len(first), sum(prompt_tokens(texts) for texts in first)
    rows, nxt = len(leaves), min(len(groups), len(leaves) - 1)
    ratio = nxt / rows
    layers = 1
    template = prompt_tokens(())
    while nxt > 1 and layers < settings.max_depth:
        rows, nxt = nxt, min(nxt - 1, math.ceil(nxt * ratio)) if nxt > 2 else 1
        made = max(1, min(nxt, rows - nxt))  # summaries of this layer: each merges two rows or more
        calls += made
        moved_up = max(0, nxt - made)  # rows of one-row clusters: not summarised
        tokens += made * template + (rows - moved_up) * settings.max_token
        layers += 1
    return TreeEstimate(calls, tokens, calls * settings.max_token, layers, first)
