"""Chunk enrichment at ingest (issue 14): the chat model's keywords and questions make a chunk findable
by words it does not contain, its metadata fields fill the document's metadata, and a re-parse costs no
call (the LLM cache). The chat model is tests/fakes/openai_server.py speaking HTTP on loopback; the
search store and the embedder are the real embedded ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.service.accounts import identity
from ragloom.worker import run_one
from tests.fakes.openai_server import FakeOpenAIServer

API = "/api/v1"
TEXT = ("# Filters\n\nReplace the copper filter when the signal lamp above the pump turns red.\n\n"
        "# Night shift\n\nThe harbor pump runs all night while the ferries are moored.\n")


def responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "keywords" in prompt:
        return "zeppelin maintenance, strainer" if "copper filter" in prompt else "nocturnal operation"
    if "questions" in prompt:
        if "copper filter" in prompt:
            return "1. When must the brass strainer be swapped?\n2. What does the red lamp mean?"
        return "1. Does the pump run at night?"
    return '{"author": "Harbor crew", "department": "Maintenance", "unknown": "x"}'


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Any, dict[str, str], FakeOpenAIServer]]:
    with FakeOpenAIServer(responder=responder) as server:
        settings = Settings(home=tmp_path / "home", workers=0, chat_base_url=server.base_url, chat_model="fake-chat",
                            _env_file=None)
        with TestClient(create_app(settings)) as client:
            ctx = client.app.state.ctx  # type: ignore[attr-defined]
            with ctx.db.session() as s:
                boot = identity.bootstrap(s)
            assert boot.new_key is not None
            yield client, ctx, {"Authorization": f"Bearer {boot.new_key.key}"}, server


def _search(client: TestClient, headers: dict[str, str], kb: str, question: str, mode: str = "keyword") -> list[str]:
    r = client.post(f"{API}/retrieval", headers=headers,
                    json={"question": question, "dataset_ids": [kb], "mode": mode, "similarity_threshold": 0.0})
    assert r.status_code == 200, r.text
    return [c["content"] for c in r.json()["chunks"]]


def test_generated_keywords_questions_and_metadata_are_indexed_and_cached(served) -> None:  # type: ignore[no-untyped-def]
    client, ctx, headers, server = served
    config = {"chunk_token_num": 24, "auto_keywords": 2, "auto_questions": 2,
              "metadata_fields": {"author": "who wrote it", "department": "the team it belongs to"}}
    kb = client.post(f"{API}/datasets", headers=headers, json={"name": "harbor", "parser_config": config}).json()["id"]
    up = client.post(f"{API}/datasets/{kb}/documents", headers=headers,
                     files=[("file", ("harbor.md", TEXT.encode(), "text/markdown"))])
    doc = up.json()["documents"][0]["id"]
    while run_one(ctx, "test"):
        pass
    listed = client.get(f"{API}/datasets/{kb}/documents/{doc}", headers=headers).json()
    assert listed["status"] == "done", listed
    assert listed["metadata"]["author"] == "Harbor crew" and listed["metadata"]["department"] == "Maintenance"
    assert "unknown" not in listed["metadata"]  # only the asked fields
    calls = len(server.requests)
    assert calls == 2 * 2 + 1  # keywords and questions of two chunks, metadata once

    # a word only the model's keywords hold finds its chunk; so does a question only the model wrote
    assert any("copper filter" in c for c in _search(client, headers, kb, "zeppelin"))
    assert any("runs all night" in c for c in _search(client, headers, kb, "nocturnal"))
    hits = _search(client, headers, kb, "brass strainer swapped")
    assert hits and "copper filter" in hits[0]

    # a re-parse asks the model nothing: every reply comes from the cache
    assert client.post(f"{API}/datasets/{kb}/documents/{doc}/reparse", headers=headers).status_code == 202
    while run_one(ctx, "test"):
        pass
    assert client.get(f"{API}/datasets/{kb}/documents/{doc}", headers=headers).json()["status"] == "done"
    assert len(server.requests) == calls
    assert any("copper filter" in c for c in _search(client, headers, kb, "zeppelin"))


def test_without_enrichment_settings_no_call_is_made_and_bad_settings_are_refused(served) -> None:  # type: ignore[no-untyped-def]
    client, ctx, headers, server = served
    kb = client.post(f"{API}/datasets", headers=headers, json={"name": "plain"}).json()["id"]
    client.post(f"{API}/datasets/{kb}/documents", headers=headers,
                files=[("file", ("harbor.md", TEXT.encode(), "text/markdown"))])
    while run_one(ctx, "test"):
        pass
    assert server.requests == []
    assert _search(client, headers, kb, "zeppelin") == []
    for bad, word in (({"auto_keywords": 31}, "auto_keywords"), ({"auto_questions": -1}, "auto_questions"),
                      ({"metadata_fields": {"bad name!": "x"}}, "metadata_fields"),
                      ({"metadata_fields": {"a": 5}}, "metadata_fields")):
        r = client.patch(f"{API}/datasets/{kb}", headers=headers, json={"parser_config": bad})
        assert r.status_code == 400 and word in r.json()["message"], r.text


def test_without_a_chat_model_the_document_is_indexed_and_says_why_it_was_not_enriched(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(home=tmp_path / "home", workers=0, _env_file=None)
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            boot = identity.bootstrap(s)
        assert boot.new_key is not None
        headers = {"Authorization": f"Bearer {boot.new_key.key}"}
        kb = client.post(f"{API}/datasets", headers=headers,
                         json={"name": "k", "parser_config": {"auto_keywords": 3}}).json()["id"]
        client.post(f"{API}/datasets/{kb}/documents", headers=headers,
                    files=[("file", ("harbor.md", TEXT.encode(), "text/markdown"))])
        with caplog.at_level("WARNING", logger="ragloom.service.documents.enrichment"):
            while run_one(ctx, "test"):
                pass
        docs = client.get(f"{API}/datasets/{kb}/documents", headers=headers).json()["documents"]
        assert docs[0]["status"] == "done" and docs[0]["chunk_count"] >= 1
        assert _search(client, headers, kb, "copper filter", mode="keyword")
        assert "no chat model: keywords, questions and metadata were not generated" in caplog.text
