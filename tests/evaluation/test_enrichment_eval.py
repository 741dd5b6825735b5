"""``ragloom eval --enrich`` (issue 14): hybrid with and without each enrichment, side by side, with build
time and chat-model calls. On the shipped two-hop set the offline knowledge graph finds the second
passage, which shares no name with the question; keywords and questions need a chat model (the fake
OpenAI-compatible server on loopback here) and are skipped with a note without one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.evaluation import rank_ids, run_eval, shipped_set
from ragloom.evaluation.dataset import load_dataset
from ragloom.service.accounts import identity
from tests.evaluation.test_runner import _cand
from tests.fakes.openai_server import FakeOpenAIServer


def test_multidoc_set_needs_two_passages_each() -> None:
    data = load_dataset(shipped_set("multidoc"))
    assert len(data.queries) >= 30 and len(data.corpus) == 2 * len(data.queries)
    by_id = {c.id: c.text or "" for c in data.corpus}
    for q in data.queries:
        person, site = sorted(q.relevant)  # p.. and s..
        assert person.startswith("p") and site.startswith("s")
        name = " ".join(by_id[person].split()[:2])
        company = by_id[site].split(" runs the ")[0]
        assert name in q.query and company in by_id[person]  # the company links the two passages
        assert company not in q.query and name not in by_id[site]  # ... and only the company
        assert any(a in by_id[site] for a in q.answers)  # the answer is in the second passage


def test_enrichments_side_by_side_offline(ctx: Context, principal: Any) -> None:
    report = run_eval(ctx, principal, shipped_set("multidoc"), modes=("hybrid",), max_corpus=16,
                      enrich=("raptor", "kg", "keywords"))
    assert report.query_count == 8
    names = [e.name for e in report.enrichments]
    assert names == ["kg", "raptor", "raptor+kg"]
    kg = report.enrichments[0]
    assert kg.llm_calls == 0 and kg.how == "offline" and kg.build_seconds > 0
    base = report.mode("hybrid").metrics
    assert kg.result.metrics["Recall@10"] >= base["Recall@10"]
    assert kg.result.metrics["Recall@10"] == 1.0  # both passages of every question, through the graph
    assert report.enrichments[1].how == "extractive"
    assert any("keywords skipped" in n for n in report.notes)
    data = report.to_dict()
    assert [e["enrichment"] for e in data["enrichments"]] == names
    assert "Enrichments" in str(report.enrichment_table().title)


def test_keywords_variant_counts_chat_model_calls(tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        return "1. Who runs the site?" if "questions" in prompt else "harbour, site"

    with FakeOpenAIServer(responder=responder) as server:
        settings = Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, embedding_threads=1,
                            chat_base_url=server.base_url, chat_model="fake-chat", _env_file=None)
        ctx = Context(settings)
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
            report = run_eval(ctx, principal, shipped_set("multidoc"), modes=("hybrid",), max_corpus=6,
                              enrich=("keywords",))
        finally:
            ctx.close()
    (kw,) = report.enrichments
    assert kw.name == "keywords" and "fake-chat" in kw.how
    assert kw.llm_calls == len(server.requests) > 0  # one keywords and one questions call per chunk
    assert kw.llm_calls == 2 * 6


def test_rank_ids_counts_a_built_item_as_its_sources_documents() -> None:
    names = {"a.txt": "a", "b.txt": "b"}
    kg = _cand("Knowledge graph")
    ranked = rank_ids([kg, _cand("a.txt")], names, 10,
                      sources=lambda c: ["b.txt", "a.txt"] if c.record.document_name == "Knowledge graph" else [])
    assert ranked == ["b", "a"]
    assert rank_ids([kg], names, 10) == [None]  # without sources: not a corpus item
