"""Knowledge-graph evidence as a retrieval stage (``use_kg``): what a knowledge base's built graph knows
about a question (:func:`~ragloom.knowledge.graph.graph_evidence`), as one candidate per knowledge base,
put first in the results and cited like a chunk (id :func:`kg_id`, document name "Knowledge graph", its
source chunks in ``source_ids``).

The stage receives the graphs already loaded (the service reads them from the metadata DB and the object
store, and caches their indexes) and an embedding function; it reads nothing itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragloom.dataflow import Candidate, ChunkKind, ChunkRecord
from ragloom.knowledge.graph import Community, GraphIndex, graph_evidence
from ragloom.retrieval.types import RetrievalResult

__all__ = ["DOCUMENT_NAME", "KG_PREFIX", "LoadedGraph", "evidence_candidates", "is_kg_id", "kg_id",
           "put_first"]

KG_PREFIX = "kg-"
DOCUMENT_NAME = "Knowledge graph"


def kg_id(kb_id: str) -> str:
    """The stable id of a knowledge base's graph evidence (its chunk id and document id)."""
    return f"{KG_PREFIX}{kb_id}"


def is_kg_id(chunk_id: str) -> bool:
    return chunk_id.startswith(KG_PREFIX)


@dataclass(frozen=True)
class LoadedGraph:
    """A knowledge base's built graph, indexed for questions."""

    kb_id: str
    index: GraphIndex
    communities: list[Community]


def evidence_candidates(question: str, graphs: Sequence[LoadedGraph],
                        embed_passages: Callable[[Sequence[str]], np.ndarray]) -> list[Candidate]:
    """One evidence item per graph that knows something about ``question``, in the order of ``graphs``."""
    out = []
    for graph in graphs:
        evidence = graph_evidence(question, graph.index, graph.communities)
        if evidence.is_empty:
            continue
        vector = np.asarray(embed_passages([evidence.text])[0], dtype=np.float32)
        record = ChunkRecord(id=kg_id(graph.kb_id), kb_id=graph.kb_id, doc_id=kg_id(graph.kb_id),
                             version_id=kg_id(graph.kb_id), content=evidence.text, vector=vector,
                             document_name=DOCUMENT_NAME, kind=ChunkKind.SUMMARY,
                             source_ids=list(evidence.chunk_ids), built_by="graph")
        out.append(Candidate(record=record, similarity=1.0, term_similarity=1.0, vector_similarity=1.0))
    return out


def put_first(result: RetrievalResult, evidence: Sequence[Candidate]) -> None:
    """Merge graph evidence into a result, in place: before the retrieved chunks, counted in its total."""
    result.chunks = [*evidence, *result.chunks]
    result.total += len(evidence)
