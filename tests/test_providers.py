"""Models per workspace (issue 12): chat, embedding and rerank providers set through the API and the
CLI, their API keys encrypted at rest and never shown; a connection test; a workspace's answers,
searches and new knowledge bases use its own providers while another workspace keeps the server's
defaults; a knowledge base keeps its embedding model until it is re-indexed.

The providers are real HTTP servers on loopback (``tests/fakes/openai_server.py``): one stands for
the server's defaults (the environment), one for workspace A's own provider.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db.models import KnowledgeBase, ModelProvider
from ragloom.service.accounts import identity, secrets
from ragloom.worker import run_one
from tests.cli import ragloom
from tests.fakes.openai_server import FakeOpenAIServer
from tests.live import app_client, free_port

API = "/api/v1"
WS_KEY = "sk-workspace-a-0123456789-wxyz"
ENV_KEY = "sk-server-default-key-9876"
REPLY = "The pump needs grease every 450 hours [ID:0]."
NOTE = b"Pump servicing\n\nThe pump needs grease every 450 operating hours.\n"


@dataclass
class Setup:
    client: TestClient
    ctx: Context
    a: dict[str, str]  # workspace A's owner (the bootstrapped admin)
    member: dict[str, str]  # a member of workspace A
    b: dict[str, str]  # the owner of workspace B
    tenant_a: str
    env: FakeOpenAIServer  # the server's default models
    ws: FakeOpenAIServer  # workspace A's own provider


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    with FakeOpenAIServer(default_reply=REPLY) as env, \
            FakeOpenAIServer(default_reply=REPLY, embedding_dim=32) as ws:
        # the fake providers listen on loopback, which a workspace's provider may reach only when allowed
        settings = Settings(home=tmp_path / "home", workers=0, rate_limit_per_minute=0, _env_file=None,
                            outbound_allow=["127.0.0.1/32"], chat_base_url=env.base_url, chat_model="env-chat",
                            chat_api_key=ENV_KEY,
                            embedding_model="openai", embedding_base_url=env.base_url,
                            embedding_model_name="env-embed")
        with app_client(settings) as (client, ctx, admin):
            with ctx.db.session() as s:
                boot = identity.bootstrap(s)
                tenant_a = boot.principal.tenant_id
                bo = identity.add_member(s, tenant_id=tenant_a, email="bo@example.com")
                member = identity.create_api_key(s, tenant_id=tenant_a, user_id=bo.id)
                tenant_b, eve = identity.create_tenant(s, name="other", owner_email="eve@example.com")
                b = identity.create_api_key(s, tenant_id=tenant_b.id, user_id=eve.id)
            yield Setup(client, ctx, admin, _bearer(member.key), _bearer(b.key), tenant_a, env, ws)


def _set(st: Setup, kind: str, *, model: str, base_url: str | None = None, api_key: str | None = WS_KEY,
         headers: dict[str, str] | None = None) -> dict:
    body: dict[str, str] = {"base_url": base_url or st.ws.base_url, "model": model}
    if api_key is not None:
        body["api_key"] = api_key
    res = st.client.put(f"{API}/providers/{kind}", headers=headers or st.a, json=body)
    assert res.status_code == 200, res.text
    return res.json()


def _drain(ctx: Context) -> None:
    while run_one(ctx, "test"):
        pass


def _kb_with_note(st: Setup, headers: dict[str, str], name: str) -> dict:
    kb = st.client.post(f"{API}/datasets", headers=headers, json={"name": name})
    assert kb.status_code == 201, kb.text
    up = st.client.post(f"{API}/datasets/{kb.json()['id']}/documents", headers=headers,
                        files=[("file", ("pump.txt", NOTE, "text/plain"))])
    assert up.status_code == 201, up.text
    _drain(st.ctx)
    docs = st.client.get(f"{API}/datasets/{kb.json()['id']}/documents", headers=headers).json()["documents"]
    assert [d["status"] for d in docs] == ["done"], docs
    return dict(kb.json())


def _chats(server: FakeOpenAIServer) -> list:
    return [r for r in server.requests if r.path == "/v1/chat/completions"]


# --- setting, listing, deleting -------------------------------------------------------------------

def test_a_provider_is_set_and_listed_without_its_key_which_is_stored_encrypted(
        setup: Setup, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    st = setup
    shown = _set(st, "chat", model="ws-chat")
    assert shown["kind"] == "chat" and shown["model"] == "ws-chat" and shown["base_url"] == st.ws.base_url
    assert shown["has_api_key"] is True and shown["api_key_hint"] == "...wxyz" and "api_key" not in shown
    listed = st.client.get(f"{API}/providers", headers=st.a)
    assert listed.status_code == 200 and WS_KEY not in listed.text
    body = listed.json()
    assert [p["kind"] for p in body["providers"]] == ["chat"] and body["total"] == 1
    in_use = {m["kind"]: m for m in body["in_use"]}
    assert in_use["chat"] == {"kind": "chat", "source": "workspace", "model": "ws-chat"}
    assert in_use["embedding"] == {"kind": "embedding", "source": "server", "model": "openai"}
    assert in_use["rerank"] == {"kind": "rerank", "source": "none", "model": None}

    with st.ctx.db.session() as s:
        row = s.query(ModelProvider).filter_by(tenant_id=st.tenant_a, kind="chat").one()
        assert row.secret and WS_KEY not in row.secret and row.updated_by is not None
        assert secrets.decrypt(st.ctx.settings, row.secret) == WS_KEY

    # the key is kept when it is not given again with the same URL, refused with another, cleared by ""
    kept = _set(st, "chat", model="ws-chat-2", api_key=None)
    assert kept["has_api_key"] is True and kept["model"] == "ws-chat-2"
    moved = st.client.put(f"{API}/providers/chat", headers=st.a,
                          json={"base_url": "https://elsewhere.example/v1", "model": "x"})
    assert moved.status_code == 400 and "api_key" in moved.json()["message"], moved.text
    assert _set(st, "chat", model="ws-chat", api_key="")["has_api_key"] is False
    for bad in ("ftp://host/v1", "https://user:pw@host/v1", "https://host/v1?key=1", "not a url"):
        res = st.client.put(f"{API}/providers/chat", headers=st.a, json={"base_url": bad, "model": "m"})
        assert res.status_code == 422, (bad, res.text)
    unknown = st.client.put(f"{API}/providers/speech", headers=st.a, json={"base_url": st.ws.base_url, "model": "m"})
    assert unknown.status_code == 404 and "chat, embedding, rerank, vision" in unknown.json()["message"]

    audit = st.client.get(f"{API}/audit", headers=st.a, params={"action": "provider.set"})
    assert audit.json()["total"] == 3 and WS_KEY not in audit.text
    assert st.client.delete(f"{API}/providers/chat", headers=st.a).status_code == 204
    assert st.client.get(f"{API}/providers", headers=st.a).json()["providers"] == []
    assert st.client.delete(f"{API}/providers/chat", headers=st.a).status_code == 404
    deleted = st.client.get(f"{API}/audit", headers=st.a, params={"action": "provider.deleted"}).json()
    assert deleted["total"] == 1 and deleted["events"][0]["target"] == "provider:chat"
    assert not [r for r in caplog.records if WS_KEY in r.getMessage() or WS_KEY in (r.exc_text or "")]


def test_members_only_list_and_another_workspace_sees_nothing(setup: Setup) -> None:
    st = setup
    _set(st, "chat", model="ws-chat")
    refused = st.client.put(f"{API}/providers/chat", headers=st.member,
                            json={"base_url": st.ws.base_url, "model": "mine", "api_key": "sk-member"})
    assert refused.status_code == 403 and "owner or admin" in refused.json()["message"]
    assert st.client.delete(f"{API}/providers/chat", headers=st.member).status_code == 403
    assert st.client.post(f"{API}/providers/chat/test", headers=st.member).status_code == 403
    seen = st.client.get(f"{API}/providers", headers=st.member)
    assert seen.status_code == 200 and WS_KEY not in seen.text
    assert seen.json()["providers"][0]["model"] == "ws-chat"

    theirs = st.client.get(f"{API}/providers", headers=st.b).json()
    assert theirs["providers"] == [] and "ws-chat" not in json.dumps(theirs)
    assert {m["kind"]: m["source"] for m in theirs["in_use"]}["chat"] == "server"
    assert st.client.delete(f"{API}/providers/chat", headers=st.b).status_code == 404
    assert st.client.post(f"{API}/providers/chat/test", headers=st.b).status_code == 404
    with st.ctx.db.session() as s:  # B's own provider does not touch A's
        assert s.query(ModelProvider).count() == 1


# --- the connection test --------------------------------------------------------------------------

def test_the_connection_test_calls_the_provider_once_and_reports_a_failure_clearly(setup: Setup) -> None:
    st = setup
    _set(st, "chat", model="ws-chat")
    _set(st, "embedding", model="ws-embed")
    _set(st, "rerank", model="ws-rerank")
    for kind in ("chat", "embedding", "rerank"):
        res = st.client.post(f"{API}/providers/{kind}/test", headers=st.a)
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["ok"] is True and body["kind"] == kind and body["latency_ms"] >= 0, body
    assert res.json()["message"] == "the reranker scored two texts"
    embedding = st.client.post(f"{API}/providers/embedding/test", headers=st.a).json()
    assert embedding["dimension"] == 32
    chat = _chats(st.ws)[-1]
    assert chat.body["model"] == "ws-chat" and chat.body["max_tokens"] == 1
    assert chat.headers["Authorization"] == f"Bearer {WS_KEY}"
    assert {r.path for r in st.ws.requests} == {"/v1/chat/completions", "/v1/embeddings", "/v1/rerank"}

    closed = f"http://127.0.0.1:{free_port()}/v1"
    _set(st, "chat", model="ws-chat", base_url=closed)
    failed = st.client.post(f"{API}/providers/chat/test", headers=st.a)
    assert failed.status_code == 200, failed.text
    body = failed.json()
    assert body["ok"] is False and "unreachable" in body["message"] and WS_KEY not in failed.text, body
    st.ws.fail_next(401, json.dumps({"error": f"bad key {WS_KEY}"}))  # a provider that echoes the key
    _set(st, "chat", model="ws-chat")
    echoed = st.client.post(f"{API}/providers/chat/test", headers=st.a)
    assert echoed.json()["ok"] is False and "401" in echoed.json()["message"] and WS_KEY not in echoed.text
    assert st.client.post(f"{API}/providers/chat/test", headers=st.a).json()["ok"] is True


# --- which models a workspace uses ----------------------------------------------------------------

def test_workspace_a_answers_with_its_provider_and_workspace_b_with_the_server_s(
        setup: Setup, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    st = setup
    _set(st, "chat", model="ws-chat")
    _set(st, "embedding", model="ws-embed")
    _set(st, "rerank", model="ws-rerank")
    kb_a = _kb_with_note(st, st.a, "pumps")
    assert kb_a["embedding_model"] == f"provider:{st.tenant_a}:ws-embed"
    assert "embedding_note" not in kb_a  # it has the workspace's current model
    embedded = [r for r in st.ws.requests if r.path == "/v1/embeddings"]
    assert embedded and {r.body["model"] for r in embedded} == {"ws-embed"}
    assert all(r.headers["Authorization"] == f"Bearer {WS_KEY}" for r in embedded)
    kb_b = _kb_with_note(st, st.b, "pumps")
    assert kb_b["embedding_model"] == "openai"

    question = {"question": "how often does the pump need grease?"}
    before = len(st.ws.requests)
    answer_a = st.client.post(f"{API}/answer", headers=st.a, json={**question, "dataset_ids": [kb_a["id"]]})
    assert answer_a.status_code == 200, answer_a.text
    assert answer_a.json()["model"] == "ws-chat"
    chat = _chats(st.ws)[-1]
    assert chat.body["model"] == "ws-chat" and chat.headers["Authorization"] == f"Bearer {WS_KEY}"
    assert {r.body["model"] for r in st.ws.requests[before:]} >= {"ws-chat", "ws-embed", "ws-rerank"}

    env_chats, ws_requests = len(_chats(st.env)), len(st.ws.requests)
    answer_b = st.client.post(f"{API}/answer", headers=st.b, json={**question, "dataset_ids": [kb_b["id"]]})
    assert answer_b.status_code == 200, answer_b.text
    assert answer_b.json()["model"] == "env-chat" and len(st.ws.requests) == ws_requests
    chat = _chats(st.env)[-1]
    assert len(_chats(st.env)) == env_chats + 1
    assert chat.body["model"] == "env-chat" and chat.headers["Authorization"] == f"Bearer {ENV_KEY}"

    # the OpenAI-compatible API answers through an assistant: the same workspace model
    assistant = st.client.post(f"{API}/chats", headers=st.a, json={"name": "pumps", "dataset_ids": [kb_a["id"]],
                                                                   "llm": {"model": "ws-chat"}})
    assert assistant.status_code == 201, assistant.text
    refused = st.client.post(f"{API}/chats", headers=st.b, json={"name": "x", "dataset_ids": [kb_b["id"]],
                                                                  "llm": {"model": "ws-chat"}})
    assert refused.status_code == 400 and "env-chat" in refused.json()["message"]
    completion = st.client.post(f"{API}/openai/v1/chat/completions", headers=st.a, json={
        "model": "pumps", "messages": [{"role": "user", "content": question["question"]}]})
    assert completion.status_code == 200, completion.text
    assert _chats(st.ws)[-1].body["model"] == "ws-chat"

    assert WS_KEY not in answer_a.text + answer_b.text + completion.text
    assert not [r for r in caplog.records if WS_KEY in r.getMessage() or WS_KEY in (r.exc_text or "")]


def test_new_knowledge_bases_refuse_another_workspace_s_provider_and_models_of_another_size(setup: Setup) -> None:
    st = setup
    _set(st, "embedding", model="ws-embed")
    foreign = st.client.post(f"{API}/datasets", headers=st.b, json={
        "name": "sneaky", "embedding_model": f"provider:{st.tenant_a}:ws-embed"})
    assert foreign.status_code == 400 and "not a model of this workspace" in foreign.json()["message"]
    unknown = st.client.post(f"{API}/datasets", headers=st.a, json={"name": "x", "embedding_model": "nope"})
    assert unknown.status_code == 400 and "unknown model" in unknown.json()["message"]
    first = st.client.post(f"{API}/datasets", headers=st.a, json={"name": "server", "embedding_model": "openai"})
    assert first.status_code == 201, first.text  # 64 dimensions: the index of workspace A has that size now
    clash = st.client.post(f"{API}/datasets", headers=st.a, json={"name": "mine"})  # the provider's 32
    assert clash.status_code == 409 and "share one search index" in clash.json()["message"], clash.text


# --- re-index -------------------------------------------------------------------------------------

def test_reindex_moves_a_knowledge_base_to_the_workspace_s_model_and_requeues_its_documents(setup: Setup) -> None:
    st = setup
    kb = _kb_with_note(st, st.a, "pumps")
    assert kb["embedding_model"] == "openai"
    _set(st, "embedding", model="ws-embed")
    shown = st.client.get(f"{API}/datasets/{kb['id']}", headers=st.a).json()
    assert shown["embedding_model"] == "openai"  # kept: it was built with it
    assert f"/datasets/{kb['id']}/reindex" in shown["embedding_note"]
    patch = st.client.patch(f"{API}/datasets/{kb['id']}", headers=st.a, json={"embedding_model": "provider"})
    assert patch.status_code == 422 and "reindex" in patch.json()["message"]
    shared = st.client.patch(f"{API}/datasets/{kb['id']}", headers=st.a, json={"permission": "team"})
    assert shared.status_code == 200, shared.text
    member = st.client.post(f"{API}/datasets/{kb['id']}/reindex", headers=st.member, json={})
    assert member.status_code == 403 and "creator" in member.json()["message"], member.text  # reads, may not change
    assert st.client.post(f"{API}/datasets/{kb['id']}/reindex", headers=st.b, json={}).status_code == 404

    res = st.client.post(f"{API}/datasets/{kb['id']}/reindex", headers=st.a, json={})
    assert res.status_code == 202, res.text
    body = res.json()
    name = f"provider:{st.tenant_a}:ws-embed"
    assert body["previous_embedding_model"] == "openai" and body["embedding_model"] == name
    assert body["documents_queued"] == 1 and body["dataset"]["embedding_model"] == name
    assert "embedding_note" not in body["dataset"]
    docs = st.client.get(f"{API}/datasets/{kb['id']}/documents", headers=st.a).json()["documents"]
    assert [d["status"] for d in docs] == ["queued"]
    with st.ctx.db.session() as s:
        row = s.get(KnowledgeBase, kb["id"])
        assert row is not None and (row.embedding_model, row.embedding_dim) == (name, 32)

    embedded = len([r for r in st.ws.requests if r.path == "/v1/embeddings"])
    _drain(st.ctx)
    docs = st.client.get(f"{API}/datasets/{kb['id']}/documents", headers=st.a).json()["documents"]
    assert [d["status"] for d in docs] == ["done"], docs
    assert len([r for r in st.ws.requests if r.path == "/v1/embeddings"]) > embedded
    found = st.client.post(f"{API}/retrieval", headers=st.a, json={"question": "pump grease",
                                                                   "dataset_ids": [kb["id"]]})
    assert found.status_code == 200 and "450" in found.json()["chunks"][0]["content"], found.text

    # the provider it was built with cannot go while it is in use; moving back to the server's model frees it
    gone = st.client.delete(f"{API}/providers/embedding", headers=st.a)
    assert gone.status_code == 409 and "'pumps'" in gone.json()["message"]
    back = st.client.post(f"{API}/datasets/{kb['id']}/reindex", headers=st.a, json={"embedding_model": "openai"})
    assert back.status_code == 202 and back.json()["embedding_model"] == "openai"
    assert st.client.delete(f"{API}/providers/embedding", headers=st.a).status_code == 204
    actions = [e["action"] for e in st.client.get(f"{API}/audit", headers=st.a).json()["events"]]
    assert actions.count("kb.reindexed") == 2


# --- the command line -----------------------------------------------------------------------------

LOOPBACK = {"RAGLOOM_OUTBOUND_ALLOW": "127.0.0.1/32"}  # the fake provider's address


@pytest.mark.slow
def test_models_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeOpenAIServer(default_reply="pong") as fake:
        shown = json.loads(ragloom(home, "--json", "models", "set", "chat", "--base-url", fake.base_url,
                                   "--model", "cli-chat", "--api-key", WS_KEY, **LOOPBACK).stdout)
        assert shown["model"] == "cli-chat" and shown["has_api_key"] is True
        listed = ragloom(home, "--json", "models", "list", **LOOPBACK)
        assert WS_KEY not in listed.stdout + listed.stderr
        assert json.loads(listed.stdout)["providers"][0]["api_key_hint"] == "...wxyz"
        tested = ragloom(home, "--json", "models", "test", "chat", **LOOPBACK)
        assert json.loads(tested.stdout)["ok"] is True
        assert _chats(fake)[-1].headers["Authorization"] == f"Bearer {WS_KEY}"
    closed = f"http://127.0.0.1:{free_port()}/v1"
    ragloom(home, "models", "set", "chat", "--base-url", closed, "--model", "cli-chat", "--api-key", WS_KEY,
            **LOOPBACK)
    failed = ragloom(home, "models", "test", "chat", check=False, **LOOPBACK)
    assert failed.returncode == 1 and "failed" in failed.stdout and WS_KEY not in failed.stdout + failed.stderr
    ragloom(home, "models", "delete", "chat")
    assert json.loads(ragloom(home, "--json", "models", "list").stdout)["providers"] == []
    missing = ragloom(home, "models", "delete", "chat", check=False)
    assert missing.returncode == 2 and "no chat provider" in missing.stderr
