"""Source permissions (issue 30), through the API as its users call it: a knowledge base synced from two
folder sources whose documents have readers (a group, one user) and an uploaded note that has none.

Tested like isolation: a member who may not read a document gets no chunk of it from a search, an
answer, a chat, the OpenAI-compatible and Dify endpoints, no line of it in a listing or a count, a 404
for it and its chunks, no graph entity drawn from it and no RAPTOR summary built over it; the reader
gets all of it. Groups change who reads without a sync; a source's readers change with a sync that
reads nothing. The workspace's owner sees everything only when the knowledge base says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.service.accounts import identity
from ragloom.service.builds.raptor_trees import KB_TREE_DOC
from ragloom.worker import run_one
from tests.sources.helpers import write

DEPLOY = "# Deploys\n\nThe Vault Keeper rotates the deploy signing key every thirty days at midnight.\n"
SALARY = "# Pay\n\nAlice Martin earns a salary of 5000 euros a month, paid by Zephyr Payroll.\n"
MENU = "# Canteen\n\nThe canteen serves pasta on Fridays; Pasta Palace delivers it at noon.\n"
HIDDEN_FROM_BOB = {"deploy.md", "salary.md"}


@dataclass
class Setup:
    client: TestClient
    kb: str
    keys: dict[str, dict[str, str]]  # who -> Authorization header
    docs: dict[str, str]  # name -> id
    sources: dict[str, str]  # name -> id
    chat: str


def run_all(ctx: Any) -> None:
    while run_one(ctx, "test-worker"):
        pass


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("permissions")
    shared = tmp / "shared"
    write(shared / "eng" / "deploy.md", DEPLOY)
    write(shared / "pay" / "salary.md", SALARY)
    settings = Settings(home=tmp / "home", workers=0, source_roots=[shared], _env_file=None)
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            keys = {"owner": boot.new_key.key}
            for who in ("alice", "bob"):
                user = identity.add_member(s, tenant_id=boot.principal.tenant_id, email=f"{who.title()}@Example.com")
                keys[who] = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=user.id).key
        auth = {who: {"Authorization": f"Bearer {key}"} for who, key in keys.items()}
        owner = auth["owner"]

        def ok(response: Any) -> Any:
            assert response.status_code < 300, response.text
            return response.json() if response.content else None

        ok(client.post("/api/v1/groups", json={"name": "eng", "members": ["alice@example.com"]}, headers=owner))
        kb = ok(client.post("/api/v1/datasets", json={
            "name": "wiki", "permission": "team", "source_permissions": True,
            "raptor": {"use_raptor": True, "scope": "dataset"}}, headers=owner))["id"]
        sources = {}
        for name, folder, readers in (("eng", "eng", ["group:eng"]), ("pay", "pay", ["alice@example.com"])):
            sources[name] = ok(client.post(f"/api/v1/datasets/{kb}/sources", headers=owner, json={
                "name": name, "type": "folder", "settings": {"path": str(shared / folder)}, "readers": readers}))["id"]
            ok(client.post(f"/api/v1/datasets/{kb}/sources/{sources[name]}/sync", headers=owner))
        ok(client.post(f"/api/v1/datasets/{kb}/documents", headers=owner,
                       files=[("file", ("menu.md", MENU.encode(), "text/markdown"))]))
        run_all(ctx)
        for kind in ("graph", "raptor"):
            ok(client.post(f"/api/v1/datasets/{kb}/builds", json={"kind": kind}, headers=owner))
            run_all(ctx)
        listed = ok(client.get(f"/api/v1/datasets/{kb}/documents", headers=owner | {}))
        chat = ok(client.post("/api/v1/chats", headers=owner, json={
            "name": "helper", "dataset_ids": [kb], "permission": "team"}))["id"]
        ok(client.patch(f"/api/v1/datasets/{kb}", json={"admins_see_all": True}, headers=owner))
        docs = {d["name"]: d["id"] for d in ok(client.get(f"/api/v1/datasets/{kb}/documents", headers=owner))[
            "documents"]}
        ok(client.patch(f"/api/v1/datasets/{kb}", json={"admins_see_all": False}, headers=owner))
        assert {d["name"] for d in listed["documents"]} == {"menu.md"}  # the owner is held to the readers too
        assert set(docs) == {"deploy.md", "salary.md", "menu.md"}
        yield Setup(client, kb, auth, docs, sources, chat)


def search(setup: Setup, who: str, question: str) -> list[dict[str, Any]]:
    """Every chunk a search could return (no threshold, a page larger than the knowledge base)."""
    response = setup.client.post("/api/v1/retrieval", headers=setup.keys[who], json={
        "question": question, "dataset_ids": [setup.kb], "page_size": 100, "similarity_threshold": 0.0,
        "min_relevance": 0.0, "use_kg": True})
    assert response.status_code == 200, response.text
    return list(response.json()["chunks"])


def names(chunks: list[dict[str, Any]]) -> set[str]:
    return {c["document_name"] for c in chunks}


def test_a_search_finds_only_what_the_source_lets_each_caller_read(setup: Setup) -> None:
    question = "When does the Vault Keeper rotate the deploy signing key, and what does Alice earn?"
    bob = search(setup, "bob", question)
    alice = search(setup, "alice", question)
    owner = search(setup, "owner", question)
    hidden = {setup.docs[n] for n in HIDDEN_FROM_BOB} | {KB_TREE_DOC}
    assert bob and not {c["doc_id"] for c in bob} & hidden, bob  # a pre-filter: the menu still answers
    assert "deploy.md" in names(alice) and "salary.md" in names(alice)
    # RAPTOR: alice reads every document, so the knowledge base's summary tree answers her too; bob never
    assert any(c["doc_id"] == KB_TREE_DOC for c in alice), names(alice)
    assert not any("Vault Keeper" in c["content"] or "5000" in c["content"] for c in bob)
    assert {c["doc_id"] for c in owner} & hidden == set()  # owner and admins too, unless the KB says so


def test_the_owner_sees_everything_only_when_the_knowledge_base_says_so(setup: Setup) -> None:
    client, owner = setup.client, setup.keys["owner"]
    try:
        assert client.patch(f"/api/v1/datasets/{setup.kb}", json={"admins_see_all": True},
                            headers=owner).status_code == 200
        assert {"deploy.md", "salary.md"} <= names(search(setup, "owner", "deploy signing key salary"))
        assert client.get(f"/api/v1/datasets/{setup.kb}", headers=owner).json()["document_count"] == 3
        # a member is not an admin: bob still sees the menu only
        assert names(search(setup, "bob", "deploy signing key salary")) <= {"menu.md"}
    finally:
        client.patch(f"/api/v1/datasets/{setup.kb}", json={"admins_see_all": False}, headers=owner)


def test_listings_counts_and_a_hidden_documents_routes_are_404(setup: Setup) -> None:
    client, kb = setup.client, setup.kb
    for who, expected in (("bob", {"menu.md"}), ("alice", {"menu.md", "deploy.md", "salary.md"})):
        listed = client.get(f"/api/v1/datasets/{kb}/documents", headers=setup.keys[who]).json()
        assert {d["name"] for d in listed["documents"]} == expected and listed["total"] == len(expected)
        assert client.get(f"/api/v1/datasets/{kb}", headers=setup.keys[who]).json()["document_count"] == len(expected)
        counts = {d["id"]: d["document_count"] for d in client.get("/api/v1/datasets",
                                                                 headers=setup.keys[who]).json()["datasets"]}
        assert counts[kb] == len(expected)
    deploy = setup.docs["deploy.md"]
    for path in ("", "/chunks", "/versions", "/pages", "/file"):
        bob = client.get(f"/api/v1/datasets/{kb}/documents/{deploy}{path}", headers=setup.keys["bob"])
        assert bob.status_code == 404, (path, bob.text)
        assert "not found" in bob.json()["message"]
    alice = client.get(f"/api/v1/datasets/{kb}/documents/{deploy}/chunks", headers=setup.keys["alice"])
    assert alice.status_code == 200
    # naming the hidden document in a search is a 404 too, never a search of nothing
    asked = client.post("/api/v1/retrieval", headers=setup.keys["bob"], json={
        "question": "deploy key", "dataset_ids": [kb], "document_ids": [deploy]})
    assert asked.status_code == 404, asked.text


def test_answers_chats_and_the_openai_and_dify_endpoints_hold_to_the_readers(setup: Setup) -> None:
    client, kb = setup.client, setup.kb
    question = "How often does the Vault Keeper rotate the deploy signing key?"
    for who, sees in (("bob", False), ("alice", True)):
        key = setup.keys[who]
        answer = client.post("/api/v1/answer", headers=key, json={"question": question, "dataset_ids": [kb]}).json()
        chat = client.post(f"/api/v1/chats/{setup.chat}/completions", headers=key,
                           json={"question": question}).json()
        openai = client.post("/api/v1/openai/v1/chat/completions", headers=key, json={
            "model": setup.chat, "messages": [{"role": "user", "content": question}]}).json()
        dify = client.post("/api/v1/dify/retrieval", headers=key, json={
            "knowledge_id": kb, "query": question,
            "retrieval_setting": {"top_k": 10, "score_threshold": 0.0}}).json()
        said = [answer["answer"], chat["answer"], openai["choices"][0]["message"]["content"],
                " ".join(r["content"] for r in dify["records"])]
        for text in said:
            assert ("thirty days" in text) is sees, (who, text)
        cited = {r["doc_id"] for r in answer.get("references", [])}
        assert (setup.docs["deploy.md"] in cited) is sees, (who, answer.get("references"))
        # a chat's citation of a synced document links back to its source, besides its pages
        links = {r["document_name"]: r["source_url"] for r in chat["references"]}
        if sees:
            assert links["deploy.md"].startswith("file://") and links["deploy.md"].endswith("/eng/deploy.md"), links
        assert links.get("menu.md") is None, links  # uploaded: no source


def test_the_graph_shows_no_entity_drawn_from_a_hidden_document(setup: Setup) -> None:
    def entities(who: str) -> set[str]:
        response = setup.client.get(f"/api/v1/datasets/{setup.kb}/graph", headers=setup.keys[who])
        assert response.status_code == 200, response.text
        return {n["name"].lower() for n in response.json()["nodes"]}

    bob, alice = entities("bob"), entities("alice")
    assert "palace" in bob and "palace" in alice  # the menu's "Pasta Palace", as the offline extractor names it
    assert "vault keeper" in alice and "zephyr payroll" in alice
    assert not {"vault keeper", "zephyr payroll", "alice martin"} & bob, bob


def test_a_group_change_applies_at_once_and_a_readers_change_with_a_sync_that_reads_nothing(setup: Setup) -> None:
    client, kb, owner = setup.client, setup.kb, setup.keys["owner"]
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    question = "deploy signing key Vault Keeper"
    assert "deploy.md" not in names(search(setup, "bob", question))
    try:
        assert client.post("/api/v1/groups/eng/members", json={"emails": ["BOB@example.com"]},
                           headers=owner).json()["members"] == ["alice@example.com", "bob@example.com"]
        assert "deploy.md" in names(search(setup, "bob", question))  # no sync: the group names him now
    finally:
        client.post("/api/v1/groups/eng/members/remove", json={"emails": ["bob@example.com"]}, headers=owner)
    assert "deploy.md" not in names(search(setup, "bob", question))

    source = setup.sources["pay"]
    changed = client.patch(f"/api/v1/datasets/{kb}/sources/{source}", headers=owner,
                           json={"readers": ["user:alice@example.com", "user:bob@example.com"]})
    assert changed.json()["readers"] == ["user:alice@example.com", "user:bob@example.com"]
    try:
        assert "salary.md" not in names(search(setup, "bob", "salary Zephyr Payroll"))  # not before the sync
        client.post(f"/api/v1/datasets/{kb}/sources/{source}/sync", headers=owner)
        run_all(ctx)
        last = client.get(f"/api/v1/datasets/{kb}/sources/{source}", headers=owner).json()["last_sync"]
        assert last["stats"]["unchanged"] == 1 and last["stats"]["changed"] == 0  # nothing read again
        assert "salary.md" in names(search(setup, "bob", "salary Zephyr Payroll"))
    finally:
        client.patch(f"/api/v1/datasets/{kb}/sources/{source}", headers=owner,
                     json={"readers": ["alice@example.com"]})
        client.post(f"/api/v1/datasets/{kb}/sources/{source}/sync", headers=owner)
        run_all(ctx)
    assert "salary.md" not in names(search(setup, "bob", "salary Zephyr Payroll"))


def test_groups_are_the_owners_and_admins_to_change_and_readers_are_checked(setup: Setup) -> None:
    client, kb = setup.client, setup.kb
    assert client.get("/api/v1/groups", headers=setup.keys["bob"]).json()["groups"][0]["name"] == "eng"
    refused = client.post("/api/v1/groups", json={"name": "mine"}, headers=setup.keys["bob"])
    assert refused.status_code == 403 and "owner or an admin" in refused.json()["message"]
    assert client.post("/api/v1/groups/eng/members", json={"emails": ["bob@example.com"]},
                       headers=setup.keys["bob"]).status_code == 403
    bad = client.post("/api/v1/groups", json={"name": "x", "members": ["not-an-address"]}, headers=setup.keys["owner"])
    assert bad.status_code == 400 and "not-an-address" in bad.json()["message"]
    again = client.post("/api/v1/groups", json={"name": "eng"}, headers=setup.keys["owner"])
    assert again.status_code == 409
    reader = client.patch(f"/api/v1/datasets/{kb}/sources/{setup.sources['eng']}", headers=setup.keys["owner"],
                          json={"readers": ["everyone"]})
    assert reader.status_code == 400 and "'everyone'" in reader.json()["message"]
    assert client.get("/api/v1/groups/no-such-group", headers=setup.keys["owner"]).status_code == 404


def test_another_workspaces_group_is_not_found(setup: Setup) -> None:
    ctx = setup.client.app.state.ctx  # type: ignore[attr-defined]
    with ctx.db.session() as s:
        tenant, user = identity.create_tenant(s, name="other", owner_email="other@example.com")
        key = identity.create_api_key(s, tenant_id=tenant.id, user_id=user.id).key
    eng = setup.client.get("/api/v1/groups/eng", headers=setup.keys["owner"]).json()["id"]
    theirs = {"Authorization": f"Bearer {key}"}
    assert setup.client.get(f"/api/v1/groups/{eng}", headers=theirs).status_code == 404
    assert setup.client.delete(f"/api/v1/groups/{eng}", headers=theirs).status_code == 404
    assert setup.client.get("/api/v1/groups", headers=theirs).json()["groups"] == []


def test_an_items_readers_come_from_its_connector_else_the_source_and_never_widen() -> None:
    from ragloom.ingest.connectors import Item
    from ragloom.service.accounts.access import NOBODY
    from ragloom.service.sources.sync import SyncRun

    run = SyncRun(None, "sync", "source", "kb", None, "src", "confluence", 10,  # type: ignore[arg-type]
                  readers=("group:everyone-here",))
    item = Item(id="page:1", token="1", name="a.html")
    assert run.readers_of(item) == ["group:everyone-here"]  # the connector does not say: the source's own
    named = Item(id="page:2", token="1", name="b.html",
                 principals=("user:Carol@Example.com", "group:eng", "user:5b10ac8d82e05b22cc7d4ef5"))
    assert run.readers_of(named) == ["group:eng", "user:5b10ac8d82e05b22cc7d4ef5", "user:carol@example.com"]
    # readers the source names but ragloom cannot read keep the document from everyone, never open it
    garbled = Item(id="page:3", token="1", name="c.html", principals=("group:", "not a reader"))
    assert run.readers_of(garbled) == [NOBODY] and len(run.errors) == 2
