"""Swapping child hits for their parent chunk (REFERENCE §5.6)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ragloom.docstore.base import ChunkRecord
from ragloom.retrieval.parents import swap_in_parents
from ragloom.retrieval.types import Candidate


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
