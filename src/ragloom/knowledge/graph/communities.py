"""Leiden communities of the merged graph, hierarchical (REFERENCE §9 step 6).

``graspologic_native.hierarchical_leiden`` (the Rust Leiden the reference reaches through graspologic)
partitions the graph by modularity; a community larger than ``max_cluster_size`` (12) is partitioned
again one level down, and so on. Every community of two or more entities is kept, at every level:
``level`` 0 is the top partition, ``parent`` links a community to the one it was split from. Entities
without relations belong to no community. The seed (``0xDEADBEEF``), the edges' order (by key) and the
ids (by level, size, then most central entity) are fixed, so the same graph gives the same communities.

An edge weighs its relation's weight, scaled so that the heaviest is 1. A community's ``weight`` is the
number of distinct source chunks of its entities, scaled so that the largest community's is 1.
Reports are written by :mod:`ragloom.knowledge.graph.reports`.
"""

from __future__ import annotations

from collections import defaultdict

import graspologic_native as gn

from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Community

MAX_CLUSTER_SIZE = 12
SEED = 0xDEADBEEF
MIN_ENTITIES = 2


def detect_communities(graph: Graph, *, max_cluster_size: int = MAX_CLUSTER_SIZE, seed: int = SEED,
                       resolution: float = 1.0) -> list[Community]:
    """The communities of ``graph`` without reports (titles empty), ordered by id."""
    if not graph.relations:
        return []
    heaviest = max(r.weight for r in graph.relations.values()) or 1.0
    edges = [(a, b, max(graph.relations[(a, b)].weight / heaviest, 1e-6)) for a, b in sorted(graph.relations)]
    clusters = gn.hierarchical_leiden(edges, max_cluster_size=max_cluster_size, seed=seed, resolution=resolution)
    members: dict[tuple[int, int], set[str]] = defaultdict(set)
    parents: dict[tuple[int, int], int | None] = {}
    for c in clusters:
        level, cluster = int(c.level), int(c.cluster)
        members[(level, cluster)].add(str(c.node))
        parents[(level, cluster)] = None if c.parent_cluster is None else int(c.parent_cluster)

    def central(key: str) -> tuple[float, float, str]:
        e = graph.entities[key]
        return (-e.pagerank, -e.weight, key)

    groups = [(level, cluster, sorted(keys, key=central)) for (level, cluster), keys in members.items()
              if len(keys) >= MIN_ENTITIES and all(k in graph.entities for k in keys)]
    groups.sort(key=lambda g: (g[0], -len(g[2]), g[2][0]))
    ids = {(level, cluster): f"c{level}-{i}" for i, (level, cluster, _) in enumerate(groups)}
    chunks = {(level, cluster): len({c for k in keys for c in graph.entities[k].source_chunk_ids})
              for level, cluster, keys in groups}
    most = max(chunks.values(), default=1) or 1
    out = []
    for level, cluster, keys in groups:
        parent = parents.get((level, cluster))
        out.append(Community(id=ids[(level, cluster)], level=level,
                             entities=[graph.entities[k].name for k in keys],
                             weight=round(chunks[(level, cluster)] / most, 6),
                             parent=ids.get((level - 1, parent)) if parent is not None else None))
    return out
