"""Knowledge-graph retrieval (``use_kg``): load the searched knowledge bases' built graphs and hand them
to the evidence stage (:mod:`ragloom.retrieval.graph_evidence`).

The graph and its :class:`~ragloom.knowledge.graph.GraphIndex` are loaded once per (knowledge base,
graph version) and kept in a small in-process cache (the version is the stored graph's object key,
which changes with every build that changes it)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from ragloom.context import Context
from ragloom.dataflow import Candidate
from ragloom.db.models import KnowledgeBase, KnowledgePart
from ragloom.knowledge.graph import Community, GraphIndex
from ragloom.models.embedding import Embedder
from ragloom.retrieval.graph_evidence import LoadedGraph, evidence_candidates

CACHE_SIZE = 8

_cache: OrderedDict[tuple[str, str], tuple[GraphIndex, list[Community]]] = OrderedDict()
_lock = threading.Lock()


def loaded(ctx: Context, kb_id: str) -> tuple[GraphIndex, list[Community]] | None:
    """The knowledge base's graph index and communities, from the cache or the store (None: none built)."""
    from sqlalchemy import select

    from ragloom.service.builds.graph import KB_SCOPE, KIND, stored_graph

    with ctx.db.session() as s:
        version = s.scalar(select(KnowledgePart.root_ids).where(
            KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND, KnowledgePart.scope == KB_SCOPE))
        if not version:
            return None
        with _lock:
            hit = _cache.get((kb_id, version[0]))
            if hit is not None:
                _cache.move_to_end((kb_id, version[0]))
                return hit
        stored = stored_graph(ctx, s, kb_id)
    if stored is None:
        return None
    key, graph, communities = stored
    entry = (GraphIndex(graph, ctx.analyzer), communities)
    with _lock:
        _cache[(kb_id, key)] = entry
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return entry


def kg_candidates(ctx: Context, kbs: list[KnowledgeBase], question: str, embedder: Embedder) -> list[Candidate]:
    """One evidence item per knowledge base with a built graph that knows something about ``question``."""
    graphs = []
    for kb in kbs:
        found = loaded(ctx, kb.id)
        if found is not None:
            graphs.append(LoadedGraph(kb_id=kb.id, index=found[0], communities=found[1]))
    return evidence_candidates(question, graphs, embedder.embed_passages)
