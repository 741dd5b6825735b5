"""Tag sets through the REST API and the CLI client on a real server: create, validate, tag, explain, list."""

from __future__ import annotations

import pytest

from ragloom.client import HttpClient
from tests.live import live_server, wait_documents
from tests.retrieval.test_tags import NOTE, QUESTION, tag_csv
from tests.test_api import _keys

pytestmark = pytest.mark.slow


@pytest.fixture
def server(settings):
    with live_server(settings) as live:
        yield live


def test_tag_sets_over_http(server) -> None:
    key, other_key = _keys(server)
    api, other = server.client(key), server.client(other_key)
    tags = api.post("/datasets", json={"name": "it-tags", "chunk_method": "tag"}).json()["id"]
    api.post(f"/datasets/{tags}/documents", files=[("file", ("tags.csv", tag_csv()))])
    assert {d["status"] for d in wait_documents(api, tags)} == {"done"}

    plain = api.post("/datasets", json={"name": "plain"}).json()["id"]
    bad = api.post("/datasets", json={"name": "x", "tag_kb_ids": [plain]})
    assert bad.status_code == 400 and "not a tag set" in bad.json()["message"]
    theirs = other.post("/datasets", json={"name": "x", "tag_kb_ids": [tags]})
    assert theirs.status_code == 404  # another tenant's tag set does not exist for them
    assert other.get(f"/datasets/{tags}/tags").status_code == 404

    notes = api.post("/datasets", json={"name": "notes", "parser_config": {"tag_kb_ids": [tags], "topn_tags": 2}})
    assert notes.status_code == 201, notes.text
    notes_id = notes.json()["id"]
    assert notes.json()["tag_kb_ids"] == [tags] and notes.json()["topn_tags"] == 2
    doc = api.post(f"/datasets/{notes_id}/documents", files=[("file", ("note.md", NOTE.encode()))]).json()
    wait_documents(api, notes_id)
    doc_id = doc["documents"][0]["id"]
    (chunk,) = api.get(f"/datasets/{notes_id}/documents/{doc_id}/chunks").json()["chunks"]
    assert "network" in chunk["tags"]

    res = api.post("/retrieval", json={"question": QUESTION, "dataset_ids": [notes_id], "explain": True,
                                       "cross_languages": ["Chinese"]}).json()
    assert "network" in res["explain"]["query"]["query_tags"]
    crossed = res["explain"]["query"]["cross_languages"]  # no chat model here: searched as asked, and said so
    assert crossed["translations"] == [] and crossed["search_query"] == QUESTION and "no chat model" in crossed["note"]
    assert res["chunks"][0]["rank_feature"] > 0 and "network" in res["chunks"][0]["tags"]
    assert res["explain"]["candidates"][0]["rank_feature"] > 0

    listed = api.get(f"/datasets/{tags}/tags").json()
    assert listed["is_tag_set"] and {"tag": "network", "count": 2} in listed["tags"]
    client = HttpClient(server.url, key)  # what `ragloom --url ... kb tags` calls
    assert client.kb_tags("notes").tags[0].count == 1
    patched = api.patch(f"/datasets/{notes_id}", json={"tag_kb_ids": [], "topn_tags": 4}).json()
    assert patched["tag_kb_ids"] == [] and patched["topn_tags"] == 4


def test_tag_sets_from_the_cli(tmp_path) -> None:
    import json

    from tests.cli import ragloom

    home = tmp_path / "home"
    (tmp_path / "tags.csv").write_bytes(tag_csv())
    (tmp_path / "note.md").write_text(NOTE)
    ragloom(home, "kb", "create", "it-tags", "--method", "tag")
    ragloom(home, "add", "it-tags", str(tmp_path / "tags.csv"))
    created = json.loads(ragloom(home, "--json", "kb", "create", "notes", "--tag-set", "it-tags",
                                 "--topn-tags", "2").stdout)
    assert len(created["tag_kb_ids"]) == 1 and created["topn_tags"] == 2
    ragloom(home, "add", "notes", str(tmp_path / "note.md"))
    (chunk,) = json.loads(ragloom(home, "--json", "chunks", "notes").stdout)["chunks"]
    assert "network" in chunk["tags"]
    listed = json.loads(ragloom(home, "--json", "kb", "tags", "it-tags").stdout)
    assert {"tag": "network", "count": 2} in listed["tags"]
    found = json.loads(ragloom(home, "--json", "search", "notes", QUESTION, "--explain").stdout)
    assert "network" in found["explain"]["query"]["query_tags"] and found["chunks"][0]["rank_feature"] > 0
    ragloom(home, "search", "notes", QUESTION, "--explain")  # the human table (tags in its title) renders
    failed = ragloom(home, "kb", "create", "bad", "--tag-set", "notes", check=False)
    assert failed.returncode != 0 and "not a tag set" in failed.stderr
