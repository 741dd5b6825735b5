"""Issue 33 in Chromium: a share link's chat page for a visitor without an account (a streamed answer, a
citation that opens the cited page with its region, feedback), and the embed script on pages served
from two other loopback origins: the one the link allows gets the bubble and a working chat, the
other gets neither the bubble nor the chat page in an iframe."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragloom.service.accounts import identity
from tests.ingest.docgen import make_pdf
from tests.live import wait_documents
from tests.web.browser import BROWSER, sync_api

pytestmark = BROWSER

expect = sync_api.expect
QUESTION = "How often does the Orion pump need grease?"


@contextmanager
def site(pages: dict[str, str]) -> Iterator[str]:
    """A web site on another loopback port: its origin; it serves ``pages[origin]`` at every path."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = pages.get(f"http://127.0.0.1:{self.server.server_address[1]}", "").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _assistant(world: Any, name: str) -> tuple[Any, str]:
    """A knowledge base with a PDF, and an assistant over it: the owner's API client and the assistant."""
    with world.live.ctx.db.session() as s:
        boot = identity.bootstrap(s)
        key = boot.new_key.key if boot.new_key else identity.create_api_key(
            s, tenant_id=boot.principal.tenant_id, user_id=boot.principal.user_id).key
    api = world.live.client(key)
    kb = api.post("/datasets", json={"name": f"{name} pumps"}).json()["id"]
    pdf = world.tmp / "orion-pump.pdf"
    make_pdf(pdf, [["# The Orion pump", "The Orion pump needs grease every 450 operating hours."]])
    api.post(f"/datasets/{kb}/documents", files=[("file", (pdf.name, pdf.read_bytes(), "application/pdf"))])
    assert [d["status"] for d in wait_documents(api, kb)] == ["done"]
    chat = api.post("/chats", json={"name": name, "dataset_ids": [kb],
                                    "prompt": {"opening": "Ask me about the Orion pump."}}).json()["id"]
    return api, chat


def test_a_visitor_chats_on_the_link_s_page_and_opens_the_cited_page(world: Any) -> None:
    api, chat = _assistant(world, "Pump help")
    link = api.post(f"/chats/{chat}/shares", json={"title": "Orion help desk"}).json()
    context = world.browser.new_context(viewport={"width": 900, "height": 900}, locale="en-US")
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(world.live.url) else None)
    page.goto(world.live.url + link["url"])
    expect(page.locator("#share-title")).to_have_text("Orion help desk")
    expect(page.locator("#share-welcome")).to_have_text("Ask me about the Orion pump.")
    expect(page.locator("#share-extractive")).to_be_visible()
    assert page.locator("a[href^='/ui']").count() == 0  # no way into the workspace's UI
    page.locator("#share-q").fill(QUESTION)
    page.locator("#share-send").click()
    answer = page.locator("[data-testid=share-answer]").last
    expect(answer).to_contain_text("450 operating hours")
    answer.locator("[data-testid=share-cite]").first.click()
    expect(page.locator("#share-cite-title")).to_have_text("orion-pump.pdf")
    expect(page.locator("img[data-testid=cited-page]")).to_be_visible()
    expect(page.locator("[data-testid=cited-region]").first).to_be_attached()
    answer.get_by_role("button", name="Helpful", exact=True).click()
    expect(answer.locator("[data-testid=share-thanks]")).to_be_visible()
    assert not outside, outside  # nothing from another host
    # the owner sees the visitor's session, rated
    sessions = api.get(f"/chats/{chat}/sessions").json()["sessions"]
    visited = [s for s in sessions if s.get("share_id") == link["id"]]
    assert len(visited) == 1
    messages = api.get(f"/chats/{chat}/sessions/{visited[0]['id']}").json()["messages"]
    assert messages[-1]["feedback"]["rating"] == "up"
    # a revoked link's page says so
    api.delete(f"/chats/{chat}/shares/{link['id']}")
    page.goto(world.live.url + link["url"])
    expect(page.locator("#share-unavailable")).to_contain_text("revoked")
    context.close()


def test_the_embed_script_works_on_an_allowed_site_and_nowhere_else(world: Any) -> None:
    api, chat = _assistant(world, "Orion desk")
    snippet = "<!doctype html><html><body><h1>Orion support</h1>{}</body></html>"
    pages: dict[str, str] = {}
    with site(pages) as allowed, site(pages) as other:
        link = api.post(f"/chats/{chat}/shares", json={"allowed_origins": [allowed]}).json()
        embed = link["embed"]
        script = embed["script"].replace('src="/share/', f'src="{world.live.url}/share/')
        iframe = embed["iframe"].replace('src="/share/', f'src="{world.live.url}/share/')
        pages[allowed] = snippet.format(script)
        pages[other] = snippet.format(script + iframe)
        context = world.browser.new_context(viewport={"width": 1200, "height": 900}, locale="en-US")
        page = context.new_page()
        page.goto(allowed)
        bubble = page.locator("[data-ragloom=bubble]")
        expect(bubble).to_have_text("Orion desk")
        bubble.click()
        frame = page.frame_locator("iframe[data-ragloom=chat]")
        frame.locator("#share-q").fill(QUESTION)
        frame.locator("#share-send").click()
        expect(frame.locator("[data-testid=share-answer]").last).to_contain_text("450 operating hours")

        warnings: list[str] = []
        refused = context.new_page()
        refused.on("console", lambda m: warnings.append(m.text))
        refused.goto(other)
        expect(refused.locator("h1")).to_have_text("Orion support")
        refused.wait_for_timeout(1500)
        assert refused.locator("[data-ragloom=bubble]").count() == 0  # the link's API refused this origin
        assert any("may not show share link" in w for w in warnings), warnings
        framed = next(f for f in refused.frames if f != refused.main_frame)
        assert framed.url.startswith("chrome-error://"), framed.url  # frame-ancestors: another site may not frame it
        used = api.get(f"/chats/{chat}/shares/{link['id']}").json()
        assert used["questions"] == 1 and used["refused"] >= 1
        context.close()


def test_the_owner_creates_copies_and_revokes_a_link_in_the_chat_page(world: Any) -> None:
    from ragloom.db.models import Membership, User
    from tests.web.browser import new_page, sign_up

    page = new_page(world)
    sign_up(page, "sharer@example.com")
    with world.live.ctx.db.session() as s:
        user = s.query(User).filter_by(email="sharer@example.com").one()
        tenant = s.query(Membership).filter_by(user_id=user.id).one().tenant_id
        key = identity.create_api_key(s, tenant_id=tenant, user_id=user.id).key
    api = world.live.client(key)
    kb = api.post("/datasets", json={"name": "valves"}).json()["id"]
    chat = api.post("/chats", json={"name": "Valve help", "dataset_ids": [kb]}).json()["id"]
    page.goto(f"/ui/chat/{chat}")
    page.get_by_role("button", name="Share", exact=True).click()
    dialog = page.locator("#share-dialog")
    expect(dialog.locator("#share-empty")).to_be_visible()
    dialog.get_by_label("Page title").fill("Valve desk")
    dialog.get_by_label("Web sites that may embed it (one per line)").fill("https://help.example.com")
    dialog.get_by_role("button", name="Create link").click()
    link = dialog.locator("[data-testid=share-link]")
    expect(link).to_have_count(1)
    expect(link).to_contain_text("Valve desk")
    expect(link).to_contain_text("https://help.example.com")
    script = link.locator("[data-testid=share-script]").input_value()
    assert script.startswith(f'<script src="{world.live.url}/share/') and script.endswith('/embed.js" defer></script>')
    assert f"{world.live.url}/share/" in link.locator("[data-testid=share-iframe]").input_value()
    link.get_by_role("button", name="Revoke").click()
    expect(link).to_have_attribute("data-state", "revoked")
    assert api.get(f"/chats/{chat}/shares").json()["shares"][0]["state"] == "revoked"
    dialog.get_by_role("button", name="Close").click()
    page.get_by_role("button", name="Search page").click()  # the members' search page of the assistant
    page.wait_for_url(f"**/ui/search/{chat}")
    page.get_by_label("Search the documents").fill("valves")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#search-status")).to_have_text("0 results")
    assert not page.outside, page.outside


def test_a_search_link_s_page_shows_the_answer_above_marked_results(world: Any) -> None:
    api, chat = _assistant(world, "Pump search")
    link = api.post(f"/chats/{chat}/shares", json={"kind": "search", "title": "Search the pump manuals"}).json()
    context = world.browser.new_context(viewport={"width": 1000, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(world.live.url + link["url"])
    expect(page.locator("#share-title")).to_have_text("Search the pump manuals")
    page.get_by_label("Search the documents").fill(QUESTION)
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#search-answer-text")).to_contain_text("450 operating hours")
    hit = page.locator("[data-testid=search-hit]").first
    expect(hit.locator("h3")).to_have_text("orion-pump.pdf")
    expect(hit.locator("mark").first).to_be_visible()
    assert {m.lower() for m in hit.locator("mark").all_text_contents()} >= {"orion", "pump", "grease"}
    hit.locator("[data-testid=search-open-page]").click()
    expect(page.locator("img[data-testid=search-page-image]")).to_be_visible()
    context.close()
