"""The knowledge graph wired in (issue 14): settings, the ``graph`` build run by the worker on real engines
(tantivy, the offline embedder, SQLite), the graph API, KG retrieval (``use_kg``) cited in answers, deletion,
resume without duplicates, and the light method against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.config import Settings
from ragloom.retrieval import graph_evidence
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.graph.texts import ENGINES, LABS, PUMPS, ScriptedExtractor
from tests.live import app_client
from tests.test_builds import API, World, chat_calls, drain

CHUNKING = {"chunk_token_num": 40, "heading_prefix": False}


def markdown(chunks: list[tuple[str, str, str]]) -> bytes:
    return "\n\n".join(text for _, _, text in chunks).encode()


DOCS = {"pumps.md": markdown(PUMPS), "labs.md": markdown(LABS), "engines.md": markdown(ENGINES)}


class GraphWorld(World):
    def graph_dataset(self, name: str, graphrag: dict[str, Any] | None = None) -> str:
        body: dict[str, Any] = {"name": name, "parser_config": CHUNKING}
        if graphrag is not None:
            body["graphrag"] = graphrag
        self.kb = self.ok(self.post("/datasets", json=body))["id"]
        return self.kb

    def build(self, **body: Any) -> dict[str, Any]:
        return self.ok(self.post(f"/datasets/{self.kb}/builds", json={"kind": "graph", **body}))

    def graph(self, **params: Any) -> dict[str, Any]:
        return self.ok(self.get(f"/datasets/{self.kb}/graph", params=params))


def names(view: dict[str, Any]) -> set[str]:
    return {n["name"] for n in view["nodes"]}


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[GraphWorld]:
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with app_client(settings) as (client, ctx, h):
        me = client.get(API + "/auth/me", headers=h).json()
        yield GraphWorld(client, ctx, h, me["workspace"]["id"])


def test_settings_are_validated_stored_and_shown(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("g", {"use_graphrag": True, "method": "offline", "community": True})
    shown = w.ok(w.get(f"/datasets/{w.kb}"))
    assert shown["graphrag"]["use_graphrag"] is True and shown["graphrag"]["community"] is True
    assert shown["graphrag"]["method"] == "offline" and shown["graphrag"]["resolution"] is False
    bad = w.post("/datasets", json={"name": "h", "graphrag": {"method": "magic"}})
    assert bad.status_code == 422 and "graphrag" in bad.text, bad.text
    bad = w.post("/datasets", json={"name": "h", "graphrag": {"use_graphrag": "yes"}})
    assert bad.status_code == 422, bad.text
    changed = w.ok(w.client.patch(f"{API}/datasets/{w.kb}", headers=w.h, json={"graphrag": {"resolution": True}}))
    assert changed["graphrag"]["resolution"] is True and changed["graphrag"]["community"] is True


def test_an_offline_graph_is_built_shown_searched_cited_and_shrinks_on_delete(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("labs", {"community": True, "resolution": True})
    missing = w.get(f"/datasets/{w.kb}/graph")
    assert missing.status_code == 404 and "no knowledge graph" in missing.text
    docs = w.upload(DOCS)
    estimate = w.build(dry_run=True)["estimate"]
    assert estimate["mode"] == "offline" and estimate["llm_calls"] == 0 and estimate["documents_to_build"] == 3
    started = w.build()["builds"][0]
    drain(w.ctx)
    done = w.ok(w.get(f"/datasets/{w.kb}/builds/{started['id']}"))
    assert done["status"] == "done" and done["stats"]["documents_built"] == 3, done

    view = w.graph()
    found = names(view)
    assert {"Kappa Labs", "Orion Pump", "Nordic Motors", "Vega Engine"} <= found, found
    assert view["edges"] and all(e["weight"] > 0 for e in view["edges"])
    assert view["communities"] and all(c["title"] for c in view["communities"])
    assert len(w.graph(limit=3)["nodes"]) == 3
    top = max(view["nodes"], key=lambda n: n["pagerank"])
    assert top["pagerank"] > 0

    # KG retrieval: one evidence item first, with its source chunks
    res = w.ok(w.post("/retrieval", json={"question": "Who works with Kappa Labs on the Orion Pump?",
                                           "dataset_ids": [w.kb], "use_kg": True}))
    first = res["chunks"][0]
    assert first["chunk_id"] == graph_evidence.kg_id(w.kb) and first["document_name"] == "Knowledge graph"
    assert "Kappa Labs" in first["content"] and first["source_ids"]
    plain = w.ok(w.post("/retrieval", json={"question": "Who works with Kappa Labs on the Orion Pump?",
                                             "dataset_ids": [w.kb]}))
    assert all(c["chunk_id"] != first["chunk_id"] for c in plain["chunks"])
    answer = w.ok(w.post("/answer", json={"question": "Who works with Kappa Labs on the Orion Pump?",
                                           "dataset_ids": [w.kb], "use_kg": True}))
    assert graph_evidence.kg_id(w.kb) in {r["chunk_id"] for r in answer["references"]}, answer

    again = w.build()["builds"][0]
    drain(w.ctx)
    rerun = w.ok(w.get(f"/datasets/{w.kb}/builds/{again['id']}"))
    assert rerun["stats"]["documents_built"] == 0 and rerun["stats"]["documents_current"] == 3
    assert names(w.graph()) == found

    w.ok(w.client.request("DELETE", f"{API}/datasets/{w.kb}/documents", headers=w.h,
                          json={"ids": [docs["engines.md"]]}))
    left = names(w.graph())
    assert "Vega Engine" not in left and "Nordic Motors" not in left and "Kappa Labs" in left
    drain(w.ctx)  # communities on: a refresh build runs
    assert "Vega Engine" not in names(w.graph())


def test_a_build_that_fails_while_merging_resumes_without_duplicates(offline: GraphWorld,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.service.builds import graph

    w = offline
    w.graph_dataset("labs")
    w.upload(DOCS)
    real = graph.GraphKind._merge

    def broken(self: Any, *args: Any, **kw: Any) -> str:
        raise RuntimeError("the worker crashed while merging")

    monkeypatch.setattr(graph.GraphKind, "_merge", broken)
    started = w.build()["builds"][0]
    drain(w.ctx)
    failed = w.ok(w.get(f"/datasets/{w.kb}/builds/{started['id']}"))
    assert failed["status"] in ("queued", "failed"), failed
    assert w.get(f"/datasets/{w.kb}/graph").status_code == 404

    monkeypatch.setattr(graph.GraphKind, "_merge", real)
    again = w.build()["builds"][0] if failed["status"] == "failed" else started
    if failed["status"] == "queued":
        from sqlalchemy import update

        from ragloom.db.models import KnowledgeBuild

        with w.ctx.db.session() as s:
            s.execute(update(KnowledgeBuild).where(KnowledgeBuild.id == started["id"]).values(not_before=None))
    drain(w.ctx)
    done = w.ok(w.get(f"/datasets/{w.kb}/builds/{again['id']}"))
    assert done["status"] == "done" and done["stats"]["documents_current"] == 3, done  # nothing extracted twice
    view = w.graph(limit=1000)
    ids = [n["id"] for n in view["nodes"]]
    assert len(ids) == len(set(ids)) and view["entities"] == len(ids)
    pump = next(n for n in view["nodes"] if n["name"] == "Orion Pump")
    assert sorted(pump["doc_ids"]) == sorted(set(pump["doc_ids"])) and len(pump["doc_ids"]) == 2


def test_the_light_method_uses_the_chat_model_and_a_rebuild_costs_no_call(tmp_path: Path) -> None:
    model = ScriptedExtractor(
        entities={"Kappa Labs": ("organization", "A lab that tests pumps"),
                  "Orion Pump": ("product", "A pump"),
                  "Ann Berg": ("person", "Director of Kappa Labs")},
        relations=[("Kappa Labs", "Orion Pump", "tests it", "testing", 8.0),
                   ("Ann Berg", "Kappa Labs", "directs it", "leadership", 9.0)])
    with FakeOpenAIServer(responder=model) as llm:
        settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, chat_base_url=llm.base_url,
                            chat_model="fake-chat", chat_api_key="sk-test", _env_file=None)
        with app_client(settings) as (client, ctx, h):
            me = client.get(API + "/auth/me", headers=h).json()
            w = GraphWorld(client, ctx, h, me["workspace"]["id"])
            w.graph_dataset("labs", {"method": "light"})
            w.upload({"pumps.md": DOCS["pumps.md"], "labs.md": DOCS["labs.md"]})
            estimate = w.build(dry_run=True)["estimate"]
            assert estimate["mode"] == "light" and estimate["llm_calls"] >= 2 and chat_calls(llm) == 0
            w.build()
            drain(w.ctx)
            calls = chat_calls(llm)
            assert calls >= 2 and model.seen["extract"] >= 2
            view = w.graph()
            assert {n.upper() for n in names(view)} == {"KAPPA LABS", "ORION PUMP", "ANN BERG"}  # names upper-cased
            edge = next(e for e in view["edges"] if "tests it" in e["description"])
            assert edge["weight"] > 0

            # a rebuild from scratch (the parts forgotten) is answered from the LLM cache
            from sqlalchemy import delete

            from ragloom.db.models import KnowledgePart

            with w.ctx.db.session() as s:
                s.execute(delete(KnowledgePart).where(KnowledgePart.kb_id == w.kb))
            again = w.build()["builds"][0]
            drain(w.ctx)
            done = w.ok(w.get(f"/datasets/{w.kb}/builds/{again['id']}"))
            assert done["status"] == "done" and done["stats"]["documents_built"] == 2, done
            assert chat_calls(llm) == calls and done["stats"]["llm"]["cache_hits"] >= 2
            assert names(w.graph()) == names(view)


def test_bad_graph_requests(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("labs", {"method": "light"})
    w.upload({"pumps.md": DOCS["pumps.md"]})
    no_model = w.post(f"/datasets/{w.kb}/builds", json={"kind": "graph"})
    assert no_model.status_code == 400 and "chat model" in no_model.text, no_model.text
    assert w.get(f"/datasets/{w.kb}/graph", params={"limit": 0}).status_code in (400, 422)
    assert w.get("/datasets/nope/graph").status_code == 404


def test_deleting_the_graph(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("labs")
    w.upload({"pumps.md": DOCS["pumps.md"]})
    w.build()
    drain(w.ctx)
    entities = len(w.graph(limit=10_000)["nodes"])
    assert entities and w.client.delete(f"{API}/datasets/{w.kb}/knowledge/graph", headers=w.h).json() == {
        "kind": "graph", "removed": entities}
    assert w.get(f"/datasets/{w.kb}/graph").status_code == 404
    res = w.ok(w.post("/retrieval", json={"question": "Who makes the Orion Pump?", "dataset_ids": [w.kb],
                                           "use_kg": True}))
    assert all(c["chunk_id"] != graph_evidence.kg_id(w.kb) for c in res["chunks"])
    w.build()
    drain(w.ctx)
    assert len(w.graph(limit=10_000)["nodes"]) == entities  # built again from nothing


def test_use_graphrag_extracts_each_published_document_by_itself(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("labs", {"use_graphrag": True})
    w.upload({"pumps.md": DOCS["pumps.md"]})  # published: a build of the document is queued and run
    builds = w.ok(w.get(f"/datasets/{w.kb}/builds", params={"kind": "graph"}))["builds"]
    assert [b["trigger"] for b in builds] == ["publish"] and builds[0]["status"] == "done", builds
    assert "Orion Pump" in names(w.graph())
    w.upload({"engines.md": DOCS["engines.md"]})
    assert {"Orion Pump", "Vega Engine"} <= names(w.graph())


def test_an_assistant_with_use_kg_cites_the_graph(offline: GraphWorld) -> None:
    w = offline
    w.graph_dataset("labs")
    w.upload(DOCS)
    w.build()
    drain(w.ctx)
    assistant = w.ok(w.post("/chats", json={"name": "kg", "dataset_ids": [w.kb], "retrieval": {"use_kg": True}}))
    reply = w.ok(w.post(f"/chats/{assistant['id']}/completions",
                        json={"question": "Who works with Kappa Labs on the Orion Pump?"}))
    refs = {r["chunk_id"]: r for r in reply["references"]}
    assert graph_evidence.kg_id(w.kb) in refs, reply
    assert refs[graph_evidence.kg_id(w.kb)]["status"] == "current"
