"""Swapping child hits for their parent chunk (REFERENCE §5.6)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.retrieval.parents import swap_in_parents
from ragloom.schemas.datasets import KBCreate


def record(rid: str, content: str = "", parent: str | None = None, *, vector: np.ndarray | None = None,
           keywords: Sequence[str] = (), available: bool = True) -> ChunkRecord:
    vec = np.ones(4, dtype=np.float32) / 2 if vector is None else vector
    return ChunkRecord(id=rid, kb_id="kb", doc_id="d", version_id="v", content=content or rid, vector=vec,
                       parent_id=parent, important_keywords=list(keywords), available=available)


def hit(rec: ChunkRecord, sim: float, term: float = 0.0, vec: float = 0.0, text: float | None = None) -> Candidate:
    return Candidate(record=rec, similarity=sim, term_similarity=term, vector_similarity=vec, text_score=text)


class Store:
    """Parents by id, recording each fetch (the real store's ``get`` contract: unknown ids left out)."""

    def __init__(self, *parents: ChunkRecord) -> None:
        self.rows = {p.id: p for p in parents}
        self.calls: list[list[str]] = []

    def __call__(self, ids: Sequence[str]) -> list[ChunkRecord]:
        self.calls.append(list(ids))
        return [self.rows[i] for i in ids if i in self.rows]


def test_children_are_replaced_by_their_parent_with_mean_scores() -> None:
    parent = record("P", "the whole parent text", available=False, keywords=["alpha"])
    store = Store(parent)
    hits = [hit(record("c1", parent="P", keywords=["beta"]), 0.9, 0.8, 0.7, 3.0),
            hit(record("x"), 0.6, 0.5, 0.4),
            hit(record("c2", parent="P", keywords=["alpha", "gamma"]), 0.5, 0.4, 0.3, None)]
    out = swap_in_parents(hits, store)
    assert [c.record.id for c in out] == ["P", "x"]
    merged = out[0]
    assert merged.record.content == "the whole parent text"
    assert merged.similarity == pytest.approx(0.7) and merged.term_similarity == pytest.approx(0.6)
    assert merged.vector_similarity == pytest.approx(0.5) and merged.text_score == 3.0
    assert merged.record.important_keywords == ["alpha", "beta", "gamma"]
    assert store.calls == [["P"]] and parent.important_keywords == ["alpha"]  # the fetched row is not mutated


def test_results_are_resorted_after_averaging() -> None:
    store = Store(record("P"))
    hits = [hit(record("c1", parent="P"), 0.9), hit(record("x"), 0.8), hit(record("c2", parent="P"), 0.1)]
    assert [c.record.id for c in swap_in_parents(hits, store)] == ["x", "P"]  # P: mean 0.5


def test_children_of_a_missing_parent_are_kept() -> None:
    store = Store(record("P"))
    hits = [hit(record("c1", parent="GONE"), 0.4), hit(record("c2", parent="P"), 0.3),
            hit(record("c3", parent="GONE"), 0.2)]
    assert [c.record.id for c in swap_in_parents(hits, store)] == ["c1", "P", "c3"]


def test_no_children_means_no_fetch() -> None:
    store = Store()
    hits = [hit(record("a"), 0.2), hit(record("b"), 0.7)]
    assert [c.record.id for c in swap_in_parents(hits, store)] == ["b", "a"] and store.calls == []


def test_a_parent_stored_without_a_vector_borrows_its_best_childs() -> None:
    best = np.array([1, 0, 0, 0], dtype=np.float32)
    store = Store(record("P", vector=np.zeros(4, dtype=np.float32)))
    hits = [hit(record("c1", parent="P", vector=np.array([0, 1, 0, 0], dtype=np.float32)), 0.2),
            hit(record("c2", parent="P", vector=best), 0.6)]
    [merged] = swap_in_parents(hits, store)
    assert np.array_equal(merged.vector, best)


def reranked(rec: ChunkRecord, sim: float, rerank: float) -> Candidate:
    return Candidate(record=rec, similarity=sim, term_similarity=0.2, vector_similarity=0.1, rerank_score=rerank)


def test_parents_of_reranked_children_keep_the_reranked_order() -> None:
    store = Store(record("P"))
    # after the rerank stage: reranked candidates first, then the rest of the window in their old order
    cands = [reranked(record("c1", parent="P"), 0.6, 0.9), reranked(record("x"), 0.5, 0.7),
             hit(record("y"), 0.55), hit(record("c2", parent="P"), 0.3)]
    out = swap_in_parents(cands, store)
    assert [c.record.id for c in out] == ["P", "x", "y"]
    parent = out[0]
    # only the reranked child counts: the un-reranked one's similarity holds no rerank score
    assert parent.similarity == pytest.approx(0.6) and parent.rerank_score == pytest.approx(0.9)


def test_parent_scores_are_the_means_of_its_reranked_childrens() -> None:
    store = Store(record("P"), record("Q"))
    cands = [reranked(record("a", parent="Q"), 0.8, 0.9), reranked(record("b", parent="P"), 0.7, 0.6),
             reranked(record("c", parent="P"), 0.5, 0.2), reranked(record("d", parent="Q"), 0.1, 0.1)]
    out = swap_in_parents(cands, store)
    assert [(c.record.id, round(c.similarity, 6), round(c.rerank_score or 0, 6)) for c in out] == [
        ("P", 0.6, 0.4), ("Q", 0.45, 0.5)]  # re-sorted by the children's final similarities


def test_reranked_parent_child_retrieval_end_to_end(tmp_path) -> None:
    """Parent-child chunking + an HTTP reranker (test server on loopback): the page is in reranked order."""
    from ragloom.config import Settings
    from ragloom.context import Context
    from ragloom.retrieval.rerank import rank_key
    from ragloom.schemas.options import RetrievalOptions
    from ragloom.service import knowledgebases
    from ragloom.service.accounts import identity
    from ragloom.service.search.retrieval import search
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.test_retrieval import _ingest

    text = "\n\n".join(
        f"# Part {n}\n\nThe {topic} sits on shelf {n}. Dust the {topic} weekly. Store the {topic} away from heat."
        for n, topic in enumerate(["router", "kettle", "router cable", "lamp", "router manual", "toaster"]))
    with FakeOpenAIServer() as server:
        ctx = Context(Settings(home=tmp_path / "home", rerank_provider="http", rerank_base_url=server.base_url,
                               rerank_model="fake-rerank", rerank_window=5, _env_file=None))
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
                knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
                    name="shelves", chunk_method="title", parser_config={"children_delimiter": "."}))
            _ingest(ctx, principal, "shelves", {"shelves.md": text})
            res = search(ctx, principal=principal, kb_ids=["shelves"], question="where is the router",
                         options=RetrievalOptions(similarity_threshold=0.0, page_size=6))
        finally:
            ctx.close()
    assert any(r.path.endswith("/rerank") for r in server.requests)
    parents = [c for c in res.chunks if c.record.kind == "parent"]
    assert parents and any(p.rerank_score is not None for p in parents)
    assert [c.record.id for c in res.chunks] == [c.record.id for c in sorted(res.chunks, key=rank_key)]
    assert "router" in res.chunks[0].record.content
