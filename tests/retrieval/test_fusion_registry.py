"""Fusion strategies are objects in a registry, each owning its default weight and threshold."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.errors import InvalidRequestError
from ragloom.registry import Registry
from ragloom.retrieval.fusion import Sides, fusions, term_side, zscore


def sides() -> Sides:
    return Sides(term=np.array([0.9, 0.1, 0.5]), bm25=np.array([1.0, 7.0, 3.0]), cosine=np.array([0.80, 0.82, 0.81]))


def test_builtins_and_their_defaults() -> None:
    assert fusions.names == ["normalized", "weighted"]
    normalized, weighted = fusions.create("normalized"), fusions.create("weighted")
    assert normalized.default_weight(settings_weight=0.75, kb_weight=0.3) == 0.75
    assert weighted.default_weight(settings_weight=0.75, kb_weight=0.5) == 0.5
    assert weighted.default_weight(settings_weight=0.75, kb_weight=0.0) == 0.0  # a weight of 0 is a weight
    assert weighted.default_weight(settings_weight=0.75, kb_weight=None) == 0.3
    assert normalized.threshold(mode="hybrid", weight=0.75, kb_threshold=0.2) == 0.0
    assert weighted.threshold(mode="hybrid", weight=0.3, kb_threshold=0.2) == 0.2
    assert weighted.threshold(mode="keyword", weight=0.0, kb_threshold=0.2) == 0.0


def test_each_fusion_ranks_its_own_way() -> None:
    s = sides()
    assert list(np.argsort(-fusions.create("weighted").fuse(s, mode="hybrid", weight=0.3))) == [0, 2, 1]
    assert list(np.argsort(-fusions.create("normalized").fuse(s, mode="keyword", weight=0.0))) == [1, 2, 0]  # BM25
    assert list(np.argsort(-fusions.create("normalized").fuse(s, mode="vector", weight=1.0))) == [1, 2, 0]  # cosine


def test_normalized_hybrid_uses_both_term_signals_for_a_chinese_question_and_bm25_for_others() -> None:
    """A Chinese question's term side is BM25 and token similarity together: with tied cosines, a
    candidate second on both beats those first on one and last on the other. Any other question's is
    BM25 alone."""
    s = Sides(term=np.array([0.6, 0.9, 0.1]), bm25=np.array([6.0, 1.0, 10.0]), cosine=np.array([0.8, 0.8, 0.8]))
    other = fusions.create("normalized").fuse(s, mode="hybrid", weight=0.75)
    assert list(np.argsort(-other)) == [2, 0, 1] and term_side(s) == pytest.approx(s.bm25)
    s = Sides(term=s.term, bm25=s.bm25, cosine=s.cosine, chinese=True)
    fused = fusions.create("normalized").fuse(s, mode="hybrid", weight=0.75)
    assert list(np.argsort(-fused)) == [0, 2, 1]
    assert term_side(s) == pytest.approx((zscore(s.term) + zscore(s.bm25)) / 2)
    # no BM25 spread (e.g. no text hit): token similarity alone decides, as before
    flat = Sides(term=s.term, bm25=np.zeros(3), cosine=s.cosine, chinese=True)
    assert list(np.argsort(-fusions.create("normalized").fuse(flat, mode="hybrid", weight=0.75))) == [1, 0, 2]


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InvalidRequestError, match="unknown fusion 'rrf'; one of normalized, weighted"):
        fusions.factory("rrf")


def test_a_registry_refuses_a_second_factory_under_one_name() -> None:
    registry: Registry[[], int] = Registry("number", "ragloom.test-numbers")
    registry.register("one", lambda: 1)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("one", lambda: 2)
    registry.register("one", lambda: 3, replace=True)
    assert registry.create("one") == 3 and "one" in registry and registry.names == ["one"]
