"""Working with a document's versions (issue 27): replace its file keeping its id, list its versions with
why and by whom, roll back at once without parsing, compare two versions; the last RAGLOOM_KEEP_VERSIONS
versions keep their chunks; another workspace's versions are not found."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import Task
from ragloom.docstore.base import Filters
from ragloom.service.accounts import identity
from ragloom.service.documents import versions
from ragloom.worker import run_one

API = "/api/v1"
V1 = "# Pump manual\n\nThe pump is serviced every 90 days by the harbor crew.\n\n## Filters\n\n" \
     "Replace the copper filter when the signal lamp is red.\n"
V2 = "# Pump manual\n\nThe pump is serviced every 45 days by the zeppelin mechanic.\n\n## Filters\n\n" \
     "Replace the copper filter when the signal lamp is red.\n\n## Storage\n\nKeep the spare impeller dry.\n"
V3 = "# Pump manual\n\nThe pump is serviced monthly.\n"


@dataclass
class Doc:
    client: TestClient
    ctx: Context
    headers: dict[str, str]
    kb: str
    doc: str

    @property
    def base(self) -> str:
        return f"{API}/datasets/{self.kb}/documents/{self.doc}"

    def work(self) -> None:
        while run_one(self.ctx, "test"):
            pass

    def replace(self, text: str, *, stage: bool = False) -> dict[str, Any]:
        r = self.client.put(f"{self.base}/file", headers=self.headers, data={"stage": "true"} if stage else {},
                            files={"file": ("whatever.md", text.encode(), "text/markdown")})
        assert r.status_code == 202, r.text
        self.work()
        return dict(r.json())

    def versions(self) -> list[dict[str, Any]]:
        r = self.client.get(f"{self.base}/versions", headers=self.headers)
        assert r.status_code == 200, r.text
        return list(r.json()["versions"])

    def search(self, question: str) -> list[str]:
        r = self.client.post(f"{API}/retrieval", headers=self.headers,
                             json={"question": question, "dataset_ids": [self.kb], "similarity_threshold": 0.0})
        assert r.status_code == 200, r.text
        return [c["content"] for c in r.json()["chunks"]]

    def activate(self, version: int | str) -> Any:
        return self.client.post(f"{self.base}/versions/{version}/activate", headers=self.headers)


def _setup(settings: Settings, tmp_path: Path) -> Iterator[Doc]:
    from tests.live import app_client

    with app_client(settings) as (client, ctx, headers):
        small = {"name": "manuals", "chunk_method": "naive", "parser_config": {"chunk_token_num": 16}}
        kb = client.post(f"{API}/datasets", headers=headers, json=small).json()["id"]
        up = client.post(f"{API}/datasets/{kb}/documents", headers=headers,
                         files=[("file", ("pump.md", V1.encode(), "text/markdown"))])
        assert up.status_code == 201, up.text
        d = Doc(client, ctx, headers, kb, up.json()["documents"][0]["id"])
        d.work()
        yield d


@pytest.fixture
def doc(settings: Settings, tmp_path: Path) -> Iterator[Doc]:
    yield from _setup(settings, tmp_path)


def test_a_new_file_keeps_the_document_and_makes_a_version_with_why_and_by_whom(doc: Doc) -> None:
    before = doc.versions()
    assert [v["number"] for v in before] == [1] and before[0]["reason"] == "upload"
    assert before[0]["created_by"] and before[0]["created_by_name"] and before[0]["active"] and before[0]["kept"]
    out = doc.replace(V2)
    assert out["id"] == doc.doc
    rows = doc.versions()
    assert [(v["number"], v["status"], v["active"], v["reason"]) for v in rows] == [
        (2, "ready", True, "upload"), (1, "superseded", False, "upload")]
    new = rows[0]
    assert new["content_hash"] != rows[1]["content_hash"] and new["chunk_count"] > 0
    assert new["coverage"] and new["parser_config"]["chunk_token_num"] == 16 and new["kept"] and rows[1]["kept"]
    listed = doc.client.get(f"{API}/datasets/{doc.kb}/documents", headers=doc.headers).json()["documents"]
    assert [d["name"] for d in listed] == ["pump.md"]  # one document, its name kept
    assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    assert not any("90 days" in c for c in doc.search("serviced every 90 days harbor crew"))
    # the same content again makes no version; a re-parse does, and a change of settings says so
    doc.replace(V2)
    assert len(doc.versions()) == 2
    assert doc.client.post(f"{doc.base}/reparse", headers=doc.headers).status_code == 202
    doc.work()
    r = doc.client.patch(doc.base, headers=doc.headers,
                         json={"chunk_method": "naive", "parser_config": {"chunk_token_num": 32}})
    assert r.status_code == 202, r.text
    doc.work()
    assert [v["reason"] for v in doc.versions()] == ["settings", "reparse", "upload", "upload"]


def test_rollback_is_instant_and_searches_follow(doc: Doc) -> None:
    doc.replace(V2)
    r = doc.activate(1)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "done" and "rolled back to version 1" in r.json()["message"]
    with doc.ctx.db.session() as s:  # nothing was parsed again
        assert s.query(Task).filter(Task.document_id == doc.doc, Task.status == "queued").count() == 0
    assert any("90 days" in c for c in doc.search("serviced every 90 days harbor crew"))
    assert not any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    rows = {v["number"]: v for v in doc.versions()}
    assert rows[1]["active"] and rows[1]["status"] == "ready" and rows[1]["published_by"]
    assert rows[2]["status"] == "superseded" and rows[2]["kept"]
    # and forward again, by id
    r = doc.activate(rows[2]["id"])
    assert r.status_code == 200, r.text
    assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    assert not any("90 days" in c for c in doc.search("serviced every 90 days harbor crew"))
    # a kept version's rows are in the store but never matched: only the active version's are
    listed = doc.client.get(f"{doc.base}/chunks", headers=doc.headers).json()
    assert listed["version_id"] == rows[2]["id"]
    old_rows, _ = doc.ctx.docstore.list_chunks(
        _tenant(doc), Filters(kb_ids=[doc.kb], version_ids=[rows[1]["id"]], available_only=False))
    assert old_rows and not any(r.available for r in old_rows)
    assert doc.activate(99).status_code == 404


def test_chunk_edits_follow_a_rollback(doc: Doc) -> None:
    doc.replace(V2)
    chunks = doc.client.get(f"{doc.base}/chunks", headers=doc.headers).json()["chunks"]
    filt = next(c for c in chunks if "copper filter" in c["content"])
    new = filt["content"].replace("copper filter", "brass sieve")
    r = doc.client.patch(f"{doc.base}/chunks/{filt['chunk_id']}", headers=doc.headers, json={"content": new})
    assert r.status_code == 200, r.text
    assert doc.activate(1).status_code == 200
    listed = doc.client.get(f"{doc.base}/chunks", headers=doc.headers).json()["chunks"]
    edited = next(c for c in listed if "brass sieve" in c["content"])
    assert edited["edited"] and edited["chunk_id"] != filt["chunk_id"]  # version 1's row, edited
    assert not any("copper filter" in c["content"] for c in listed)
    assert any("brass sieve" in c for c in doc.search("brass sieve signal lamp"))
    assert any("90 days" in c for c in doc.search("serviced every 90 days harbor crew"))


def _tenant(doc: Doc) -> str:
    from ragloom.db.models import Document

    with doc.ctx.db.session() as s:
        row = s.get(Document, doc.doc)
        assert row is not None
        return row.tenant_id


def test_only_the_last_versions_keep_their_chunks(settings: Settings, tmp_path: Path) -> None:
    for doc in _setup(settings.model_copy(update={"keep_versions": 2}), tmp_path):
        doc.replace(V2)
        doc.replace(V3)
        rows = {v["number"]: v for v in doc.versions()}
        assert [rows[n]["kept"] for n in (1, 2, 3)] == [False, True, True]
        assert doc.ctx.docstore.count(_tenant(doc), Filters(kb_ids=[doc.kb], version_ids=[rows[1]["id"]],
                                                            available_only=False)) == 0
        r = doc.activate(1)
        assert r.status_code == 409 and "RAGLOOM_KEEP_VERSIONS" in r.text
        assert doc.activate(2).status_code == 200
        assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
        r = doc.client.get(f"{doc.base}/versions/diff", headers=doc.headers, params={"from": 1, "to": 2})
        assert r.status_code == 409


def test_diff_marks_added_removed_and_changed_chunks(doc: Doc) -> None:
    doc.replace(V2)
    r = doc.client.get(f"{doc.base}/versions/diff", headers=doc.headers)  # default: the one before -> active
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["from_version"], d["to_version"]) == (1, 2)
    changed = [c for c in d["changes"] if c["change"] == "changed"]
    first = changed[0]
    assert first["marked"].endswith("every [-90-] {+45+} days by the [-harbor-] {+zeppelin+}")
    assert first["before_id"] and first["after_id"] and first["similarity"] > 0.5 and d["changed"] == len(changed)
    added = [c for c in d["changes"] if c["change"] == "added"]
    assert any("impeller" in (c["after"] or "") for c in added) and d["added"] == len(added)
    assert d["unchanged"] >= 1  # the filter's paragraph
    back = doc.client.get(f"{doc.base}/versions/diff", headers=doc.headers, params={"from": 2, "to": 1}).json()
    assert back["removed"] == d["added"] and back["changed"] == d["changed"]


def test_a_staged_version_waits_for_review_then_is_published_or_discarded(doc: Doc) -> None:
    doc.replace(V2, stage=True)
    rows = {v["number"]: v for v in doc.versions()}
    assert rows[2]["status"] == "ready" and rows[2]["staged"] and not rows[2]["active"] and rows[2]["kept"]
    assert rows[1]["active"] and rows[2]["published_at"] is None
    assert not any("zeppelin" in c for c in doc.search("zeppelin mechanic"))  # readers still see version 1
    got = doc.client.get(doc.base, headers=doc.headers).json()
    assert got["status"] == "done" and "waits for review" in got["message"]
    d = doc.client.get(f"{doc.base}/versions/diff", headers=doc.headers, params={"from": 1, "to": 2}).json()
    assert d["changed"] >= 1 and d["added"] >= 1  # the reviewer sees what would change
    r = doc.activate(2)  # publish
    assert r.status_code == 200 and r.json()["message"] == "published version 2", r.text
    assert any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    doc.replace(V3, stage=True)
    r = doc.client.post(f"{doc.base}/versions/3/discard", headers=doc.headers)
    assert r.status_code == 200 and r.json()["message"] == "version 3 discarded", r.text
    rows = {v["number"]: v for v in doc.versions()}
    assert rows[3]["status"] == "cancelled" and not rows[3]["kept"] and rows[2]["active"]
    assert doc.ctx.docstore.count(_tenant(doc), Filters(kb_ids=[doc.kb], version_ids=[rows[3]["id"]],
                                                        available_only=False)) == 0
    assert not any("monthly" in c for c in doc.search("serviced monthly"))
    for version in (3, 2, 1):  # discarded, live, never staged: none waits for review
        assert doc.client.post(f"{doc.base}/versions/{version}/discard", headers=doc.headers).status_code == 409
    assert doc.activate(3).status_code == 409
    # a re-parse takes the live version's file, not the discarded one's
    assert doc.client.post(f"{doc.base}/reparse", headers=doc.headers).status_code == 202
    doc.work()
    assert doc.versions()[0]["content_hash"] == rows[2]["content_hash"]


def test_a_knowledge_base_that_reviews_versions_holds_every_new_one_but_a_reindex(doc: Doc) -> None:
    r = doc.client.patch(f"{API}/datasets/{doc.kb}", headers=doc.headers, json={"review_versions": True})
    assert r.status_code == 200 and r.json()["review_versions"] is True, r.text
    doc.replace(V2)  # no stage asked: the knowledge base's setting holds it
    rows = {v["number"]: v for v in doc.versions()}
    assert rows[2]["staged"] and rows[2]["status"] == "ready" and rows[1]["active"]
    assert not any("zeppelin" in c for c in doc.search("zeppelin mechanic"))
    assert doc.client.post(f"{doc.base}/reparse", headers=doc.headers).status_code == 202  # a re-parse waits too
    doc.work()
    assert doc.versions()[0]["staged"] and doc.versions()[0]["number"] == 3
    new = doc.client.post(f"{API}/datasets/{doc.kb}/documents", headers=doc.headers,
                          files=[("file", ("valve.md", b"# Valve\n\nThe brass valve opens at dawn.\n",
                                            "text/markdown"))])
    doc.work()
    valve = new.json()["documents"][0]["id"]
    got = doc.client.get(f"{API}/datasets/{doc.kb}/documents/{valve}", headers=doc.headers).json()
    assert "waits for review" in got["message"]  # a new document is reviewed before anyone reads it
    assert not any("brass valve" in c for c in doc.search("brass valve dawn"))
    assert doc.client.post(f"{API}/datasets/{doc.kb}/documents/{valve}/versions/1/activate",
                           headers=doc.headers).status_code == 200
    assert any("brass valve" in c for c in doc.search("brass valve dawn"))
    r = doc.client.post(f"{API}/datasets/{doc.kb}/reindex", headers=doc.headers, json={})
    assert r.status_code == 202, r.text
    doc.work()
    latest = doc.versions()[0]
    assert latest["reason"] == "reindex" and not latest["staged"] and latest["active"]  # never held back
    r = doc.client.patch(f"{API}/datasets/{doc.kb}", headers=doc.headers, json={"review_versions": False})
    assert r.json()["review_versions"] is False
    doc.replace(V3)
    assert doc.versions()[0]["active"] and not doc.versions()[0]["staged"]


def test_a_version_of_another_embedding_model_or_a_dropped_index_is_not_made_live(doc: Doc) -> None:
    from ragloom.db.models import KnowledgeBase
    from ragloom.service.documents import catalog

    doc.replace(V2)
    with doc.ctx.db.session() as s:
        kb = s.get(KnowledgeBase, doc.kb)
        assert kb is not None
        model, kb.embedding_model = kb.embedding_model, "another-model"
    r = doc.activate(1)
    assert r.status_code == 409 and "another-model" in r.text
    with doc.ctx.db.session() as s:
        kb = s.get(KnowledgeBase, doc.kb)
        assert kb is not None
        kb.embedding_model = model
        principal = identity.authenticate(s, doc.headers["Authorization"].split()[1])
    with doc.ctx.db.session() as s:
        catalog.reindex(doc.ctx, s, principal=principal, drop=True)
    assert not any(v["kept"] for v in doc.versions())
    assert doc.activate(1).status_code == 409


def _row(order: int, content: str, table: dict[str, Any] | None = None) -> ChunkRecord:
    import numpy as np

    return ChunkRecord(id=f"r{order}-{hash(content) & 0xffff}", kb_id="k", doc_id="d", version_id="v",
                       content=content, vector=np.zeros(0, dtype=np.float32), order=order, table=table)


def test_table_chunks_show_the_cells_that_changed() -> None:
    head = [["Model"], ["Price", "2025"], ["Price", "2026"]]
    old = {"header_paths": head, "stub_columns": 1, "rows": [["X100", "10", "12"], ["X200", "20", "22"]]}
    new = {"header_paths": head, "stub_columns": 1, "rows": [["X100", "10", "13"], ["X300", "30", "33"]]}
    a = [_row(0, "Intro text stays."), _row(1, "Model X100 10 12 X200 20 22", old)]
    b = [_row(0, "Intro text stays."), _row(1, "Model X100 10 13 X300 30 33", new)]
    changes, unchanged = versions.compare(a, b)
    assert unchanged == 1 and [c.kind for c in changes] == ["changed"]
    cells = {(c.row, c.column): (c.before, c.after) for c in changes[0].cells}
    assert cells[("X100", "Price / 2026")] == ("12", "13")
    assert cells[("X200", "Price / 2025")] == ("20", None) and cells[("X300", "Price / 2026")] == (None, "33")
    assert ("X100", "Price / 2025") not in cells
    assert versions.mark("a b c d", "a x c d e") == "a [-b-] {+x+} c d {+e+}"


def test_another_workspace_s_versions_are_not_found(doc: Doc) -> None:
    doc.replace(V2)
    with doc.ctx.db.session() as s:
        tenant, _owner = identity.create_tenant(s, name="other works", owner_email="owner@other.test")
        key = identity.create_api_key(s, tenant_id=tenant.id, user_id=_owner.id, name="other").key
    other = {"Authorization": f"Bearer {key}"}
    calls = [("GET", f"{doc.base}/versions", {}), ("GET", f"{doc.base}/versions/diff", {}),
             ("POST", f"{doc.base}/versions/1/activate", {}), ("POST", f"{doc.base}/versions/1/discard", {}),
             ("PUT", f"{doc.base}/file", {"files": {"file": ("x.md", b"# hijack", "text/markdown")}})]
    for method, url, extra in calls:
        r = doc.client.request(method, url, headers=other, **extra)
        assert r.status_code == 404, (method, url, r.text)
    assert [v["number"] for v in doc.versions()] == [2, 1] and doc.versions()[0]["active"]


def test_the_cli_adds_a_new_version_lists_compares_and_rolls_back(tmp_path: Path, cli_state: object) -> None:
    import json

    from typer.testing import CliRunner

    from ragloom.cli import app

    home = str(tmp_path / "home")
    runner = CliRunner()

    def run(*args: str, as_json: bool = True) -> Any:
        res = runner.invoke(app, ["--home", home, *(["--json"] if as_json else []), *args])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout) if as_json else res.stdout

    run("kb", "create", "manuals", "--config", json.dumps({"chunk_token_num": 16}))
    pump = tmp_path / "pump.md"
    pump.write_text(V1)
    first = run("add", "manuals", str(pump))["documents"][0]
    pump.write_text(V2)
    second = run("add", "manuals", str(pump))["documents"][0]
    assert second["id"] == first["id"]  # the same document, a new version
    assert [d["name"] for d in run("docs", "manuals")["documents"]] == ["pump.md"]
    listed = run("docs", "versions", "manuals", "pump.md")["versions"]
    assert [(v["number"], v["active"], v["reason"]) for v in listed] == [(2, True, "upload"), (1, False, "upload")]
    table = run("docs", "versions", "manuals", "pump.md", as_json=False)
    assert "superseded" in table and "upload" in table
    d = run("docs", "diff", "manuals", "pump.md", "--from", "1", "--to", "2")
    assert d["changed"] >= 1 and d["added"] >= 1
    shown = run("docs", "diff", "manuals", "pump.md", as_json=False)
    assert "{+45+}" in shown and "impeller" in shown
    back = run("docs", "rollback", "manuals", "pump.md", "--version", "1")
    assert back["message"] == "rolled back to version 1"
    found = run("search", "manuals", "serviced every 90 days harbor crew")["chunks"]
    assert found and "90 days" in found[0]["content"]
    assert [v["active"] for v in run("docs", "versions", "manuals", "pump.md")["versions"]] == [False, True]
    pump.write_text(V3)
    run("add", "manuals", str(pump), "--stage")
    assert "waits for review" in run("docs", "versions", "manuals", "pump.md", as_json=False)
    assert run("docs", "publish", "manuals", "pump.md", "--version", "3")["message"] == "published version 3"
    assert run("kb", "set", "manuals", "--review-versions")["review_versions"] is True
    pump.write_text(V1)
    run("add", "manuals", str(pump))  # held by the knowledge base's setting, no --stage
    assert [(v["number"], v["staged"], v["active"]) for v in run("docs", "versions", "manuals", "pump.md")[
        "versions"]][:2] == [(4, True, False), (3, True, True)]
    assert "new versions go live when built" in run("kb", "set", "manuals", "--publish-when-ready", as_json=False)
    res = runner.invoke(app, ["--home", home, "kb", "set", "manuals"])
    assert res.exit_code == 2 and "nothing to change" in res.output


def test_a_first_version_compared_with_nothing_is_all_added(doc: Doc) -> None:
    r = doc.client.get(f"{doc.base}/versions/diff", headers=doc.headers)
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["from_version"], d["to_version"], d["removed"], d["changed"]) == (0, 1, 0, 0)
    assert d["added"] == len(d["changes"]) > 0 and all(c["change"] == "added" for c in d["changes"])


def test_the_sdk_replaces_stages_compares_publishes_and_discards(doc: Doc) -> None:
    from ragloom.sdk import Ragloom

    rag = Ragloom("http://testserver", doc.headers["Authorization"].split()[1],
                  http=TestClient(doc.client.app, base_url="http://testserver/api/v1"))
    staged = rag.replace_file(doc.kb, doc.doc, ("pump.md", V2.encode()), stage=True)
    assert staged.id == doc.doc
    doc.work()
    listed = rag.list_versions(doc.kb, doc.doc).versions
    assert listed[0].staged and not listed[0].active and listed[0].reason == "upload"
    d = rag.diff_versions(doc.kb, doc.doc, from_version=1, to_version=2)
    assert d.changed >= 1 and any(c.marked and "{+45+}" in c.marked for c in d.changes)
    assert rag.activate_version(doc.kb, doc.doc, 2).message == "published version 2"
    rag.replace_file(doc.kb, doc.doc, ("pump.md", V3.encode()), stage=True)
    doc.work()
    assert rag.discard_version(doc.kb, doc.doc, 3).message == "version 3 discarded"
    assert rag.activate_version(doc.kb, doc.doc, 1).message == "rolled back to version 1"
