"""The chat page in a real browser: an assistant created in the UI answers a question from a two-page
PDF through a chat model speaking the OpenAI wire protocol (tests/fakes/openai_server.py); the answer
streams in, is rendered as Markdown, and its citation opens the side panel with the cited pages and
the highlighted regions — which must lie on the cited text, as an independent reading of the PDF
(pdfplumber) places it. Feedback persists, sessions are renamed and deleted, an answer whose document
was re-parsed since warns, and the page works by keyboard and at phone width."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pdfplumber
import pytest

from tests.fakes import openai_server
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ingest.docgen import make_pdf
from tests.web.browser import (
    BROWSER,
    World,
    create_kb,
    new_page,
    open_world,
    shot,
    sign_up,
    sync_api,
    until,
    upload_texts,
)

pytestmark = BROWSER

expect = sync_api.expect
SLOW = 60_000  # ms

# The PDF: page 1 is A4, page 2 is A5 — each page's boxes must be scaled by its own size.
PAGE1 = ["# Harbor pump manual",
         "The harbor pump moves sea water from the basin into the cooling circuit of the dock.",
         "Check the intake grid every morning before the first ship arrives at the quay."]
PAGE2 = ["## Filters",
         "Replace the copper filter when the signal lamp above the pump turns red.",
         "Keep the spare filters in the dry cabinet next to the control room."]
CITED = PAGE2[1]  # the sentence the answer cites
QUESTION = "When must the copper filter be replaced?"


def write_pdf(path: Path) -> None:
    make_pdf(path, [PAGE1, PAGE2], page_sizes=[(210, 297), (148, 210)])  # A4, A5 in mm


def responder(body: dict[str, Any]) -> str:
    """A chat model: answers from the numbered evidence in Markdown, citing the copper filter's chunk."""
    messages = body["messages"]
    prompt = "\n".join(m["content"] for m in messages)
    if "\nID: " in "\n" + prompt:
        for block in prompt.split("ID: ")[1:]:
            n = block.split("\n", 1)[0].strip()
            if "copper filter" in block:
                return ("**In short:** the filter is changed when the lamp says so.\n\n"
                        f"- {CITED[:-1]} [ID:{n}].\n"
                        "- Keep the spare filters in the dry cabinet next to the control room.\n\n"
                        "More at [the maker's page](https://example.org/pump) and [nowhere](javascript:alert(1)).")
        return "I do not know."
    return str(messages[-1]["content"])


class PacedHandler(openai_server._Handler):
    """Streams like a real model: each server-sent event a little after the one before."""

    def _chat_stream(self, body: dict[str, Any]) -> None:
        raw = self.wfile

        class Paced:
            def write(self, data: bytes) -> int:
                time.sleep(0.04)
                return raw.write(data)

            def flush(self) -> None:
                raw.flush()

        self.wfile = Paced()  # type: ignore[assignment]
        try:
            super()._chat_stream(body)
        finally:
            self.wfile = raw


@pytest.fixture(scope="module")
def chat_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, FakeOpenAIServer]]:
    server = FakeOpenAIServer(responder=responder)
    with mock.patch.object(openai_server, "_Handler", PacedHandler):
        server.start()
    try:
        with open_world(tmp_path_factory.mktemp("chat-ui"), chat_base_url=server.base_url, chat_model="fake-chat",
                        chat_api_key="sk-test", rate_limit_per_minute=0) as world:
            yield world, server
    finally:
        server.stop()


def word_boxes(pdf: Path, sentence: str) -> tuple[int, float, float, list[tuple[float, float, float, float]]]:
    """Where the PDF itself puts ``sentence``: its page, the page's size and each word's box
    (x0, top, x1, bottom in points from the top left), read with pdfplumber."""
    wanted = sentence.split()
    with pdfplumber.open(pdf) as doc:
        for number, page in enumerate(doc.pages, start=1):
            words = page.extract_words()
            texts = [w["text"] for w in words]
            for i in range(len(texts) - len(wanted) + 1):
                if texts[i:i + len(wanted)] == wanted:
                    boxes = [(w["x0"], w["top"], w["x1"], w["bottom"]) for w in words[i:i + len(wanted)]]
                    return number, float(page.width), float(page.height), boxes
    raise AssertionError(f"{sentence!r} is not in {pdf}")


def assert_on_regions(page, pdf: Path, sentence: str) -> None:  # type: ignore[no-untyped-def]
    """Every word of ``sentence``, scaled from the PDF's page to the displayed page image, has its center
    inside a highlighted region drawn on that page in the citation panel."""
    number, width, height, boxes = word_boxes(pdf, sentence)
    frame = page.locator(f"#cite-panel .page-frame[data-page='{number}']")
    expect(frame).to_have_count(1)
    img = frame.locator("img").bounding_box()
    regions = [r.bounding_box() for r in frame.get_by_test_id("cite-region").all()]
    assert img and regions and all(regions)
    sx, sy = img["width"] / width, img["height"] / height
    for x0, top, x1, bottom in boxes:
        cx, cy = img["x"] + (x0 + x1) / 2 * sx, img["y"] + (top + bottom) / 2 * sy
        assert any(r["x"] - 1 <= cx <= r["x"] + r["width"] + 1 and r["y"] - 1 <= cy <= r["y"] + r["height"] + 1
                   for r in regions), f"a word of {sentence!r} at ({cx:.0f}, {cy:.0f}) is outside {regions}"
    # the regions hug the text: the sentence's lines fill most of a region's height, not the whole page
    text_height = (max(b[3] for b in boxes) - min(b[1] for b in boxes)) * sy
    assert min(r["height"] for r in regions) < 3 * text_height + 10


def watch_answer(page) -> None:  # type: ignore[no-untyped-def]
    """Record the answer's text length each time it changes while it is being written."""
    page.evaluate("""() => { window.grew = [];
      const note = () => { const a = document.querySelector('[data-testid=answer][data-state=streaming] '
        + '[data-testid=answer-text]');
        if (!a || a.querySelector('.typing')) return;  // not the answer yet: the 'Writing…' placeholder
        const n = a.textContent.length;
        if (n !== window.grew[window.grew.length - 1]) window.grew.push(n); };
      new MutationObserver(note).observe(document.getElementById('messages'),
        {subtree: true, childList: true, characterData: true}); }""")


def api(page, method: str, path: str, body: object = None) -> Any:  # type: ignore[no-untyped-def]
    return page.evaluate("([m, p, b]) => RL.api(m, p, b === null ? undefined : b)", [method, path, body])


def test_chat_streams_an_answer_whose_citation_highlights_the_cited_text(
        chat_world: tuple[World, FakeOpenAIServer]) -> None:
    world, server = chat_world
    pdf = world.tmp / "harbor-pump.pdf"
    write_pdf(pdf)
    page = new_page(world)
    sign_up(page, "gil@example.com")
    kb = create_kb(page, "Harbor")
    page.locator("#file-input").set_input_files([{"name": pdf.name, "mimeType": "application/pdf",
                                                  "buffer": pdf.read_bytes()}])
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"], timeout=240_000)
    doc = page.locator("#docs-table tbody tr").first.get_attribute("data-doc-id")

    # no assistant yet: the page says how to start; create one in the dialog
    page.get_by_role("link", name="Chat").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/chat$"))
    expect(page.locator("#assistants-empty")).to_be_visible()
    page.get_by_role("button", name="New assistant").click()
    dialog = page.locator("#assistant-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Name", exact=True).fill("Dock helper")
    dialog.get_by_label("Harbor").check()
    dialog.get_by_label("Opening message").fill("Ask me about the *harbor pump*.")
    dialog.get_by_label("Evidence chunks per answer").fill("4")
    expect(dialog.locator("#a-model")).to_have_text("Model: fake-chat")
    shot(page, "chat-assistant")
    dialog.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/chat/[0-9a-f]+$"))
    chat_id = page.url.rsplit("/", 1)[1]
    made = api(page, "GET", f"/chats/{chat_id}")
    assert made["name"] == "Dock helper" and made["dataset_ids"] == [kb] and made["top_n"] == 4
    expect(page.locator("#conversation-heading")).to_have_text("Dock helper")
    expect(page.locator("#messages .opening em")).to_have_text("harbor pump")  # the opening, as Markdown

    # ask: the answer streams in (its text grows step by step), then becomes the stored reply
    watch_answer(page)
    page.get_by_label("Your question").fill(QUESTION)
    page.get_by_label("Your question").press("Enter")
    answer = page.get_by_test_id("answer").last
    expect(answer).to_have_attribute("data-state", "done", timeout=SLOW)
    grew = page.evaluate("window.grew")
    steps = [n for n in grew if n > 0]
    assert len(steps) >= 3 and steps == sorted(steps), grew  # written in several steps, never shrinking
    assert server.requests and any(r.body.get("stream") for r in server.requests if isinstance(r.body, dict))
    page.wait_for_url(re.compile(r"\?session=[0-9a-f]+$"))
    session_id = page.url.rsplit("=", 1)[1]

    # Markdown: bold, a list, a safe link; the unsafe one is only text
    text = answer.get_by_test_id("answer-text")
    expect(text.locator("strong")).to_have_text("In short:")
    expect(text.locator("li")).to_have_count(2)
    link = text.locator("a")
    expect(link).to_have_count(1)
    assert link.get_attribute("href") == "https://example.org/pump" and "noopener" in link.get_attribute("rel")
    expect(text.locator("p").last).to_have_text("More at the maker's page and nowhere.")

    # the citation marker is a button marked with its verification, as the API stored it
    stored = api(page, "GET", f"/chats/{chat_id}/sessions/{session_id}/messages")["messages"]
    reply = stored[-1]
    assert reply["role"] == "assistant" and "[ID:" in reply["content"]
    cite = answer.get_by_test_id("cite").first
    ref_id = int(cite.get_attribute("data-ref"))
    ref = next(r for r in reply["references"] if r["id"] == ref_id)
    assert "copper filter" in ref["content"]
    citation = next((c for c in reply["citations"] if c["id"] == ref_id and c["supported"]), None)
    verdict = citation["verdict"] if citation and citation["verdict"] else "unverified"
    assert cite.get_attribute("data-verdict") == verdict
    assert {p[0] for p in ref["positions"]} == {1, 2}  # the chunk crosses from page 1 to page 2

    # open it: the panel shows the document, the verification and every page of the chunk with its regions
    cite.click()
    panel = page.locator("#cite-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("cite-doc")).to_have_text(pdf.name)
    expect(panel.get_by_test_id("cite-status")).to_have_text("current version")
    expect(panel.get_by_test_id("cite-verdict")).to_contain_text(
        {"supported": "supported", "weak": "weakly supported", "unsupported": "unsupported",
         "unverified": "not verified"}[verdict])
    expect(panel.get_by_test_id("cite-text")).to_contain_text("copper filter")
    expect(panel).not_to_contain_text("null")
    expect(panel.get_by_test_id("cite-page")).to_have_count(2, timeout=SLOW)
    until(page, "() => [...document.querySelectorAll('#cite-panel [data-testid=cite-page]')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
    for n in (1, 2):
        frame = panel.locator(f".page-frame[data-page='{n}']")
        expect(frame.get_by_test_id("cite-region")).to_have_count(sum(1 for p in ref["positions"] if p[0] == n))
    # the highlight lies on the cited text (page 2, A5) and on the chunk's heading (page 1, A4)
    assert_on_regions(page, pdf, CITED)
    assert_on_regions(page, pdf, "Harbor pump manual")
    shot(page, "chat")
    link = panel.get_by_role("link", name="Open the document's chunks")
    assert link.get_attribute("href") == f"/ui/kb/{kb}/documents/{doc}?chunk={ref['chunk_id']}"

    # keyboard: Escape closes the panel and gives the focus back to the marker; Enter opens it again
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.testid") == "cite"
    page.keyboard.press("Enter")
    expect(panel).to_be_visible()
    expect(page.locator("#cite-close")).to_be_focused()
    page.locator("#cite-close").click()
    expect(panel).to_be_hidden()

    # feedback persists
    answer.get_by_role("button", name="Helpful", exact=True).click()
    expect(answer.get_by_role("button", name="Helpful", exact=True)).to_have_attribute("aria-pressed", "true")
    until(page, "([c, s]) => RL.api('GET', `/chats/${c}/sessions/${s}/messages`).then(r => "
                "r.messages.at(-1).feedback && r.messages.at(-1).feedback.rating === 'up')", [chat_id, session_id])

    # sessions: the new one is listed (named after the question); rename it; delete another
    sessions = page.locator("#session-list li")
    expect(sessions).to_have_count(1)
    expect(sessions.first).to_contain_text(QUESTION[:20])
    sessions.first.get_by_role("button", name=re.compile("^Rename")).click()
    page.get_by_label("New name of the session").fill("Filters")
    page.get_by_label("New name of the session").press("Enter")
    expect(sessions.first.locator(".session-name")).to_have_text("Filters")
    assert api(page, "GET", f"/chats/{chat_id}/sessions/{session_id}")["name"] == "Filters"
    api(page, "POST", f"/chats/{chat_id}/sessions", {"name": "Scratch"})
    page.reload()
    expect(sessions).to_have_count(2)
    page.get_by_role("button", name="Delete: Scratch").click()  # the confirmation is accepted
    expect(sessions).to_have_count(1)
    assert [s["name"] for s in api(page, "GET", f"/chats/{chat_id}/sessions")["sessions"]] == ["Filters"]

    # edit the assistant's settings
    page.get_by_role("button", name="Edit assistant").click()
    expect(dialog.get_by_label("Evidence chunks per answer")).to_have_value("4")
    dialog.get_by_label("Temperature").fill("0.5")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    assert api(page, "GET", f"/chats/{chat_id}")["llm"]["temperature"] == 0.5

    # the document is re-parsed: the old answer warns, and its citation still shows the cited version
    before = api(page, "GET", f"/datasets/{kb}/documents/{doc}")["active_version_id"]
    api(page, "POST", f"/datasets/{kb}/documents/{doc}/reparse")
    until(page, "([kb, doc, v]) => RL.api('GET', `/datasets/${kb}/documents/${doc}`).then(d => "
                "d.status === 'done' && d.active_version_id !== v)", [kb, doc, before], timeout=240)
    page.reload()
    answer = page.get_by_test_id("answer").last
    expect(answer.get_by_test_id("superseded-warning")).to_be_visible()
    expect(answer.get_by_role("button", name="Helpful", exact=True)).to_have_attribute("aria-pressed", "true")
    answer.get_by_test_id("cite").first.click()
    expect(panel.get_by_test_id("cite-status")).to_have_text("older version")
    panel.get_by_role("button", name="What changed").click()  # issue 27: the diff to the live version
    expect(panel.get_by_test_id("ref-changes")).to_contain_text("Version 1 → 2")
    expect(panel.get_by_test_id("cite-page")).to_have_count(2, timeout=SLOW)
    until(page, "() => [...document.querySelectorAll('#cite-panel [data-testid=cite-page]')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
    assert_on_regions(page, pdf, CITED)

    # at phone width: no sideways scroll, and the panel covers the screen
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    until(page, "() => document.querySelectorAll('[data-testid=cite]').length > 0")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the chat scrolls sideways by {overflow}px at 390px"
    shot(page, "chat-phone")
    page.get_by_test_id("cite").first.click()
    expect(panel).to_be_visible()
    box = panel.bounding_box()
    assert box and box["x"] <= 0.5 and box["y"] <= 0.5 and box["width"] >= 389
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shot(page, "chat-citation-phone")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    page.get_by_role("button", name="Assistants and sessions").click()
    expect(page.locator("#session-list li")).to_have_count(1)
    assert page.outside == []


def test_markdown_builds_nodes_and_never_markup(chat_world: tuple[World, FakeOpenAIServer]) -> None:
    world, _ = chat_world
    page = new_page(world)
    sign_up(page, "hal@example.com")
    page.goto("/ui/chat")
    expect(page.locator("#assistants-empty")).to_be_visible()
    expect(page.locator("#chat-extractive")).to_be_hidden()  # a chat model is configured: no extractive notice
    shape = page.evaluate("""() => {
      const box = document.createElement('div');
      const cited = [];
      box.append(MD.render([
        '# Title', '', 'Some *em*, **strong**, ~~old~~, snake_case_name and `a <b>` code [ID:3].', '',
        '<img src=x onerror="window.owned=1"> <script>window.owned=2</script>', '',
        '1. one', '2. two', '   - nested', '', '> quoted', '', '```', '<i>raw</i>', '```', '',
        '| a | b |', '|---|--:|', '| 1 | 2 |', '',
        '[x](javascript:alert(1)) [y](data:text/html,hi) <javascript:alert(1)> [ok](http://127.0.0.1/a)',
      ].join('\\n'), {cite: (n) => { cited.push(n); const s = document.createElement('sup');
        s.textContent = n; return s; }}));
      document.body.append(box);
      return {
        tags: [...box.querySelectorAll('*')].map(e => e.tagName.toLowerCase()),
        links: [...box.querySelectorAll('a')].map(a => [a.getAttribute('href'), a.rel]),
        text: box.textContent, cited, owned: window.owned || 0,
      };
    }""")
    tags = set(shape["tags"])
    assert {"h3", "em", "strong", "del", "code", "ol", "ul", "li", "blockquote", "pre", "table", "th", "td",
            "sup"} <= tags
    assert not tags & {"img", "script", "i", "iframe"}, tags
    assert shape["links"] == [["http://127.0.0.1/a", "noopener noreferrer"]]
    assert "<img src=x" in shape["text"] and "<i>raw</i>" in shape["text"]
    assert shape["cited"] == [3] and shape["owned"] == 0
    assert "snake_case_name" in shape["text"] and shape["tags"].count("em") == 1
    # on a phone, someone without an assistant still sees how to start
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#assistants-empty")).to_be_visible()
    expect(page.get_by_role("button", name="New assistant")).to_be_visible()


def test_an_assistant_with_a_scope_asks_for_the_model_then_says_what_it_answered_from(
        chat_world: tuple[World, FakeOpenAIServer]) -> None:
    world, _ = chat_world
    page = new_page(world)
    sign_up(page, "scope@example.com")
    kb = create_kb(page, "Devices")
    upload_texts(page, {"x100.txt": "X100 manual.\n\nTo reset the appliance, hold the red button.\n",
                        "x200.txt": "X200 manual.\n\nTo reset the appliance, unplug it.\n"})
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done", "done"], timeout=240_000)
    for doc in api(page, "GET", f"/datasets/{kb}/documents")["documents"]:
        api(page, "PATCH", f"/datasets/{kb}/documents/{doc['id']}/metadata",
            {"metadata": {"model": doc["name"][:4].upper()}})

    page.goto("/ui/chat")
    page.get_by_role("button", name="New assistant").click()
    dialog = page.locator("#assistant-dialog")
    dialog.get_by_label("Name", exact=True).fill("Support")
    dialog.get_by_label("Devices").check()
    dialog.get_by_label("Required scope").fill("model")
    dialog.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/chat/[0-9a-f]+$"))
    made = api(page, "GET", f"/chats/{page.url.rsplit('/', 1)[1]}")
    assert [(k["key"], k["match"]) for k in made["scope"]["keys"]] == [("model", "equal")]

    page.get_by_label("Your question").fill("How do I reset it?")
    page.get_by_label("Your question").press("Enter")
    answer = page.get_by_test_id("answer").last
    expect(answer).to_have_attribute("data-state", "done", timeout=SLOW)
    expect(answer.get_by_test_id("answer-text")).to_contain_text("Which model is it: X100 or X200?")
    page.get_by_label("Your question").fill("It is an x-200")
    page.get_by_label("Your question").press("Enter")
    answer = page.get_by_test_id("answer").nth(1)
    expect(answer).to_have_attribute("data-state", "done", timeout=SLOW)
    expect(answer.get_by_test_id("scope-used")).to_have_text("Answered from the documents for model X200")
