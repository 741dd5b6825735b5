"""Knowledge-graph retrieval (``use_kg``): one evidence item built by
:func:`~ragloom.knowledge.graph.graph_evidence` from a knowledge base's built graph, put first in the
results and cited like a chunk (id :func:`kg_id`, document name "Knowledge graph", its source chunks in
``source_ids``).

The graph and its :class:`~ragloom.knowledge.graph.GraphIndex` are loaded once per (knowledge base,
graph version) and kept in a small in-process cache (the version is the stored graph's object key,
which changes with every build that changes it)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ragloom.context import Context
from ragloom.dataflow import Candidate, ChunkKind, ChunkRecord
from ragloom.db.models import KnowledgeBase, KnowledgePart
from ragloom.knowledge.graph import Community, GraphIndex, graph_evidence
from ragloom.models.embedding import Embedder

KG_PREFIX = "kg-"
DOCUMENT_NAME = "Knowledge graph"
CACHE_SIZE = 8

_cache: OrderedDict[tuple[str, str], tuple[GraphIndex, list[Community]]] = OrderedDict()
_lock = threading.Lock()


def kg_id(kb_id: str) -> str:
    """The stable id of a knowledge base's graph evidence (its chunk id and document id)."""
    return f"{KG_PREFIX}{kb_id}"


def is_kg_id(chunk_id: str) -> bool:
    return chunk_id.startswith(KG_PREFIX)


def loaded(ctx: Context, kb_id: str) -> tuple[GraphIndex, list[Community]] | None:
    """The knowledge base's graph index and communities, from the cache or the store (None: none built)."""
    from sqlalchemy import select

    from ragloom.service.builds.graph_build import KB_SCOPE, KIND, stored_graph

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
    out = []
    for kb in kbs:
        found = loaded(ctx, kb.id)
        if found is None:
            continue
        index, communities = found
        evidence = graph_evidence(question, index, communities)
        if evidence.is_empty:
            continue
        vector = np.asarray(embedder.embed_passages([evidence.text])[0], dtype=np.float32)
        record = ChunkRecord(id=kg_id(kb.id), kb_id=kb.id, doc_id=kg_id(kb.id), version_id=kg_id(kb.id),
                             content=evidence.text, vector=vector, document_name=DOCUMENT_NAME,
                             kind=ChunkKind.SUMMARY, source_ids=list(evidence.chunk_ids), built_by="graph")
        out.append(Candidate(record=record, similarity=1.0, term_similarity=1.0, vector_similarity=1.0))
    return out
