"""Share links (issue 33) on a live server, through the httpx client: the owner's side (create, list,
change, revoke, audited) and a visitor without an account (questions in kept sessions, the cited pages),
and the abuse cases: another origin, a revoked or expired link, a link over its limits, guessed tokens,
other visitors' sessions, the owner's own sessions, documents outside the assistant or restricted by a
source, and every write route of the API without a key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from ragloom.config import Settings
from ragloom.db.models import Document, KnowledgeBase, ShareLink
from ragloom.service.accounts import identity
from tests.ingest.docgen import make_pdf
from tests.live import Live, live_server, wait_documents

pytestmark = pytest.mark.slow

ALLOWED = "http://help.allowed.test:8080"
VISITOR = "visitor-0123456789abcdef"


class World:
    def __init__(self, live: Live, key: str, member_key: str, kb: str, other_kb: str, assistant: str,
                 docs: dict[str, dict]) -> None:
        self.live, self.key, self.member_key = live, key, member_key
        self.kb, self.other_kb, self.assistant, self.docs = kb, other_kb, assistant, docs
        self.owner = live.client(key)
        self.anon = httpx.Client(base_url=live.url + "/api/v1", timeout=120)

    def share(self, **fields: object) -> dict:
        res = self.owner.post(f"/chats/{self.assistant}/shares", json=fields)
        assert res.status_code == 201, res.text
        return res.json()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("shares")
    settings = Settings(home=tmp / "home", workers=0, worker_poll_seconds=0.05, _env_file=None)
    with live_server(settings) as live:
        with live.ctx.db.session() as s:
            boot = identity.bootstrap(s)
            assert boot.new_key is not None
            member = identity.add_member(s, tenant_id=boot.principal.tenant_id, email="member@works.test")
            member_key = identity.create_api_key(s, tenant_id=boot.principal.tenant_id, user_id=member.id).key
        owner = live.client(boot.new_key.key)
        kb = owner.post("/datasets", json={"name": "pumps"}).json()["id"]
        other_kb = owner.post("/datasets", json={"name": "payroll"}).json()["id"]
        pdf = tmp / "orion-pump.pdf"
        make_pdf(pdf, [["# The Orion pump", "The Orion pump needs grease every 450 operating hours."]])
        files = [("file", (pdf.name, pdf.read_bytes(), "application/pdf")),
                 ("file", ("valves.md", b"# Valves\n\nThe Orion valve is replaced every 3 years.\n", "text/markdown")),
                 ("file", ("secret.md", b"# Board notes\n\nThe Orion pump factory will close in May.\n",
                           "text/markdown"))]
        assert owner.post(f"/datasets/{kb}/documents", files=files).status_code == 201
        salary = [("file", ("salaries.md", b"# Salaries\n\nThe Orion team lead earns 9000 euros.\n", "text/markdown"))]
        assert owner.post(f"/datasets/{other_kb}/documents", files=salary).status_code == 201
        docs = {d["name"]: d for d in wait_documents(owner, kb) + wait_documents(owner, other_kb)}
        assert all(d["status"] == "done" for d in docs.values()), docs
        with live.ctx.db.session() as s:  # the board notes: restricted to named readers by a source
            s.get(KnowledgeBase, kb).source_permissions = True
            s.get(Document, docs["secret.md"]["id"]).restricted = True
        assistant = owner.post("/chats", json={"name": "pump help", "dataset_ids": [kb],
                                               "prompt": {"opening": "Ask me about pumps."}}).json()["id"]
        yield World(live, boot.new_key.key, member_key, kb, other_kb, assistant, docs)


def test_the_owner_creates_lists_changes_and_revokes_links_and_the_audit_log_says_so(world: World) -> None:
    link = world.share(name="help page", allowed_origins=[ALLOWED + "/"], per_minute=5, expires_in_days=30)
    assert link["url"] == f"/share/{link['token']}" and len(link["token"]) >= 32 and link["state"] == "active"
    assert link["allowed_origins"] == [ALLOWED] and link["expires_at"]
    assert f"/share/{link['token']}/embed.js" in link["embed"]["script"] and link["url"] in link["embed"]["iframe"]
    listed = world.owner.get(f"/chats/{world.assistant}/shares").json()
    assert link["id"] in [s["id"] for s in listed["shares"]]
    changed = world.owner.patch(f"/chats/{world.assistant}/shares/{link['id']}",
                                json={"per_day": 50, "never_expires": True, "title": "Pump help"}).json()
    assert changed["per_day"] == 50 and changed["expires_at"] is None and changed["title"] == "Pump help"
    bad = world.owner.post(f"/chats/{world.assistant}/shares", json={"allowed_origins": ["not an origin"]})
    assert bad.status_code == 422 and "origin" in bad.text
    revoked = world.owner.delete(f"/chats/{world.assistant}/shares/{link['id']}").json()
    assert revoked["state"] == "revoked" and revoked["revoked_at"]
    actions = [(e["action"], e["target"]) for e in world.owner.get("/audit", params={"limit": 50}).json()["events"]]
    for action in ("share.created", "share.updated", "share.revoked"):
        assert (action, f"share:{link['id']}") in actions, actions
    # a member may not share unless the workspace lets members share the assistants they created
    member = world.live.client(world.member_key)
    own_kb = member.post("/datasets", json={"name": "member notes"}).json()["id"]
    mine = member.post("/chats", json={"name": "member's help", "dataset_ids": [own_kb]})
    assert mine.status_code == 201, mine.text
    refused = member.post(f"/chats/{mine.json()['id']}/shares", json={})
    assert refused.status_code == 403 and "members_share" in refused.text
    assert member.post(f"/chats/{world.assistant}/shares", json={}).status_code in (403, 404)  # not theirs
    workspace = next(w for w in world.owner.get("/workspaces").json()["workspaces"] if w["current"])
    opened = world.owner.patch(f"/workspaces/{workspace['id']}", json={"members_share": True})
    assert opened.status_code == 200 and opened.json()["members_share"] is True
    assert member.post(f"/chats/{mine.json()['id']}/shares", json={}).status_code == 201
    assert member.post(f"/chats/{world.assistant}/shares", json={}).status_code in (403, 404)  # still not theirs
    world.owner.patch(f"/workspaces/{workspace['id']}", json={"members_share": False})


def test_a_visitor_asks_in_kept_sessions_and_sees_the_cited_page(world: World) -> None:
    link = world.share(title="Pump help")
    token = link["token"]
    info = world.anon.get(f"/share/{token}").json()
    assert info == {"kind": "chat", "title": "Pump help", "welcome": "Ask me about pumps.", "show_pages": True,
                    "extractive": True}
    first = world.anon.post(f"/share/{token}/completions", json={"question": "How often does the Orion pump need "
                                                                              "grease?"})
    assert first.status_code == 200, first.text
    reply = first.json()
    visitor = reply["visitor_id"]
    assert first.cookies.get("ragloom_visitor") == visitor  # a visitor without an id of their own gets one
    assert "450 operating hours" in reply["answer"] and reply["references"]
    ref = reply["references"][0]
    assert ref["file"] is None and ref["pages"].startswith(f"/api/v1/share/{token}/documents/")
    pages = world.anon.get(ref["pages"].removeprefix("/api/v1")).json()
    image = world.anon.get(pages["pages"][0]["image"].removeprefix("/api/v1"))
    assert image.status_code == 200 and image.content[:8] == b"\x89PNG\r\n\x1a\n"
    # the session goes on, with the cookie (as the chat page) or the id (as the embedded widget)
    again = world.anon.post(f"/share/{token}/completions", json={"question": "And the valve?",
                                                                  "session_id": reply["session_id"]})
    assert again.status_code == 200 and again.json()["session_id"] == reply["session_id"], again.text
    mine = httpx.get(f"{world.live.url}/api/v1/share/{token}/sessions", params={"visitor_id": visitor}).json()
    assert [len(s["messages"]) for s in mine["sessions"]] == [4]
    rated = world.anon.put(f"/share/{token}/sessions/{reply['session_id']}/messages/{reply['message_id']}/feedback",
                           json={"rating": "up"})
    assert rated.status_code == 200 and rated.json()["feedback"] == "up"
    # the link's creator sees the visitor's session among theirs, marked
    sessions = world.owner.get(f"/chats/{world.assistant}/sessions").json()["sessions"]
    kept = next(s for s in sessions if s["id"] == reply["session_id"])
    assert kept["share_id"] == link["id"] and kept["visitor_id"] == visitor
    used = world.owner.get(f"/chats/{world.assistant}/shares/{link['id']}").json()
    assert used["questions"] == 2 and used["sessions"] == 1 and used["last_used_at"]
    # streamed: deltas, then the reply
    with httpx.stream("POST", f"{world.live.url}/api/v1/share/{token}/completions", timeout=120,
                      json={"question": "How often does the Orion pump need grease?", "stream": True,
                            "visitor_id": VISITOR}) as res:
        events = [line.removeprefix("data: ") for line in res.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and "reply" in json.loads(events[-2])
    assert json.loads(events[-2])["reply"]["visitor_id"] == VISITOR


def test_origins_revocation_expiry_and_limits_are_refused_with_a_reason(world: World) -> None:
    link = world.share(allowed_origins=[ALLOWED], per_minute=2)
    token, question = link["token"], {"question": "How often does the Orion pump need grease?",
                                      "visitor_id": VISITOR}
    evil = world.anon.post(f"/share/{token}/completions", json=question, headers={"Origin": "http://evil.test"})
    assert evil.status_code == 403 and "origin 'http://evil.test' may not use this share link" in evil.text
    assert "access-control-allow-origin" not in evil.headers
    pre = world.anon.options(f"/share/{token}/completions", headers={
        "Origin": ALLOWED, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
    assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == ALLOWED
    ok = world.anon.post(f"/share/{token}/completions", json=question, headers={"Origin": ALLOWED})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == ALLOWED
    assert world.anon.post(f"/share/{token}/completions", json=question).status_code == 200
    over = world.anon.post(f"/share/{token}/completions", json=question)
    assert over.status_code == 429 and "at most 2 questions a minute" in over.text and over.headers["retry-after"]
    counted = world.owner.get(f"/chats/{world.assistant}/shares/{link['id']}").json()
    assert counted["questions"] == 2 and counted["refused"] == 2  # the other origin, and the third question
    # a change is effective at the next request
    world.owner.patch(f"/chats/{world.assistant}/shares/{link['id']}", json={"per_minute": 100})
    assert world.anon.post(f"/share/{token}/completions", json=question).status_code == 200
    with world.live.ctx.db.session() as s:
        s.get(ShareLink, link["id"]).expires_at = datetime.now(UTC) - timedelta(minutes=1)
    expired = world.anon.get(f"/share/{token}")
    assert expired.status_code == 403 and "expired" in expired.text
    world.owner.patch(f"/chats/{world.assistant}/shares/{link['id']}", json={"never_expires": True})
    assert world.anon.get(f"/share/{token}").status_code == 200
    world.owner.delete(f"/chats/{world.assistant}/shares/{link['id']}")
    revoked = world.anon.post(f"/share/{token}/completions", json=question)
    assert revoked.status_code == 403 and "revoked" in revoked.text


def test_a_link_reaches_nothing_but_its_assistant_s_readable_documents(world: World) -> None:
    link = world.share()
    token = link["token"]
    assert world.anon.get("/share/" + "x" * 32).status_code == 404  # a guessed token
    assert world.anon.get(f"/share/{token[:-1]}{'A' if token[-1] != 'A' else 'B'}").status_code == 404
    # the owner's own session, and another visitor's, are not this visitor's
    own = world.owner.post(f"/chats/{world.assistant}/completions", json={"question": "What about the valve?"}).json()
    asked = world.anon.post(f"/share/{token}/completions", json={"question": "Hello?", "session_id": own["session_id"],
                                                                  "visitor_id": VISITOR})
    assert asked.status_code == 404
    assert world.anon.get(f"/share/{token}/sessions/{own['session_id']}", params={"visitor_id": VISITOR}
                          ).status_code == 404
    theirs = world.anon.post(f"/share/{token}/completions", json={"question": "How often does the Orion pump need "
                                                                               "grease?", "visitor_id": VISITOR}).json()
    other = "another-visitor-0123456789"
    assert world.anon.get(f"/share/{token}/sessions/{theirs['session_id']}", params={"visitor_id": other}
                          ).status_code == 404
    assert world.anon.get(f"/share/{token}/sessions", params={"visitor_id": other}).json() == {"sessions": []}
    # a document of another knowledge base, and one a source restricts, show no page and are never cited
    salaries, secret = world.docs["salaries.md"]["id"], world.docs["secret.md"]["id"]
    for doc in (salaries, secret):
        assert world.anon.get(f"/share/{token}/documents/{doc}/preview").status_code == 404
    board = world.anon.post(f"/share/{token}/completions", json={"question": "When will the Orion pump factory "
                                                                              "close?", "visitor_id": VISITOR}).json()
    assert "May" not in board["answer"] and secret not in json.dumps(board)
    assert world.owner.post(f"/chats/{world.assistant}/completions",  # the owner reads it: it is there
                            json={"question": "When will the Orion pump factory close?"}).json()["references"]
    # a link that hides pages shows none
    hidden = world.share(show_pages=False)
    pdf = world.docs["orion-pump.pdf"]["id"]
    assert world.anon.get(f"/share/{hidden['token']}/documents/{pdf}/pages").status_code == 404
    assert world.anon.get(f"/share/{token}/documents/{pdf}/pages").status_code == 200
    # the token opens no other route: the API without a key
    for method, path in (("GET", f"/chats/{world.assistant}"), ("GET", f"/datasets/{world.kb}/documents"),
                         ("POST", f"/chats/{world.assistant}/shares"), ("DELETE", f"/datasets/{world.kb}")):
        res = world.anon.request(method, path, headers={"Authorization": f"Bearer {token}"})
        assert res.status_code == 401, (method, path, res.status_code)


def test_a_search_link_answers_above_results_with_their_terms_marked(world: World) -> None:
    link = world.share(kind="search", title="Pump search")
    token = link["token"]
    assert world.anon.get(f"/share/{token}").json()["kind"] == "search"
    refused = world.anon.post(f"/share/{token}/completions", json={"question": "grease?"})
    assert refused.status_code == 404 and "search page" in refused.text  # a search link is no chat
    found = world.anon.post(f"/share/{token}/search", json={"question": "How often does the Orion pump need grease?"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert "450 operating hours" in body["answer"] and body["references"]
    assert body["references"][0]["pages"].startswith(f"/api/v1/share/{token}/documents/")
    top = body["results"][0]
    assert top["document_name"] == "orion-pump.pdf" and top["pages"].startswith(f"/api/v1/share/{token}/")
    marked = {top["content"][a:b].lower() for a, b in top["highlights"]}
    assert {"orion", "pump", "grease"} <= marked, marked
    assert all(r["doc_id"] != world.docs["secret.md"]["id"] for r in body["results"])  # restricted: never shown
    assert world.owner.get(f"/chats/{world.assistant}/shares/{link['id']}").json()["questions"] == 1
    # a member's search page over the same assistant: links into the workspace, nothing stored
    before = world.owner.get(f"/chats/{world.assistant}/sessions").json()["total"]
    mine = world.owner.post(f"/chats/{world.assistant}/search", json={"question": "When will the Orion pump "
                                                                                  "factory close?"}).json()
    assert mine["results"][0]["pages"].startswith(f"/api/v1/datasets/{world.kb}/documents/")
    assert world.owner.get(f"/chats/{world.assistant}/sessions").json()["total"] == before
