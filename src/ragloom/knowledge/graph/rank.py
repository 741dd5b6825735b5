"""PageRank of the merged graph (``networkx.pagerank``, as the reference; REFERENCE §9 step 4).

The graph is undirected; an edge's weight is its relation's weight. Isolated entities get their share
of the random jumps. Nodes and edges are added in key order, so the values do not depend on the order
documents were merged in.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from ragloom.knowledge.graph.merged import Graph

DAMPING = 0.85


def to_networkx(graph: Graph) -> Any:
    """The merged graph as an undirected ``networkx.Graph``: nodes are canonical keys (attributes
    ``name``, ``type``, ``weight``), edges carry ``weight``."""
    g = nx.Graph()
    for key in sorted(graph.entities):
        e = graph.entities[key]
        g.add_node(key, name=e.name, type=e.type, weight=e.weight)
    for a, b in sorted(graph.relations):
        g.add_edge(a, b, weight=max(graph.relations[(a, b)].weight, 1e-9))
    return g


def compute_pagerank(graph: Graph, *, damping: float = DAMPING) -> dict[str, float]:
    """PageRank of every entity (summing to 1), stored in the graph (``Entity.pagerank``) and returned."""
    if not graph.entities:
        graph.set_pagerank({})
        return {}
    values: dict[str, float] = {str(k): float(v) for k, v in
                                nx.pagerank(to_networkx(graph), alpha=damping, weight="weight").items()}
    graph.set_pagerank(values)
    return values
