"""Ranking metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from ragloom.evaluation.dataset import LabelledQuery
from ragloom.evaluation.metrics import hit_at, mrr_at, ndcg_at, percentile, recall_at

RANKED = ["a", "x", "b", None, "c"]
RELEVANT = {"b", "c", "d"}


def test_hit_mrr_recall() -> None:
    assert hit_at(RANKED, RELEVANT, 1) == 0.0
    assert hit_at(RANKED, RELEVANT, 3) == 1.0
    assert mrr_at(RANKED, RELEVANT, 10) == pytest.approx(1 / 3)
    assert mrr_at(RANKED, RELEVANT, 2) == 0.0
    assert recall_at(RANKED, RELEVANT, 10) == pytest.approx(2 / 3)
    assert recall_at(RANKED, RELEVANT, 3) == pytest.approx(1 / 3)
    assert recall_at([], set(), 10) == 0.0


def test_binary_ndcg() -> None:
    dcg = 1 / math.log2(4) + 1 / math.log2(6)  # b at rank 3, c at rank 5
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)  # three relevant ids
    assert ndcg_at(RANKED, RELEVANT, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at(["b", "c", "d"], RELEVANT, 10) == pytest.approx(1.0)
    assert ndcg_at(["x", "y"], RELEVANT, 10) == 0.0


def test_graded_ndcg_uses_grades_and_ignores_non_positive_ones() -> None:
    q = LabelledQuery(id="q", query="?", relevant=frozenset({"b", "c", "d", "e"}),
                      grades={"b": 3, "c": 1, "d": 2, "e": -1})
    assert q.gain("b") == 3 and q.gain("e") == 0 and q.gain("zz") == 0
    dcg = 3 / math.log2(4) + 1 / math.log2(6)
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)  # e (grade -1) adds nothing to the ideal
    assert ndcg_at(RANKED, q.relevant, 10, q.gain) == pytest.approx(dcg / ideal)
    assert ndcg_at(["b", "d", "c"], q.relevant, 10, q.gain) == pytest.approx(1.0)
    # cut at k: the ideal is cut too
    assert ndcg_at(["d"], q.relevant, 1, q.gain) == pytest.approx(2 / 3)


def test_ungraded_ids_of_a_graded_query_count_one() -> None:
    q = LabelledQuery(id="q", query="?", relevant=frozenset({"a", "b"}), grades={"a": 2})
    assert q.gain("b") == 1.0


def test_percentile_interpolates() -> None:
    assert percentile([40, 10, 30, 20], 50) == pytest.approx(25)
    assert percentile([10, 20, 30, 40], 95) == pytest.approx(38.5)
    assert percentile([7], 95) == 7
    assert percentile([], 50) == 0.0
