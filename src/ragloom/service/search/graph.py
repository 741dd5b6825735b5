"""Knowledge-graph retrieval (``use_kg``): load the searched knowledge bases' built graphs and hand them
to the evidence stage (:mod:`ragloom.retrieval.graph_evidence`).

The graph and its :class:`~ragloom.knowledge.graph.GraphIndex` are loaded once per (knowledge base,
graph version) and kept in a small in-process cache (the version is the stored graph's object key,
which changes with every build that changes it).

Source permissions (:mod:`ragloom.service.accounts.access`): a caller who may not read some of the
graph's documents gets the graph merged again from the others alone, and none of the communities with
an entity drawn from a hidden document (:func:`~ragloom.knowledge.graph.readable_part`); that reader's
graph is cached under the set of documents left out.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Collection

from ragloom.context import Context
from ragloom.dataflow import Candidate
from ragloom.db.models import KnowledgeBase, KnowledgePart
from ragloom.knowledge.graph import Community, Graph, GraphIndex, readable_part
from ragloom.models.embedding import Embedder
from ragloom.retrieval.graph_evidence import LoadedGraph, evidence_candidates

CACHE_SIZE = 8

_cache: OrderedDict[tuple[str, str, str], tuple[Graph, GraphIndex, list[Community]]] = OrderedDict()
_lock = threading.Lock()


def loaded(ctx: Context, kb_id: str, hidden: Collection[str] = ()) -> tuple[Graph, GraphIndex, list[Community]] | None:
    """The knowledge base's graph, its index and communities as a caller who may not read ``hidden`` sees
    them, from the cache or the store (None: none built)."""
    from sqlalchemy import select

    from ragloom.service.builds.graph import KB_SCOPE, KIND, stored_graph

    with ctx.db.session() as s:
        version = s.scalar(select(KnowledgePart.root_ids).where(
            KnowledgePart.kb_id == kb_id, KnowledgePart.kind == KIND, KnowledgePart.scope == KB_SCOPE))
        if not version:
            return None
        whole = _cached((kb_id, version[0], ""))
        if whole is None:
            stored = stored_graph(ctx, s, kb_id)
            if stored is None:
                return None
            key, graph, communities = stored
            whole = (graph, GraphIndex(graph, ctx.analyzer), communities)
            _keep((kb_id, key, ""), whole)
    gone = sorted(set(hidden) & set(whole[0].doc_ids))
    if not gone:
        return whole
    reader_key = (kb_id, version[0], hashlib.sha256("\n".join(gone).encode()).hexdigest())
    found = _cached(reader_key)
    if found is None:
        graph, communities = readable_part(whole[0], whole[2], gone)
        found = (graph, GraphIndex(graph, ctx.analyzer), communities)
        _keep(reader_key, found)
    return found


def _cached(key: tuple[str, str, str]) -> tuple[Graph, GraphIndex, list[Community]] | None:
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
        return hit


def _keep(key: tuple[str, str, str], entry: tuple[Graph, GraphIndex, list[Community]]) -> None:
    with _lock:
        _cache[key] = entry
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def kg_candidates(ctx: Context, kbs: list[KnowledgeBase], question: str, embedder: Embedder,
                  hidden: Collection[str] = ()) -> list[Candidate]:
    """One evidence item per knowledge base with a built graph that knows something about ``question``
    (of the graph a caller who may not read documents ``hidden`` sees)."""
    graphs = []
    for kb in kbs:
        found = loaded(ctx, kb.id, hidden)
        if found is not None:
            graphs.append(LoadedGraph(kb_id=kb.id, index=found[1], communities=found[2]))
    return evidence_candidates(question, graphs, embedder.embed_passages)
