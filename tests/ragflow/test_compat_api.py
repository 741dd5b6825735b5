"""RAGFlow's HTTP API under /ragflow (api/ragflow.py) against the in-process app: each operation's envelope,
RAGFlow's field names, paging and ordering, bulk deletes, RAGFlow's error codes (unknown ids, another
workspace's ids, bad parameters, no key), the not-supported catch-all, /ragflow/openapi.json, and the
setting that turns it off. Every compat route is also called with another workspace's ids."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.service.accounts import identity
from ragloom.states import KeyScope
from ragloom.worker import run_one
from tests.ragflow.helpers import err, ok, two_workspaces, upload_and_parse

B = "/ragflow/api/v1"
PUMP = b"The pump must be serviced every 500 hours of operation. Replace the pump seal when servicing the pump."
FAN = b"The cooling fan runs at 1200 rpm and needs no service during its life."


@dataclass
class Setup:
    client: TestClient
    h: dict[str, str]
    other: dict[str, str]
    read: dict[str, str]
    ds: str
    pump: str
    fan: str
    other_ds: str
    other_doc: str
    other_chunk: str

    def run(self) -> None:
        while run_one(self.client.app.state.ctx, "test"):  # type: ignore[attr-defined]
            pass


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    home = tmp_path_factory.mktemp("ragflow") / "home"
    settings = Settings(home=home, workers=0, worker_poll_seconds=0.05, _env_file=None)
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        spaces = two_workspaces(ctx)
        me = spaces.me
        with ctx.db.session() as s:
            read_key = identity.create_api_key(s, tenant_id=me.tenant_id, user_id=me.user_id, scope=KeyScope.READ).key
        h, other = spaces.headers, spaces.other_headers
        ds = ok(client.post(f"{B}/datasets", json={"name": "manuals", "chunk_method": "naive"}, headers=h))["id"]
        docs = upload_and_parse(client, ds, [("pump.txt", PUMP), ("fan.txt", FAN)], h)
        other_ds = ok(client.post(f"{B}/datasets", json={"name": "secret"}, headers=other))["id"]
        other_doc = upload_and_parse(client, other_ds, [("pump.txt", PUMP)], other)[0]["id"]
        st = Setup(client, h, other, {"Authorization": f"Bearer {read_key}"}, ds, docs[0]["id"], docs[1]["id"],
                   other_ds, other_doc, "")
        st.run()
        listing = ok(client.get(f"{B}/datasets/{other_ds}/documents/{other_doc}/chunks", headers=other))
        st.other_chunk = listing["chunks"][0]["id"]
        yield st


# ---------------------------------------------------------------- datasets


def test_dataset_create_list_update(setup: Setup) -> None:
    c, h = setup.client, setup.h
    sent = {"name": "guides", "avatar": None, "description": None, "embedding_model": None, "permission": "me",
            "chunk_method": "naive"}  # what ragflow-sdk sends
    made = ok(c.post(f"{B}/datasets", json=sent, headers=h))
    assert len(made["id"]) == 32 and made["name"] == "guides" and made["description"] is None
    for key in ("chunk_method", "parser_config", "document_count", "chunk_count", "embedding_model", "permission",
                "tenant_id", "create_time", "pagerank"):
        assert key in made, key
    again = ok(c.post(f"{B}/datasets", json={"name": "guides"}, headers=h))  # RAGFlow de-duplicates the name
    assert again["name"] == "guides(1)" and again["id"] != made["id"]

    r = c.get(f"{B}/datasets", params={"page": 1, "page_size": 30, "orderby": "create_time", "desc": "True"},
              headers=h)
    body = r.json()
    names = [d["name"] for d in body["data"]]
    assert body["code"] == 0 and body["total_datasets"] == len(names) >= 3
    assert names.index("guides(1)") < names.index("guides") < names.index("manuals")  # newest first
    asc = [d["name"] for d in ok(c.get(f"{B}/datasets", params={"desc": "false"}, headers=h))]
    assert asc == names[::-1]
    page2 = ok(c.get(f"{B}/datasets", params={"page": 2, "page_size": 1, "desc": "false"}, headers=h))
    assert [d["name"] for d in page2] == [asc[1]]
    assert ok(c.get(f"{B}/datasets", params={"page": 99}, headers=h)) == []
    assert [d["id"] for d in ok(c.get(f"{B}/datasets", params={"name": "guides"}, headers=h))] == [made["id"]]
    assert [d["id"] for d in ok(c.get(f"{B}/datasets", params={"id": made["id"]}, headers=h))] == [made["id"]]
    both = ok(c.get(f"{B}/datasets", params={"ids": [made["id"], again["id"]]}, headers=h))
    assert {d["id"] for d in both} == {made["id"], again["id"]}
    manuals = ok(c.get(f"{B}/datasets", params={"id": setup.ds}, headers=h))[0]
    assert manuals["document_count"] == 2 and manuals["chunk_count"] >= 2

    updated = ok(c.put(f"{B}/datasets/{made['id']}", json={"description": "updated", "pagerank": 5}, headers=h))
    assert updated["description"] == "updated" and updated["pagerank"] == 5 and updated["name"] == "guides"
    renamed = ok(c.put(f"{B}/datasets/{made['id']}", json={"name": "handbooks"}, headers=h))
    assert renamed["name"] == "handbooks" and renamed["description"] == "updated"


def test_dataset_errors(setup: Setup) -> None:
    c, h = setup.client, setup.h
    assert "at least 1 character" in err(c.post(f"{B}/datasets", json={"name": ""}, headers=h), 101)
    assert "Extra inputs" in err(c.post(f"{B}/datasets", json={"name": "x", "chunk_count": 1}, headers=h), 101)
    assert "chunk_method" in err(c.post(f"{B}/datasets", json={"name": "x", "chunk_method": "nope"}, headers=h), 101)
    assert "page_size" in err(c.get(f"{B}/datasets", params={"page_size": 10_001}, headers=h), 101)
    assert "orderby" in err(c.get(f"{B}/datasets", params={"orderby": "name"}, headers=h), 101)
    assert "lacks permission" in err(c.get(f"{B}/datasets", params={"id": "0" * 32}, headers=h), 102)
    assert "lacks permission" in err(c.get(f"{B}/datasets", params={"name": "no such"}, headers=h), 102)
    assert "no properties" in err(c.put(f"{B}/datasets/{setup.ds}", json={}, headers=h), 102)
    assert "lacks permission" in err(c.put(f"{B}/datasets/{'0' * 32}", json={"description": "x"}, headers=h), 102)


def test_auto_metadata_config_is_the_metadata_the_chat_model_fills_in(setup: Setup) -> None:
    c, h = setup.client, setup.h
    sent = {"enabled": True, "fields": [
        {"name": "author", "type": "string", "description": "The author of the document",
         "examples": ["John Doe"], "restrict_values": False},
        {"name": "category", "type": "list", "description": "Document category", "examples": ["Technical",
                                                                                              "Business"],
         "restrict_values": True}]}
    ds = ok(c.post(f"{B}/datasets", json={"name": "auto-meta", "auto_metadata_config": sent}, headers=h))["id"]
    fields = c.get(f"/api/v1/datasets/{ds}", headers=h).json()["parser_config"]["metadata_fields"]
    assert fields == {"author": "The author of the document; e.g. John Doe",
                      "category": "Document category (a list of values); one of: Technical, Business"}
    ok(c.put(f"{B}/datasets/{ds}", json={"auto_metadata_config": {"enabled": True, "fields": [
        {"name": "year", "type": "time", "description": "Publication year"}]}}, headers=h))
    fields = c.get(f"/api/v1/datasets/{ds}", headers=h).json()["parser_config"]["metadata_fields"]
    assert fields == {"year": "Publication year (a date or time, ISO 8601)"}
    ok(c.put(f"{B}/datasets/{ds}", json={"auto_metadata_config": {"enabled": False, "fields": []}}, headers=h))
    assert c.get(f"/api/v1/datasets/{ds}", headers=h).json()["parser_config"]["metadata_fields"] == {}
    bad = {"name": "x", "auto_metadata_config": {"fields": [{"name": "a", "type": "unknown"}]}}
    assert "Input should be" in err(c.post(f"{B}/datasets", json=bad, headers=h), 101)
    spaced = {"name": "y", "auto_metadata_config": {"fields": [{"name": "two words", "type": "string"}]}}
    assert "two words" in err(c.post(f"{B}/datasets", json=spaced, headers=h), 101)
    ok(c.request("DELETE", f"{B}/datasets", json={"ids": [ds]}, headers=h))


def test_dataset_update_to_a_taken_name_is_refused(setup: Setup) -> None:
    c, h = setup.client, setup.h
    a = ok(c.post(f"{B}/datasets", json={"name": "taken-a"}, headers=h))["id"]
    ok(c.post(f"{B}/datasets", json={"name": "taken-b"}, headers=h))
    assert "already exists" in err(c.put(f"{B}/datasets/{a}", json={"name": "taken-b"}, headers=h), 102)
    assert "re-embed" in err(c.put(f"{B}/datasets/{a}", json={"embedding_model": "openai"}, headers=h), 102)


def test_dataset_bulk_delete(setup: Setup) -> None:
    c, h = setup.client, setup.h
    ids = [ok(c.post(f"{B}/datasets", json={"name": f"bulk{i}"}, headers=h))["id"] for i in range(3)]
    assert ok(c.request("DELETE", f"{B}/datasets", json={"ids": None, "delete_all": False}, headers=h)) == {
        "success_count": 0}
    assert "Duplicate ids" in err(c.request("DELETE", f"{B}/datasets", json={"ids": [ids[0], ids[0]]}, headers=h),
                                  101)
    message = err(c.request("DELETE", f"{B}/datasets", json={"ids": [ids[0], setup.other_ds]}, headers=h), 102)
    assert "lacks permission" in message and setup.other_ds in message
    assert ids[0] in {d["id"] for d in ok(c.get(f"{B}/datasets", headers=h))}  # nothing was deleted
    assert ok(c.request("DELETE", f"{B}/datasets", json={"ids": ids[:2], "delete_all": False}, headers=h)) == {
        "success_count": 2}
    left = {d["id"] for d in ok(c.get(f"{B}/datasets", headers=h))}
    assert ids[2] in left and not left & set(ids[:2])


def test_delete_all_datasets_of_a_workspace(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, _env_file=None)
    with TestClient(create_app(settings)) as c:
        with c.app.state.ctx.db.session() as s:  # type: ignore[attr-defined]
            boot = identity.bootstrap(s)
        assert boot.new_key is not None
        h = {"Authorization": f"Bearer {boot.new_key.key}"}
        for name in ("a", "b"):
            ok(c.post(f"{B}/datasets", json={"name": name}, headers=h))
        assert ok(c.request("DELETE", f"{B}/datasets", json={"delete_all": True}, headers=h)) == {"success_count": 2}
        assert ok(c.get(f"{B}/datasets", headers=h)) == []


# ---------------------------------------------------------------- documents


def test_document_fields_and_listing(setup: Setup) -> None:
    c, h = setup.client, setup.h
    data = ok(c.get(f"{B}/datasets/{setup.ds}/documents",
                    params={"page": 1, "page_size": 30, "orderby": "create_time", "desc": "True",
                            "create_time_from": 0, "create_time_to": 0}, headers=h))
    assert data["total"] == 2
    doc = next(d for d in data["docs"] if d["id"] == setup.pump)
    assert doc["dataset_id"] == setup.ds and doc["run"] == "DONE" and doc["progress"] == 1.0
    assert doc["chunk_count"] >= 1 and doc["chunk_method"] == "naive" and doc["suffix"] == "txt"
    assert doc["size"] == len(PUMP) and doc["type"] == "doc" and doc["location"] == doc["name"]
    for key in ("parser_config", "token_count", "progress_msg", "meta_fields", "status", "create_time",
                "update_time", "thumbnail", "source_type"):
        assert key in doc, key
    assert [d["id"] for d in ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"keywords": "fan"},
                                      headers=h))["docs"]] == [setup.fan]
    assert [d["id"] for d in ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"id": setup.fan},
                                      headers=h))["docs"]] == [setup.fan]
    by_name = ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"orderby": "name", "desc": "false"},
                       headers=h))["docs"]
    assert [d["name"] for d in by_name] == sorted(d["name"] for d in by_name)
    paged = ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"page": 2, "page_size": 1}, headers=h))
    assert paged["total"] == 2 and len(paged["docs"]) == 1
    assert ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"run": "FAIL"}, headers=h))["docs"] == []
    assert len(ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"run": "DONE"}, headers=h))["docs"]) == 2
    assert "orderby" in err(c.get(f"{B}/datasets/{setup.ds}/documents", params={"orderby": "size"}, headers=h), 101)
    assert "run status" in err(c.get(f"{B}/datasets/{setup.ds}/documents", params={"run": "X"}, headers=h), 102)
    assert "don't own the document" in err(c.get(f"{B}/datasets/{setup.ds}/documents", params={"id": "0" * 32},
                                                 headers=h), 102)
    assert "don't own the dataset" in err(c.get(f"{B}/datasets/{'0' * 32}/documents", headers=h), 102)


def test_download(setup: Setup) -> None:
    r = setup.client.get(f"{B}/datasets/{setup.ds}/documents/{setup.pump}", headers=setup.h)
    assert r.status_code == 200 and r.content == PUMP
    assert r.headers["content-disposition"].startswith("attachment")
    assert "not own" in err(setup.client.get(f"{B}/datasets/{setup.ds}/documents/{'0' * 32}", headers=setup.h), 102)


def test_upload_update_parse_and_delete_a_document(setup: Setup) -> None:
    c, h, ds = setup.client, setup.h, setup.ds
    docs = ok(c.post(f"{B}/datasets/{ds}/documents", files=[("file", ("valve.txt", b"The valve opens at 6 bar."))],
                     headers=h))
    doc = docs[0]
    assert doc["run"] == "UNSTART" and doc["progress"] == 0 and doc["dataset_id"] == ds and len(doc["id"]) == 32
    unstarted = ok(c.get(f"{B}/datasets/{ds}/documents", params={"run": "UNSTART"}, headers=h))["docs"]
    assert [d["id"] for d in unstarted] == [doc["id"]]
    assert ok(c.get(f"{B}/datasets/{ds}/documents", params={"run": "0"}, headers=h))["docs"] == unstarted
    setup.run()  # no worker takes it: it waits to be asked
    assert ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]["run"] == \
        "UNSTART"
    r = c.request("DELETE", f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h)
    assert "has not started" in err(r, 102)
    assert "file" in err(c.post(f"{B}/datasets/{ds}/documents", files={"other": ("a.txt", b"x")}, headers=h), 101)
    url = f"{B}/datasets/{ds}/documents/{doc['id']}"
    updated = ok(c.patch(url, json={"name": "relief-valve.txt", "meta_fields": {"author": "alice", "year": 2024}},
                         headers=h))
    assert updated["name"] == "relief-valve.txt" and updated["meta_fields"] == {"author": "alice", "year": 2024}
    replaced = ok(c.put(url, json={"meta_fields": {"author": "bob"}}, headers=h))  # PUT: the deprecated alias
    assert replaced["meta_fields"] == {"author": "bob"}
    assert "extension" in err(c.patch(url, json={"name": "relief-valve.pdf"}, headers=h), 101)
    assert "Duplicated" in err(c.patch(url, json={"name": "fan.txt"}, headers=h), 102)
    assert "not supported" in err(c.patch(url, json={"meta_fields": {"x": {"nested": 1}}}, headers=h), 102)
    assert "doesn't exist" in err(c.patch(url, json={"chunk_method": "nope"}, headers=h), 102)
    qa = ok(c.patch(url, json={"chunk_method": "one"}, headers=h))  # a held document stays held, with its method
    assert qa["run"] == "UNSTART" and qa["chunk_method"] == "one"
    ok(c.post(f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h))  # the first parse
    assert ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]["run"] == \
        "RUNNING"
    setup.run()
    parsed = ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]
    assert parsed["run"] == "DONE" and parsed["chunk_count"] == 1
    own = c.get(f"/api/v1/datasets/{ds}/documents/{doc['id']}/versions", headers=h).json()
    assert [v["chunk_method"] for v in own["versions"]] == ["one"]  # one version: the held one, parsed
    # parse: a new version, published when built
    assert c.post(f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h).json() == {
        "code": 0, "message": "success"}
    state = ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]
    assert state["run"] == "RUNNING" and state["progress"] < 1
    # stop parsing
    ok(c.request("DELETE", f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h))
    state = ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]
    assert state["run"] == "CANCEL"
    r = c.request("DELETE", f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h)
    assert "has not started" in err(r, 102) and r.json()["data"] == {"error_code": "DOC_STOP_PARSING_INVALID_STATE"}
    assert "required" in err(c.post(f"{B}/datasets/{ds}/chunks", json={}, headers=h), 102)
    assert "not found" in err(c.post(f"{B}/datasets/{ds}/chunks", json={"document_ids": ["0" * 32]}, headers=h), 102)
    ok(c.post(f"{B}/datasets/{ds}/chunks", json={"document_ids": [doc["id"]]}, headers=h))
    setup.run()
    state = ok(c.get(f"{B}/datasets/{ds}/documents", params={"id": doc["id"]}, headers=h))["docs"][0]
    assert state["run"] == "DONE" and state["chunk_count"] == 1
    # delete: ids or delete_all, never neither
    docs_url = f"{B}/datasets/{ds}/documents"
    assert "either provide" in err(c.request("DELETE", docs_url, json={"ids": None, "delete_all": False}, headers=h),
                                   102)
    assert "not provide both" in err(c.request("DELETE", docs_url, json={"ids": [doc["id"]], "delete_all": True},
                                               headers=h), 102)
    assert "do not belong" in err(c.request("DELETE", docs_url, json={"ids": [setup.other_doc]}, headers=h), 102)
    assert "Duplicate" in err(c.request("DELETE", docs_url, json={"ids": [doc["id"], doc["id"]]}, headers=h), 101)
    assert ok(c.request("DELETE", docs_url, json={"ids": [doc["id"]], "delete_all": False}, headers=h)) == {
        "deleted": 1}
    assert ok(c.get(docs_url, headers=h))["total"] == 2


def test_a_name_the_dataset_has_is_numbered_as_in_ragflow(setup: Setup) -> None:
    c, h, ds = setup.client, setup.h, setup.ds
    url = f"{B}/datasets/{ds}/documents"
    twice = ok(c.post(url, files=[("file", ("fan.txt", b"A second fan.")), ("file", ("fan.txt", b"A third fan."))],
                      headers=h))
    assert [d["name"] for d in twice] == ["fan(1).txt", "fan(2).txt"] and setup.fan not in [d["id"] for d in twice]
    again = ok(c.post(url, files=[("file", ("fan(2).txt", b"A fourth fan."))], headers=h))
    assert [d["name"] for d in again] == ["fan(3).txt"]
    assert ok(c.get(url, params={"id": setup.fan}, headers=h))["docs"][0]["name"] == "fan.txt"  # left as it was
    mine = f"/api/v1/datasets/{ds}/documents/{again[0]['id']}"
    held = c.get(mine, headers=h).json()  # ragloom's own API: queued, saying why; its re-parse starts it
    assert held["status"] == "queued" and "not parsed until asked" in held["message"], held
    assert c.post(f"{mine}/reparse", headers=h).status_code == 202
    assert ok(c.get(url, params={"id": again[0]["id"]}, headers=h))["docs"][0]["run"] == "RUNNING"
    setup.run()
    assert c.get(mine, headers=h).json()["status"] == "done"
    ok(c.request("DELETE", url, json={"ids": [d["id"] for d in twice + again]}, headers=h))


# ---------------------------------------------------------------- chunks


def test_chunks_list_add_update_delete(setup: Setup) -> None:
    c, h, ds = setup.client, setup.h, setup.ds
    url = f"{B}/datasets/{ds}/documents/{setup.pump}/chunks"
    data = ok(c.get(url, params={"keywords": "", "page": 1, "page_size": 30, "id": ""}, headers=h))
    assert data["total"] == len(data["chunks"]) >= 1 and data["doc"]["id"] == setup.pump
    first = data["chunks"][0]
    assert first["document_id"] == setup.pump and first["dataset_id"] == ds and first["docnm_kwd"] == "pump.txt"
    assert first["available"] is True and "positions" in first and "important_keywords" in first
    sent = {"content": "The pump seal is part 42-A.", "important_keywords": ["seal"], "tag_kwd": [],
            "questions": ["Which part is the seal?"]}
    chunk = ok(c.post(url, json=sent, headers=h))["chunk"]
    assert chunk["document_id"] == setup.pump and chunk["dataset_id"] == ds and chunk["content"] == sent["content"]
    assert "create_time" in chunk and "create_timestamp" in chunk
    assert chunk["important_keywords"] == ["seal"] and chunk["questions"] == ["Which part is the seal?"]
    assert "required" in err(c.post(url, json={"content": "  "}, headers=h), 102)
    listed = ok(c.get(url, headers=h))
    assert listed["total"] == data["total"] + 1
    one = ok(c.get(url, params={"id": chunk["id"]}, headers=h))["chunks"]
    assert [x["id"] for x in one] == [chunk["id"]]
    assert [x["id"] for x in ok(c.get(url, params={"keywords": "42-A"}, headers=h))["chunks"]] == [chunk["id"]]
    paged = ok(c.get(url, params={"page": 2, "page_size": 1}, headers=h))
    assert len(paged["chunks"]) == 1 and paged["total"] == listed["total"]
    assert "Chunk not found" in err(c.get(url, params={"id": "nope"}, headers=h), 102)

    edit = f"{url}/{chunk['id']}"
    assert c.patch(edit, json={"content": "The pump seal is part 42-B.", "available": False}, headers=h).json()[
        "code"] == 0
    row = ok(c.get(url, params={"id": chunk["id"]}, headers=h))["chunks"][0]
    assert row["content"].endswith("42-B.") and row["available"] is False
    assert row["important_keywords"] == ["seal"] and row["questions"] == ["Which part is the seal?"]
    assert c.patch(edit, json={"important_keywords": ["gasket", " "], "questions": []}, headers=h).json()["code"] == 0
    row = ok(c.get(url, params={"id": chunk["id"]}, headers=h))["chunks"][0]
    assert row["important_keywords"] == ["gasket"] and row["questions"] == [] and row["content"].endswith("42-B.")
    assert [x["id"] for x in ok(c.get(url, params={"available": "false"}, headers=h))["chunks"]] == [chunk["id"]]
    assert c.put(edit, json={"available": True}, headers=h).json()["code"] == 0  # PUT: the deprecated alias
    assert ok(c.get(url, params={"id": chunk["id"]}, headers=h))["chunks"][0]["available"] is True
    assert ok(c.patch(url, json={"chunk_ids": [chunk["id"]], "available": False}, headers=h)) is True
    assert ok(c.get(url, params={"id": chunk["id"]}, headers=h))["chunks"][0]["available"] is False
    assert "Can't find" in err(c.patch(f"{url}/nope", json={"content": "x"}, headers=h), 102)

    assert c.request("DELETE", url, json={"chunk_ids": None, "delete_all": False}, headers=h).json()["code"] == 0
    assert "expect 2" in err(c.request("DELETE", url, json={"chunk_ids": [chunk["id"], "nope"]}, headers=h), 102)
    assert ok(c.get(url, headers=h))["total"] == data["total"]  # the existing one was deleted all the same


def test_chunks_of_another_document_or_dataset(setup: Setup) -> None:
    c, h = setup.client, setup.h
    assert "don't own the document" in err(c.get(f"{B}/datasets/{setup.ds}/documents/{'0' * 32}/chunks",
                                                 headers=h), 102)
    assert "page_size" in err(c.get(f"{B}/datasets/{setup.ds}/documents/{setup.pump}/chunks",
                                    params={"page_size": 500}, headers=h), 101)


def test_delete_all_chunks_of_a_document(setup: Setup) -> None:
    c, h, ds = setup.client, setup.h, setup.ds
    doc = upload_and_parse(c, ds, [("gone.txt", b"Short lived text.")], h)[0]["id"]
    setup.run()
    url = f"{B}/datasets/{ds}/documents/{doc}/chunks"
    assert ok(c.get(url, headers=h))["total"] >= 1
    r = c.request("DELETE", url, json={"delete_all": True}, headers=h)
    assert r.json()["code"] == 0 and r.json()["message"].startswith("deleted")
    assert ok(c.get(url, headers=h))["total"] == 0
    ok(c.request("DELETE", f"{B}/datasets/{ds}/documents", json={"ids": [doc]}, headers=h))


# ---------------------------------------------------------------- retrieval


def _retrieve(setup: Setup, **more: Any) -> Any:
    headers = more.pop("headers", setup.h)
    body = {"page": 1, "page_size": 5, "similarity_threshold": 0.0, "vector_similarity_weight": 0.3, "top_k": 1024,
            "rerank_id": None, "keyword": False, "question": "How often must the pump be serviced?",
            "dataset_ids": [setup.ds], "document_ids": [], "cross_languages": None, "metadata_condition": None,
            "use_kg": False, "toc_enhance": False, **more}  # what ragflow-sdk sends
    return setup.client.post(f"{B}/retrieval", json=body, headers=headers)


def test_retrieval(setup: Setup) -> None:
    data = ok(_retrieve(setup))
    assert data["total"] >= 1 and data["chunks"]
    top = data["chunks"][0]
    assert top["document_id"] == setup.pump and top["document_keyword"] == "pump.txt"
    assert top["dataset_id"] == setup.ds and top["highlight"] is None
    for key in ("similarity", "vector_similarity", "term_similarity", "positions", "important_keywords", "id",
                "content"):
        assert key in top, key
    scores = [ch["similarity"] for ch in data["chunks"]]
    assert scores == sorted(scores, reverse=True)
    assert data["doc_aggs"][0] == {"doc_name": "pump.txt", "doc_id": setup.pump,
                                   "count": sum(ch["document_id"] == setup.pump for ch in data["chunks"])}
    assert sum(a["count"] for a in data["doc_aggs"]) == data["total"]
    one = ok(_retrieve(setup, page_size=1))  # the counts are of every match, not of the page
    assert len(one["chunks"]) == 1 and one["doc_aggs"] == data["doc_aggs"]
    if data["total"] > 1:
        second = ok(_retrieve(setup, page=2, page_size=1))
        assert second["doc_aggs"] == data["doc_aggs"]
    marked = ok(_retrieve(setup, highlight=True))["chunks"][0]["highlight"]
    assert "<em>pump</em>" in marked.lower()
    only_fan = ok(_retrieve(setup, document_ids=[setup.fan]))
    assert {ch["document_id"] for ch in only_fan["chunks"]} <= {setup.fan}
    strict = ok(_retrieve(setup, similarity_threshold=0.99))
    assert all(ch["similarity"] >= 0.99 for ch in strict["chunks"])
    assert ok(_retrieve(setup, question="  ")) == {"total": 0, "chunks": [], "doc_aggs": []}


def test_retrieval_metadata_condition(setup: Setup) -> None:
    c, h = setup.client, setup.h
    ok(c.patch(f"{B}/datasets/{setup.ds}/documents/{setup.fan}", json={"meta_fields": {"kind": "fan"}}, headers=h))
    cond = {"logic": "and", "conditions": [{"name": "kind", "comparison_operator": "is", "value": "fan"}]}
    data = ok(_retrieve(setup, question="How fast does the cooling fan run?", metadata_condition=cond))
    assert data["chunks"] and {ch["document_id"] for ch in data["chunks"]} == {setup.fan}
    pump = ok(_retrieve(setup, metadata_condition=cond))  # a question on the pump: its chunks are filtered out
    assert setup.pump not in {ch["document_id"] for ch in pump["chunks"]}
    assert ok(_retrieve(setup, metadata_condition={"logic": "and", "conditions": [
        {"name": "kind", "comparison_operator": "is", "value": "pump"}]}))["chunks"] == []
    bad = {"logic": "and", "conditions": [{"name": "kind", "comparison_operator": "sounds like", "value": "x"}]}
    assert "metadata_condition" in err(_retrieve(setup, metadata_condition=bad), 101)


def test_retrieval_errors(setup: Setup) -> None:
    c, h = setup.client, setup.h
    assert "`question` is required" in err(c.post(f"{B}/retrieval", json={"dataset_ids": [setup.ds]}, headers=h), 102)
    assert "`dataset_ids` is required" in err(c.post(f"{B}/retrieval", json={"question": "x"}, headers=h), 102)
    assert "don't own the dataset" in err(_retrieve(setup, dataset_ids=[setup.other_ds]), 102)
    assert "document" in err(_retrieve(setup, document_ids=[setup.other_doc]), 102)
    assert "top_k" in err(_retrieve(setup, top_k=0), 102)
    assert "page_size" in err(_retrieve(setup, page_size=101), 101)
    assert err(_retrieve(setup, similarity_threshold=2), 101)


# ---------------------------------------------------------------- metadata summary and batch update


def test_metadata_summary_and_batch_update(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, _env_file=None)
    with TestClient(create_app(settings)) as c:
        with c.app.state.ctx.db.session() as s:  # type: ignore[attr-defined]
            boot = identity.bootstrap(s)
        assert boot.new_key is not None
        h = {"Authorization": f"Bearer {boot.new_key.key}"}
        ds = ok(c.post(f"{B}/datasets", json={"name": "meta"}, headers=h))["id"]
        docs = ok(c.post(f"{B}/datasets/{ds}/documents", headers=h,
                         files=[("file", (f"{n}.txt", b"text")) for n in ("a", "b", "c")]))
        a, b, d = (x["id"] for x in docs)
        for doc, meta in ((a, {"author": "alice", "tags": ["x", "y"], "year": 2024}),
                          (b, {"author": "bob", "tags": ["x"], "year": 2019}), (d, {"author": "alice"})):
            ok(c.patch(f"{B}/datasets/{ds}/documents/{doc}", json={"meta_fields": meta}, headers=h))
        summary = ok(c.get(f"{B}/datasets/{ds}/metadata/summary", headers=h))["summary"]
        assert summary["author"] == {"type": "string", "values": [["alice", 2], ["bob", 1]]}
        assert summary["tags"] == {"type": "list", "values": [["x", 2], ["y", 1]]}
        assert summary["year"]["type"] == "number"
        only_b = ok(c.get(f"{B}/datasets/{ds}/metadata/summary", params={"doc_ids": b}, headers=h))["summary"]
        assert only_b["author"]["values"] == [["bob", 1]]

        url = f"{B}/datasets/{ds}/metadata/update"
        cond = {"logic": "and", "conditions": [{"name": "author", "comparison_operator": "is", "value": "alice"}]}
        done = ok(c.post(url, json={"selector": {"metadata_condition": cond},
                                    "updates": [{"key": "team", "value": "blue"}]}, headers=h))
        assert done == {"updated": 2, "matched_docs": 2}
        done = ok(c.post(url, json={"selector": {"document_ids": [a, b]},
                                    "updates": [{"key": "tags", "value": "z", "match": "x"}],
                                    "deletes": [{"key": "year"}]}, headers=h))
        assert done == {"updated": 2, "matched_docs": 2}
        everyone = ok(c.post(url, json={"deletes": [{"key": "author", "value": "bob"}]}, headers=h))
        assert everyone == {"updated": 1, "matched_docs": 3}  # no selector: every document
        listed = {x["id"]: x["meta_fields"] for x in ok(c.get(f"{B}/datasets/{ds}/documents", headers=h))["docs"]}
        assert listed[a] == {"author": "alice", "tags": ["z", "y"], "team": "blue"}
        assert listed[b] == {"tags": ["z"]} and listed[d] == {"author": "alice", "team": "blue"}
        newer = {"logic": "and", "conditions": [{"name": "year", "comparison_operator": ">", "value": 2000}]}
        assert ok(c.post(url, json={"selector": {"metadata_condition": newer}, "updates": [
            {"key": "k", "value": "v"}]}, headers=h)) == {"updated": 0, "matched_docs": 0}
        assert "selector" in err(c.post(url, json={"selector": [1]}, headers=h), 102)
        assert "lists" in err(c.post(url, json={"updates": {}}, headers=h), 102)
        assert "key and value" in err(c.post(url, json={"updates": [{"key": "k"}]}, headers=h), 102)
        assert "requires key" in err(c.post(url, json={"deletes": [{}]}, headers=h), 102)
        assert "do not belong" in err(c.post(url, json={"selector": {"document_ids": ["0" * 32]}}, headers=h), 102)
        assert "don't own the dataset" in err(c.get(f"{B}/datasets/{'0' * 32}/metadata/summary", headers=h), 102)


# ---------------------------------------------------------------- knowledge graph and RAPTOR


def test_raptor_and_graph_triggers(setup: Setup) -> None:
    c, h, ds = setup.client, setup.h, setup.ds
    assert ok(c.get(f"{B}/datasets/{ds}/trace_raptor", headers=h)) == {}  # never built
    started = ok(c.post(f"{B}/datasets/{ds}/run_raptor", headers=h))
    task = started["task_id"]
    assert started["raptor_task_id"] == task
    assert ok(c.post(f"{B}/datasets/{ds}/index", params={"type": "raptor"}, headers=h))["task_id"] == task  # waiting
    setup.run()
    trace = ok(c.get(f"{B}/datasets/{ds}/trace_raptor", headers=h))
    assert trace["id"] == task and trace["task_type"] == "raptor" and trace["progress"] == 1.0, trace
    assert ok(c.get(f"{B}/datasets/{ds}/index", params={"type": "raptor"}, headers=h))["id"] == task
    assert "Invalid index type" in err(c.get(f"{B}/datasets/{ds}/index", params={"type": "mindmap"}, headers=h), 102)
    assert ok(c.get(f"{B}/datasets/{ds}/knowledge_graph", headers=h)) == {"graph": {}, "mind_map": {}}
    assert ok(c.get(f"{B}/datasets/{ds}/graph", headers=h)) == {"graph": {}, "mind_map": {}}
    assert ok(c.get(f"{B}/datasets/{ds}/trace_graphrag", headers=h)) == {}
    empty = ok(c.post(f"{B}/datasets", json={"name": "empty"}, headers=h))["id"]
    assert "No documents" in err(c.post(f"{B}/datasets/{empty}/run_graphrag", headers=h), 102)
    assert "Invalid Dataset ID" in err(c.post(f"{B}/datasets/{'0' * 32}/run_raptor", headers=h), 102)
    # deleting what they built: the RAPTOR summaries, then the (empty) graph
    assert c.request("DELETE", f"{B}/datasets/{ds}/index", params={"type": "raptor"}, headers=h).json() == {
        "code": 0, "data": True, "message": "success"}
    listed = c.get(f"/api/v1/datasets/{ds}/documents/{setup.pump}/chunks", headers=h).json()["chunks"]
    assert listed and all(x["kind"] != "summary" for x in listed)
    assert ok(c.request("DELETE", f"{B}/datasets/{ds}/knowledge_graph", headers=h)) is True
    assert "Invalid index type" in err(c.request("DELETE", f"{B}/datasets/{ds}/index", params={"type": "mindmap"},
                                                 headers=h), 102)
    assert "Invalid Dataset ID" in err(c.request("DELETE", f"{B}/datasets/{setup.other_ds}/knowledge_graph",
                                                 headers=h), 102)
    ok(c.post(f"{B}/datasets/{ds}/run_raptor", headers=h))  # waiting: a delete is refused until it ran
    assert "cancel it first" in err(c.request("DELETE", f"{B}/datasets/{ds}/index", params={"type": "raptor"},
                                              headers=h), 102)
    setup.run()


# ---------------------------------------------------------------- auth, catch-all, health, openapi, the setting


def test_auth(setup: Setup) -> None:
    c = setup.client
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic x"}):
        message = err(c.get(f"{B}/datasets", headers=headers), 401, 401)
        assert message.startswith("<Unauthorized '401: Unauthorized'>")
    r = c.post(f"{B}/datasets/{setup.ds}/documents", files=[("file", ("a.txt", b"x"))],
               headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["message"]  # refused before its body is read (the upload middleware)


def test_a_read_only_key_reads_and_retrieves_but_never_writes(setup: Setup) -> None:
    c, r = setup.client, setup.read
    assert ok(c.get(f"{B}/datasets", params={"id": setup.ds}, headers=r))[0]["id"] == setup.ds
    assert ok(_retrieve(setup, headers=r))["chunks"]  # a search changes nothing
    assert "read-only" in err(c.put(f"{B}/datasets/{setup.ds}", json={"description": "x"}, headers=r), 108)
    assert "read-only" in err(c.post(f"{B}/datasets/{setup.ds}/documents/{setup.pump}/chunks",
                                     json={"content": "x"}, headers=r), 108)


def test_not_supported_and_unknown_routes(setup: Setup) -> None:
    c, h = setup.client, setup.h
    for method, path in (("GET", "/agents"), ("POST", "/agents/x/completions"), ("GET", "/memories"),
                         ("POST", "/files"), ("POST", "/chat/audio/speech"), ("GET", f"/datasets/{setup.ds}/tags"),
                         ("POST", "/searches")):
        message = err(c.request(method, B + path, headers=h), 102)
        assert message == f"{method} /api/v1{path.rstrip('/')} is not supported by ragloom", message
    for method, path in (("GET", f"/datasets/{setup.ds}/metadata/config"),):
        assert "not supported by ragloom yet" in err(c.request(method, B + path, headers=h), 102)
    r = c.get(f"{B}/no/such/route", headers=h)
    assert r.status_code == 404 and r.json() == {"code": 404, "message": f"Not Found: {B}/no/such/route",
                                                 "data": None, "error": "Not Found"}
    assert c.get("/ragflow/elsewhere").status_code == 404


def test_system(setup: Setup) -> None:
    c = setup.client
    assert c.get(f"{B}/system/healthz").json() == {"db": "ok", "redis": "ok", "doc_engine": "ok", "storage": "ok",
                                                   "status": "ok"}
    assert c.get(f"{B}/system/ping").text == "pong"
    assert c.get(f"{B}/system/version").json()["data"].startswith("ragloom-")
    assert c.get(f"{B}/dify/retrieval/health").json() == {"code": 0, "data": True, "message": "success"}


def test_the_requests_ragflows_mcp_server_makes(setup: Setup) -> None:
    """RAGFlow's MCP server (``mcp/server/server.py``) is a client of this API: it lists the datasets 1,000
    at a time (``desc`` as ``requests`` writes it, ``True``, and as ``httpx`` does, ``true``), looks one
    dataset up by id, pages through its documents, and retrieves with its own defaults. Each request is
    sent here as it sends it, and each field it reads is there."""
    c, h = setup.client, setup.h
    for desc in ("True", "true"):
        r = c.get(f"{B}/datasets?page=1&page_size=1000&orderby=create_time&desc={desc}", headers=h)
        listed = ok(r)
        assert setup.ds in [d["id"] for d in listed]
        for d in listed:  # the tool's description lists each dataset's id, name, description, embedding model
            assert {"id", "name", "description", "embedding_model"} <= set(d), d
    one = ok(c.get(f"{B}/datasets", params={"id": setup.ds, "page_size": 1}, headers=h))
    assert [d["name"] for d in one] == ["manuals"]
    docs = ok(c.get(f"{B}/datasets/{setup.ds}/documents", params={"page": 1}, headers=h))
    assert docs["total"] >= 2 and setup.pump in [d["id"] for d in docs["docs"]]
    for d in docs["docs"]:
        assert {"id", "name", "location", "type", "size", "chunk_count", "create_date", "update_date", "token_count",
                "thumbnail", "dataset_id", "meta_fields"} <= set(d), d
    for page_size in (30, 10):  # the old server's default page, the new one's
        body = {"page": 1, "page_size": page_size, "similarity_threshold": 0.2, "vector_similarity_weight": 0.3,
                "top_k": 1024, "rerank_id": None, "keyword": False, "question": "How often must the pump be serviced?",
                "dataset_ids": [setup.ds], "document_ids": []}
        found = ok(c.post(f"{B}/retrieval", json=body, headers=h))
        assert found["total"] >= 1 and found["chunks"][0]["document_id"] == setup.pump
        assert {"dataset_id", "document_keyword", "document_id", "content", "similarity"} <= set(found["chunks"][0])
    # another workspace's key sees none of it: the server's "host" mode passes each caller's own key
    assert setup.ds not in [d["id"] for d in ok(c.get(f"{B}/datasets?page=1&page_size=1000&orderby=create_time"
                                                      "&desc=true", headers=setup.other))]
    assert err(c.get(f"{B}/datasets", params={"page_size": 10_001}, headers=h), 101).count("10000") == 1


def test_dify_retrieval_under_the_ragflow_base(setup: Setup) -> None:
    body = {"knowledge_id": setup.ds, "query": "How often must the pump be serviced?",
            "retrieval_setting": {"top_k": 3, "score_threshold": 0.0}}
    r = setup.client.post(f"{B}/dify/retrieval", json=body, headers=setup.h)
    assert r.status_code == 200 and r.json()["records"][0]["metadata"]["document_id"] == setup.pump
    r = setup.client.post(f"{B}/dify/retrieval", json={**body, "knowledge_id": setup.other_ds}, headers=setup.h)
    assert r.status_code == 404


def test_openapi_document(setup: Setup) -> None:
    doc = setup.client.get("/ragflow/openapi.json").json()
    paths = doc["paths"]
    for path in ("/api/v1/datasets", "/api/v1/datasets/{dataset_id}/documents", "/api/v1/retrieval",
                 "/api/v1/datasets/{dataset_id}/documents/{document_id}/chunks", "/api/v1/datasets/{dataset_id}/chunks",
                 "/api/v1/system/healthz", "/api/v1/dify/retrieval"):
        assert path in paths, path
    schemas = doc["components"]["schemas"]
    assert {"RFDataset", "RFDocument", "RFChunk", "RFRetrievedChunk", "RFError"} <= set(schemas)
    assert "run" in schemas["RFDocument"]["properties"]
    main = setup.client.get("/openapi.json").json()["paths"]
    assert not any(p.startswith("/ragflow") for p in main)  # a document of its own


def test_the_setting_turns_it_off(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, ragflow_compat=False, _env_file=None)
    with TestClient(create_app(settings)) as c:
        assert c.get(f"{B}/system/healthz").status_code == 404
        assert c.get("/ragflow/openapi.json").status_code == 404
        assert c.get("/api/v1/datasets").status_code == 401  # the rest of the API is served


# ---------------------------------------------------------------- isolation: every route with another workspace's ids


CHAT_ROUTES = ("/api/v1/chat", "/api/v1/openai/", "/api/v1/chats_openai/")


def compat_routes(c: TestClient) -> set[tuple[str, str]]:
    """(method, path) of every /ragflow route that takes an id in its path."""
    mount = next(r for r in c.app.routes if getattr(r, "path", "") == "/ragflow")
    return {(m, ctx.path) for ctx in iter_route_contexts(mount.app.routes)  # type: ignore[attr-defined]
            for m in getattr(ctx.original_route, "methods", None) or ()
            if "{" in ctx.path and "{path:path}" not in ctx.path and m != "HEAD"}


def _routes(s: Setup) -> list[tuple[str, str, dict[str, Any]]]:
    ds, doc, ck = s.other_ds, s.other_doc, s.other_chunk
    return [
        ("GET", f"/datasets?id={ds}", {}),
        ("GET", f"/datasets/{ds}", {}),
        ("PUT", f"/datasets/{ds}", {"json": {"description": "mine now"}}),
        ("DELETE", "/datasets", {"json": {"ids": [ds]}}),
        ("POST", f"/datasets/{ds}/documents", {"files": [("file", ("x.txt", b"x"))]}),
        ("GET", f"/datasets/{ds}/documents", {}),
        ("GET", f"/datasets/{s.ds}/documents?id={doc}", {}),
        ("GET", f"/datasets/{ds}/documents/{doc}", {}),
        ("GET", f"/datasets/{s.ds}/documents/{doc}", {}),
        ("PATCH", f"/datasets/{ds}/documents/{doc}", {"json": {"meta_fields": {"a": "b"}}}),
        ("PUT", f"/datasets/{s.ds}/documents/{doc}", {"json": {"meta_fields": {"a": "b"}}}),
        ("DELETE", f"/datasets/{ds}/documents", {"json": {"ids": [doc]}}),
        ("DELETE", f"/datasets/{s.ds}/documents", {"json": {"ids": [doc]}}),
        ("POST", f"/datasets/{ds}/chunks", {"json": {"document_ids": [doc]}}),
        ("POST", f"/datasets/{s.ds}/chunks", {"json": {"document_ids": [doc]}}),
        ("DELETE", f"/datasets/{ds}/chunks", {"json": {"document_ids": [doc]}}),
        ("DELETE", f"/datasets/{s.ds}/chunks", {"json": {"document_ids": [doc]}}),
        ("GET", f"/datasets/{ds}/documents/{doc}/chunks", {}),
        ("GET", f"/datasets/{s.ds}/documents/{doc}/chunks", {}),
        ("POST", f"/datasets/{ds}/documents/{doc}/chunks", {"json": {"content": "mine"}}),
        ("PATCH", f"/datasets/{ds}/documents/{doc}/chunks", {"json": {"chunk_ids": [ck], "available": False}}),
        ("PATCH", f"/datasets/{ds}/documents/{doc}/chunks/{ck}", {"json": {"available": False}}),
        ("PUT", f"/datasets/{ds}/documents/{doc}/chunks/{ck}", {"json": {"content": "mine"}}),
        ("PATCH", f"/datasets/{s.ds}/documents/{s.pump}/chunks/{ck}", {"json": {"available": False}}),
        ("DELETE", f"/datasets/{ds}/documents/{doc}/chunks", {"json": {"chunk_ids": [ck]}}),
        ("DELETE", f"/datasets/{ds}/documents/{doc}/chunks", {"json": {"delete_all": True}}),
        ("DELETE", f"/datasets/{s.ds}/documents/{s.pump}/chunks", {"json": {"chunk_ids": [ck]}}),
        ("POST", f"/datasets/{ds}/run_graphrag", {}),
        ("GET", f"/datasets/{ds}/trace_graphrag", {}),
        ("POST", f"/datasets/{ds}/run_raptor", {}),
        ("GET", f"/datasets/{ds}/trace_raptor", {}),
        ("POST", f"/datasets/{ds}/index?type=graph", {}),
        ("GET", f"/datasets/{ds}/index?type=raptor", {}),
        ("GET", f"/datasets/{ds}/knowledge_graph", {}),
        ("GET", f"/datasets/{ds}/graph", {}),
        ("DELETE", f"/datasets/{ds}/knowledge_graph", {}),
        ("DELETE", f"/datasets/{ds}/index?type=raptor", {}),
        ("GET", f"/datasets/{ds}/metadata/summary", {}),
        ("POST", f"/datasets/{ds}/metadata/update", {"json": {"updates": [{"key": "a", "value": "b"}]}}),
        ("POST", f"/datasets/{s.ds}/metadata/update", {"json": {"selector": {"document_ids": [doc]},
                                                                "updates": [{"key": "a", "value": "b"}]}}),
        ("POST", "/retrieval", {"json": {"question": "pump", "dataset_ids": [ds]}}),
        ("POST", "/retrieval", {"json": {"question": "pump", "dataset_ids": [s.ds], "document_ids": [doc]}}),
    ]


def test_another_workspaces_ids_are_not_found_on_every_route(setup: Setup) -> None:
    c, h = setup.client, setup.h
    tried = set()
    for method, path, kwargs in _routes(setup):
        r = c.request(method, B + path, headers=h, **kwargs)
        assert r.status_code == 200, (method, path, r.text)
        assert r.json()["code"] == 102, (method, path, r.json())
        tried.add((method, path.split("?")[0]))
    assert ok(c.get(f"{B}/datasets", params={"ids": setup.other_ds}, headers=h)) == []  # dropped, as RAGFlow does
    # every compat route that takes a dataset, document or chunk id was tried
    templates = {t for t in compat_routes(c) if not t[1].startswith(CHAT_ROUTES)}  # chats: test_compat_chats.py
    assert len(templates) > 20

    def covers(method: str, template: str) -> bool:
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        return any(m == method and re.match(pattern, "/api/v1" + p) for m, p in tried)

    assert [t for t in templates if not covers(*t)] == []
    # nothing of theirs changed
    o = setup.other
    theirs = ok(c.get(f"{B}/datasets/{setup.other_ds}/documents/{setup.other_doc}/chunks", headers=o))
    assert [x["id"] for x in theirs["chunks"]] == [setup.other_chunk] and theirs["chunks"][0]["available"] is True
    assert theirs["doc"]["meta_fields"] == {}
    assert ok(c.get(f"{B}/datasets", params={"id": setup.other_ds}, headers=o))[0]["description"] is None
