from __future__ import annotations

import math

import pytest

from ragloom.nlp import Analyzer, TermWeigher, idf


def _w(weigher: TermWeigher, terms: list[str]) -> dict[str, float]:
    return dict(weigher.weights(terms))


def test_weights_are_positive_and_sum_to_one(weigher: TermWeigher) -> None:
    for terms in (["公司", "年", "假", "政策"], ["reset", "password", "linux"], ["x-200"]):
        pairs = weigher.weights(terms)
        assert [t for t, _ in pairs] == terms
        assert all(w > 0 for _, w in pairs)
        assert math.isclose(sum(w for _, w in pairs), 1.0)
    assert weigher.weights([]) == []


def test_rare_terms_outweigh_common_ones(weigher: TermWeigher) -> None:
    w = _w(weigher, ["公司", "分辨率", "年"])
    assert w["分辨率"] > w["公司"] > w["年"]  # dictionary frequency: 分辨率 rare, 年 very common


def test_numbers_and_model_numbers_are_favoured(weigher: TermWeigher) -> None:
    w = _w(weigher, ["价格", "2023", "x-200"])
    assert w["2023"] > w["价格"] and w["x-200"] > w["价格"]


def test_pos_and_short_latin_factors(weigher: TermWeigher) -> None:
    assert weigher.pos("我们") == 0.3  # pronoun
    assert weigher.pos("北京") == 3.0  # place name
    assert weigher.pos("政策") == 2.0  # noun
    assert weigher.pos("2023") == 2.0
    assert weigher.ner("ab") == 0.01 and weigher.ner("1,000") == 2.0 and weigher.ner("gpt4") == 2.0
    w = _w(weigher, ["ab", "linux"])
    assert w["ab"] < 0.02


def test_idf_formula() -> None:
    assert idf(0, 1e9) == pytest.approx(math.log10(10 + (1e9 + 0.5) / 0.5))
    assert idf(100, 100) == pytest.approx(math.log10(10 + 0.5 / 100.5))


def test_index_statistics_replace_the_df_heuristic(analyzer: Analyzer) -> None:
    calls: list[list[str]] = []

    def doc_freq(terms: list[str]) -> tuple[dict[str, int], int]:
        calls.append(terms)
        return {"alpha": 900, "omega": 2}, 1000

    w = _w(TermWeigher(analyzer, doc_freq=doc_freq), ["alpha", "omega", "alpha"])
    assert calls == [["alpha", "omega"]]  # asked once, for the unique terms
    assert w["omega"] > 1.5 * w["alpha"]  # same heuristics otherwise; only df differs
    plain = _w(TermWeigher(analyzer), ["alpha", "omega"])
    assert plain["alpha"] == pytest.approx(plain["omega"])  # same length: same heuristic weight


def test_tiny_index_falls_back_to_heuristics(analyzer: Analyzer) -> None:
    def doc_freq(terms: list[str]) -> tuple[dict[str, int], int]:
        return {"alpha": 9, "omega": 0}, 10

    tiny = TermWeigher(analyzer, doc_freq=doc_freq, min_rows=100).weights(["alpha", "omega"])
    assert tiny == TermWeigher(analyzer).weights(["alpha", "omega"])
