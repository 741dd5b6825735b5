"""The rerank stage: the §5.3 combination, the rerank window, and a real reranker over the wire."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.errors import ModelError
from ragloom.models.rerank import HttpReranker
from ragloom.retrieval.rerank import rank_key, rerank, rerank_text
from tests.fakes.openai_server import FakeOpenAIServer, rerank_score


class TableReranker:
    """A stand-in for an external model: fixed scores by passage content, calls recorded."""

    name = "table"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, documents):
        self.calls.append((query, list(documents)))
        return np.array([self.scores[d] for d in documents], dtype=np.float32)


def cand(content: str, term: float, vector: float, vsw: float, rank_feature: float = 0.0) -> Candidate:
    record = ChunkRecord(id=content, kb_id="kb", doc_id="d", version_id="v", content=content,
                         vector=np.zeros(4, dtype=np.float32))
    return Candidate(record=record, term_similarity=term, vector_similarity=vector,
                     similarity=(1 - vsw) * term + vsw * vector + rank_feature, rank_feature=rank_feature)


def test_rerank_score_replaces_the_vector_similarity_and_rank_features_stay() -> None:
    vsw = 0.3
    cands = [cand("a", 0.9, 0.8, vsw), cand("b", 0.5, 0.6, vsw, rank_feature=0.2), cand("c", 0.4, 0.1, vsw)]
    reranker = TableReranker({"a": 0.0, "b": 0.5, "c": 1.0})
    out = rerank(cands, "q", reranker, vector_similarity_weight=vsw, window=10)
    by_id = {c.record.id: c for c in out}
    assert by_id["a"].similarity == pytest.approx(0.7 * 0.9 + 0.3 * 0.0)
    assert by_id["b"].similarity == pytest.approx(0.7 * 0.5 + 0.3 * 0.5 + 0.2)
    assert by_id["c"].similarity == pytest.approx(0.7 * 0.4 + 0.3 * 1.0)
    assert [c.record.id for c in out] == ["b", "a", "c"]  # 0.70, 0.63, 0.58
    assert [c.rerank_score for c in out] == [0.5, 0.0, 1.0]
    assert cands[0].rerank_score is None and cands[0].similarity == pytest.approx(0.87)  # input untouched
    assert reranker.calls == [("q", ["a", "b", "c"])]  # highest similarity first


@pytest.mark.parametrize(("vsw", "expected"), [(1.0, ["c", "b", "a"]), (0.0, ["a", "b", "c"])])
def test_vector_only_uses_the_rerank_score_alone_and_keyword_only_ignores_it(vsw: float, expected) -> None:
    cands = [cand("a", 0.9, 0.8, vsw), cand("b", 0.5, 0.6, vsw), cand("c", 0.4, 0.1, vsw)]
    out = rerank(cands, "q", TableReranker({"a": 0.1, "b": 0.5, "c": 0.9}), vector_similarity_weight=vsw, window=3)
    assert [c.record.id for c in out] == expected
    if vsw == 1.0:
        assert [c.similarity for c in out] == pytest.approx([0.9, 0.5, 0.1])


def test_only_the_window_is_reranked_and_the_rest_stay_below_in_order() -> None:
    vsw = 0.5
    sims = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5}
    cands = [cand(k, v, v, vsw) for k, v in reversed(sims.items())]  # arrives unsorted
    reranker = TableReranker({"a": 0.0, "b": 0.3})
    out = rerank(cands, "q", reranker, vector_similarity_weight=vsw, window=2)
    assert reranker.calls == [("q", ["a", "b"])]
    assert [c.record.id for c in out] == ["b", "a", "c", "d", "e"]
    assert [c.rerank_score for c in out] == [pytest.approx(0.3), 0.0, None, None, None]
    assert out[0].similarity == pytest.approx(0.55) and out[1].similarity == pytest.approx(0.45)
    assert out[2].similarity == pytest.approx(0.7)  # higher than the reranked ones, still below them
    shuffled = [out[3], out[1], out[4], out[2], out[0]]
    assert [c.record.id for c in sorted(shuffled, key=rank_key)] == ["b", "a", "c", "d", "e"]


def test_window_zero_or_no_candidates_calls_no_model() -> None:
    reranker = TableReranker({})
    cands = [cand("a", 0.1, 0.1, 0.3), cand("b", 0.9, 0.9, 0.3)]
    assert [c.record.id for c in rerank(cands, "q", reranker, vector_similarity_weight=0.3, window=0)] == ["b", "a"]
    assert rerank([], "q", reranker, vector_similarity_weight=0.3, window=5) == []
    assert reranker.calls == []


def test_scores_out_of_range_are_clipped_and_a_wrong_count_fails() -> None:
    class Wild:
        name = "wild"

        def __init__(self, scores):
            self.scores = scores

        def score(self, query, documents):
            return np.array(self.scores, dtype=np.float32)

    cands = [cand("a", 0.5, 0.5, 0.3), cand("b", 0.4, 0.4, 0.3)]
    out = rerank(cands, "q", Wild([1.7, float("nan")]), vector_similarity_weight=0.3, window=2)
    assert [c.rerank_score for c in out] == [1.0, 0.0]
    with pytest.raises(ModelError, match="1 passages"):
        rerank(cands, "q", Wild([0.5, 0.5]), vector_similarity_weight=0.3, window=1)


def test_rerank_text_is_title_content_and_keywords() -> None:
    record = ChunkRecord(id="x", kb_id="kb", doc_id="d", version_id="v", content="Body text.",
                         vector=np.zeros(4, dtype=np.float32), document_name="Annual Report.pdf",
                         important_keywords=["revenue", "2023"])
    assert rerank_text(record) == "Annual Report\nBody text.\nrevenue 2023"
    record.document_name, record.important_keywords = "", []
    assert rerank_text(record) == "Body text."


def test_http_reranker_through_the_stage_reorders_by_the_served_scores() -> None:
    query = "battery storage"
    texts = ["cat food prices", "battery storage for solar", "grid battery", "storage units"]
    cands = [cand(t, 0.5, 0.5, 1.0) for t in texts]  # all tied before reranking
    with FakeOpenAIServer() as server:
        out = rerank(cands, query, HttpReranker(server.base_url, "fake-rerank"), vector_similarity_weight=1.0,
                     window=3)
    served = {t: rerank_score(query, t) for t in texts[:3]}
    assert [c.record.id for c in out[:3]] == sorted(served, key=lambda t: -served[t])
    assert out[0].record.id == "battery storage for solar" and out[3].record.id == "storage units"
    assert [c.similarity for c in out[:3]] == pytest.approx(sorted(served.values(), reverse=True))
