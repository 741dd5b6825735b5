"""The merged graph as nodes and links, for an API that a UI draws from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Community


def node_link(graph: Graph, communities: Sequence[Community] = (), *, limit: int | None = None) -> dict[str, Any]:
    """``{"nodes": [...], "links": [...], "communities": [...]}``: the ``limit`` entities of highest PageRank
    (all when None; ties by key) with the relations among them. A node's ``community`` is the id of the
    deepest community that holds it (None if none does)."""
    keys = sorted(graph.entities, key=lambda k: (-graph.entities[k].pagerank, k))
    if limit is not None:
        keys = keys[: max(0, limit)]
    shown = set(keys)
    home: dict[str, tuple[int, str]] = {}
    for c in communities:
        for name in c.entities:
            key = graph.key_of(name)
            if key in shown and (key not in home or home[key][0] < c.level):
                home[key] = (c.level, c.id)
    nodes = []
    for key in keys:
        e = graph.entities[key]
        nodes.append({"id": key, "name": e.name, "type": e.type, "description": e.description,
                      "weight": e.weight, "pagerank": e.pagerank, "aliases": list(e.aliases),
                      "doc_ids": list(e.doc_ids), "degree": graph.degree(key),
                      "community": home[key][1] if key in home else None})
    links = [{"source": a, "target": b, "description": r.description, "keywords": list(r.keywords),
              "weight": r.weight, "doc_ids": list(r.doc_ids)}
             for (a, b), r in sorted(graph.relations.items()) if a in shown and b in shown]
    used = {c for _, c in home.values()} if limit is not None else None
    groups = [{"id": c.id, "level": c.level, "title": c.title, "size": len(c.entities), "rating": c.rating,
               "parent": c.parent} for c in communities if used is None or c.id in used]
    return {"nodes": nodes, "links": links, "communities": groups}
