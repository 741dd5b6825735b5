"""``ragloom eval --answers``: gold answers in the set, normalised matching, and the scores of the
extractive answerer and of a chat model (a fake OpenAI-compatible server) side by side."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.dataflow import Answer, Citation
from ragloom.db.models import KnowledgeBase
from ragloom.errors import InvalidRequestError
from ragloom.evaluation import load_dataset, run_eval, shipped_set
from ragloom.evaluation.answers import cited_sentences as count_cited
from ragloom.evaluation.answers import contains_gold, normalise
from ragloom.service.accounts import identity
from tests.cli import ragloom
from tests.fakes.openai_server import FakeOpenAIServer

CORPUS = [
    {"id": "p1", "text": "The lighthouse on Skerry Point was automated in 1987. Its last keeper retired that year."},
    {"id": "p2", "text": "Sea kayaks should be rinsed with fresh water after every trip in salt water."},
    {"id": "p3", "text": "The ferry timetable changes in October, when the winter schedule begins."},
]
ANSWERABLE = {"id": "q1", "query": "In which year was the Skerry Point lighthouse automated?", "relevant": ["p1"],
              "answer": ["1987"]}
NOT_IN_DOCUMENTS = {"id": "q2", "query": "How many moons does the planet Neptune have?", "relevant": ["p3"],
                    "answer": ["16 moons"]}


def _write_set(folder: Path, queries: list[dict[str, Any]]) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(c) for c in CORPUS) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    return folder


@pytest.fixture
def gold_set(tmp_path: Path) -> Path:
    return _write_set(tmp_path / "gold", [ANSWERABLE, NOT_IN_DOCUMENTS])


# --- matching and counting (no models) ---------------------------------------------------------------

def test_normalise_ignores_case_whitespace_punctuation_and_width() -> None:
    assert normalise("The Answer:  4.2 KG!") == normalise("the answer 4.2kg")
    assert normalise("「战史演武」&「争霸演武」") == normalise("战史演武 争霸演武")
    assert normalise("ＫＪ－５００，２３：１０") == normalise("KJ-500 23:10")  # full-width -> half-width
    assert normalise("It is 80 ℃ [ID:3].") == normalise("it is 80 °C")  # markers dropped, NFKC


def test_contains_gold_accepts_any_gold_answer_inside_the_text() -> None:
    assert contains_gold("The express takes 2 hours 40 minutes [ID:0].", ["4 hours 5 minutes", "2 Hours, 40 minutes"])
    assert contains_gold("末班车 ２３：１０ 从西岭站发出。", ["23:10"])
    assert not contains_gold("The documents do not say.", ["1987"])
    assert not contains_gold("anything", ["", "!!"])  # a gold answer that normalises to nothing never matches


def test_cited_sentences_counts_sentences_with_a_supported_verdict() -> None:
    ans = Answer("a [ID:0]. b [ID:1]. c.", "m", citations=[
        Citation(0, 0, 0.9, True, verdict="supported"),
        Citation(0, 1, 0.2, False, verdict="unsupported"),  # the same sentence: still supported once
        Citation(1, 1, 0.4, True, verdict="weak"),  # kept, but not verified as supported
        Citation(2, 2, None, True),  # no verdict: the supported flag decides
    ])
    assert count_cited(ans) == (3, 2)
    assert count_cited(Answer("nothing", "m", insufficient=True)) == (0, 0)


def test_the_dataset_reads_gold_answers(tmp_path: Path) -> None:
    queries = [ANSWERABLE, {**NOT_IN_DOCUMENTS, "answer": "16 moons"}, {"id": "q3", "query": "x", "relevant": ["p2"]},
               {"id": "q4", "query": "y", "relevant": ["p2"], "answer": ["a", "a", " ", "b"]}]
    data = load_dataset(_write_set(tmp_path / "set", queries))
    assert [q.answers for q in data.queries] == [("1987",), ("16 moons",), (), ("a", "b")]
    bad = _write_set(tmp_path / "bad", [{**ANSWERABLE, "answer": [1987]}])
    with pytest.raises(InvalidRequestError, match="'answer' must be a list of strings"):
        load_dataset(bad)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_shipped_query_has_gold_answers_found_in_its_passages(language: str) -> None:
    data = load_dataset(shipped_set(language))
    texts = {c.id: c.text or "" for c in data.corpus}
    for q in data.queries:
        assert q.answers, q.id
        for gold in q.answers:
            assert any(gold in texts[r] for r in q.relevant), (q.id, gold)


def test_answers_need_gold_answers_before_anything_is_ingested(ctx: Context, principal: Principal,
                                                              tmp_path: Path) -> None:
    plain = _write_set(tmp_path / "plain", [{k: v for k, v in ANSWERABLE.items() if k != "answer"}])
    with pytest.raises(InvalidRequestError, match="no query has gold answers"):
        run_eval(ctx, principal, plain, modes=("keyword",), answers=True)
    with ctx.db.session() as s:
        assert s.scalar(select(func.count()).select_from(KnowledgeBase)) == 0


# --- end to end --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_extractive_answers_one_answerable_one_not_in_the_documents(ctx: Context, principal: Principal,
                                                                    gold_set: Path) -> None:
    seen: list[str] = []
    report = run_eval(ctx, principal, gold_set, modes=("keyword",), answers=True,
                      progress=lambda stage, done, total: seen.append(stage))
    assert report.answers is not None and "answer" in seen
    assert [a.name for a in report.answers.answerers] == ["extractive"]
    ext = report.answers.answerer("extractive")
    by_id = {o.query_id: o for o in ext.outcomes}
    assert by_id["q1"].correct and not by_id["q1"].refused, by_id["q1"].text
    assert by_id["q2"].refused and not by_id["q2"].correct, by_id["q2"].text
    assert ext.accuracy == 0.5 and ext.refusal_rate == 0.5
    assert ext.citation_support == 1.0  # extractive sentences quote their chunk
    assert ext.errors == 0 and ext.latency(95) >= ext.latency(50) > 0
    assert any("no chat model configured" in n for n in report.answers.notes)
    out = report.to_dict()["answers"]
    assert out["answerers"][0] == {**out["answerers"][0], "answerer": "extractive", "accuracy": 0.5,
                                   "refusal_rate": 0.5, "citation_support": 1.0, "errors": 0}


def _cite_the_lighthouse(body: dict[str, Any]) -> str:
    """Answer like a model would: asked about the lighthouse, cite the evidence block that holds the fact;
    asked anything else, say the documents do not tell."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "lighthouse" not in body["messages"][-1]["content"]:
        return "I do not know."
    for block in prompt.split("ID: ")[1:]:
        n = block.split("\n", 1)[0].strip()
        if "automated in 1987" in block:
            return f"The lighthouse on Skerry Point was automated in 1987 [ID:{n}]."
    return "I do not know."


@pytest.fixture
def chat_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=_cite_the_lighthouse) as server:
        yield server


@pytest.mark.slow
def test_the_chat_model_is_measured_beside_the_extractive_answerer(tmp_path: Path, gold_set: Path,
                                                                   chat_server: FakeOpenAIServer) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, embedding_threads=1,
                        chat_base_url=chat_server.base_url, chat_model="fake-chat", chat_api_key="sk-test",
                        _env_file=None)
    ctx = Context(settings)
    ctx.init_storage()
    try:
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        report = run_eval(ctx, principal, gold_set, modes=("keyword",), answers=True)
    finally:
        ctx.close()
    assert report.answers is not None
    assert [(a.name, a.kind) for a in report.answers.answerers] == [("extractive", "extractive"),
                                                                    ("fake-chat", "model")]
    model = report.answers.answerer("model")
    by_id = {o.query_id: o for o in model.outcomes}
    assert by_id["q1"].correct and not by_id["q1"].refused, by_id["q1"].text
    assert by_id["q2"].refused and not by_id["q2"].correct, by_id["q2"].text
    assert model.accuracy == 0.5 and model.refusal_rate == 0.5 and model.errors == 0
    assert model.cited_sentences == 1 and model.citation_support == 1.0
    # one warm-up and one measured call for the answerable query reached the model; the question the documents
    # do not cover gets no chunk over min_relevance (issue 26), so no model call; the extractive side never did
    assert len([r for r in chat_server.requests if r.path.endswith("/chat/completions")]) == 2
    extractive = report.answers.answerer("extractive")
    assert extractive.accuracy == 0.5 and extractive.refusal_rate == 0.5
    assert not any("no chat model" in n for n in report.answers.notes)
    rows = [row["answerer"] for row in report.to_dict()["answers"]["answerers"]]
    assert rows == ["extractive", "fake-chat"]


@pytest.mark.slow
def test_cli_eval_answers_json_is_one_document(tmp_path: Path, gold_set: Path) -> None:
    proc = ragloom(tmp_path / "home", "--json", "eval", str(gold_set), "--answers", "--mode", "keyword",
                   "--limit", "1")
    out = json.loads(proc.stdout)  # exactly one JSON document on stdout
    assert out["queries"] == 1 and [m["mode"] for m in out["modes"]] == ["keyword"]
    answers = out["answers"]
    assert answers["queries"] == 1 and answers["top_n"] == 6
    assert [a["answerer"] for a in answers["answerers"]] == ["extractive"]
    assert answers["answerers"][0]["accuracy"] == 1.0 and answers["answerers"][0]["refusal_rate"] == 0.0
    assert any("extractive answers only" in n for n in answers["notes"])
    human = ragloom(tmp_path / "home", "eval", str(gold_set), "--answers", "--mode", "keyword").stdout
    assert "citation support" in human and "extractive" in human and "nDCG@10" in human


def test_a_corpus_limit_keeps_the_queries_its_items_answer(tmp_path: Path) -> None:
    queries = [ANSWERABLE, NOT_IN_DOCUMENTS, {"id": "q3", "query": "x", "relevant": ["p1", "p3"], "answer": ["a"]}]
    folder = _write_set(tmp_path / "set", queries)
    data = load_dataset(folder, max_corpus=2)
    assert [c.id for c in data.corpus] == ["p1", "p2"] and [q.id for q in data.queries] == ["q1"]
    assert [q.id for q in load_dataset(folder, max_corpus=3, max_queries=2).queries] == ["q1", "q2"]
    with pytest.raises(InvalidRequestError, match="no query is answered by the first 1"):
        load_dataset(_write_set(tmp_path / "other", [NOT_IN_DOCUMENTS]), max_corpus=1)


@pytest.mark.slow
def test_cli_eval_over_a_corpus_root_scores_refusals_of_unanswerable_questions(tmp_path: Path) -> None:
    """A set naming its documents under ``--corpus DIR`` (a tiny generated corpus); an ``unanswerable``
    question is right when refused, counted apart from accuracy, and left out of the retrieval scores."""
    root = tmp_path / "corpus"
    (root / "coast").mkdir(parents=True)
    for item in CORPUS:
        (root / "coast" / f"{item['id']}.txt").write_text(str(item["text"]))
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": c["id"], "path": f"coast/{c['id']}.txt"}) + "\n"
                                                 for c in CORPUS))
    queries = [ANSWERABLE, {"id": "q2", "query": "How many moons does the planet Neptune have?", "unanswerable": True}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    proc = ragloom(tmp_path / "home", "--json", "eval", str(folder), "--corpus", str(root), "--answers",
                   "--mode", "keyword")
    out = json.loads(proc.stdout)
    assert out["queries"] == 2 and out["modes"][0]["queries"] == 1  # the unanswerable one has nothing to rank
    assert any("1 unanswerable queries not in the retrieval scores" in n for n in out["notes"])
    ext = out["answers"]["answerers"][0]
    assert out["answers"]["queries"] == 2
    assert ext["accuracy"] == 1.0 and ext["refusal_rate"] == 0.0  # over the answerable question
    assert ext["unanswerable"] == 1 and ext["unanswerable_refused"] == 1.0
    assert ext["gold_in_evidence"] == 1.0  # the lighthouse passage was among the evidence
    assert 0.0 <= ext["unanswerable_without_evidence"] <= 1.0
    human = ragloom(tmp_path / "home", "eval", str(folder), "--corpus", str(root), "--answers",
                    "--mode", "keyword").stdout
    assert "unanswerable refused" in human and "gold in evidence" in human
