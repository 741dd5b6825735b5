"""The web UI in a real browser: sign-in and sign-up, knowledge bases, uploads with live progress,
workspaces and keys, languages, phone width, and chunks on their pages (shared parts in browser.py).
"""

from __future__ import annotations

import re
import time

import httpx

from tests.ingest.docgen import make_docx, make_pdf
from tests.web.browser import (
    BROWSER,
    PASSWORD,
    World,
    create_kb,
    new_page,
    shot,
    sign_up,
    sync_api,
    until,
    watch_statuses,
)

pytestmark = BROWSER


def test_sign_up_create_a_knowledge_base_and_upload_a_pdf_and_a_docx_to_done(world: World) -> None:
    pdf, docx_path = world.tmp / "pump-manual.pdf", world.tmp / "leave-policy.docx"
    make_pdf(pdf, [["# Pump manual", "The pump is serviced every 90 days by the harbor crew."],
                   ["## Filters", "Replace the copper filter when the signal lamp is red."]])
    make_docx(docx_path, [("title", "Leave policy"), ("p", "Employees take leave after one month of work.")])
    page = new_page(world)
    sign_up(page, "ana@example.com")
    kb = create_kb(page, "Manuals")
    watch_statuses(page)
    # drop both files on the drop zone, as a person would (a DataTransfer with real File objects)
    files = [(p.name, p.read_bytes().hex(), mime) for p, mime in (
        (pdf, "application/pdf"),
        (docx_path, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"))]
    page.evaluate("""(files) => { const dt = new DataTransfer();
      for (const [name, hex, type] of files) {
        const bytes = new Uint8Array(hex.match(/../g).map(h => parseInt(h, 16)));
        dt.items.add(new File([bytes], name, {type})); }
      const zone = document.getElementById('dropzone');
      zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
      zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true})); }""", files)
    rows = page.locator("#docs-table tbody tr")
    sync_api.expect(rows).to_have_count(2)
    shot(page, "documents-progress")
    statuses = page.locator("#docs-table [data-testid=doc-status]")
    sync_api.expect(statuses).to_have_text(["done", "done"], timeout=240_000)
    seen = set(page.evaluate("[...window.seen]"))
    assert seen & {"queued", "running"}, seen  # progress was shown live, before done, without a reload
    names = sorted(rows.locator("td.name a[title]").all_inner_texts())
    assert names == ["leave-policy.docx", "pump-manual.pdf"]
    # each row says what the file is: the PDF its first page's thumbnail, its type, pages and size; the
    # DOCX (no pages) an icon naming its type
    pdf_row = page.locator("#docs-table tbody tr", has_text="pump-manual.pdf")
    sync_api.expect(pdf_row.get_by_test_id("doc-facts")).to_have_text(
        re.compile(r"^PDF · 2 pages · [\d.]+ kB$"), timeout=SLOW)
    until(page, "() => { const i = document.querySelector('[data-testid=doc-thumbnail]');"
                " return i && i.complete && i.naturalWidth === 240; }")
    docx_row = page.locator("#docs-table tbody tr", has_text="leave-policy.docx")
    sync_api.expect(docx_row.get_by_test_id("doc-icon")).to_have_text("DOCX")
    sync_api.expect(docx_row.get_by_test_id("doc-facts")).to_have_text(re.compile(r"^DOCX · [\d.]+ kB$"))
    assert all(int(n) > 0 for n in page.locator("#docs-table td.num").all_inner_texts())
    assert not [t for t in rows.all_inner_texts() if "null" in t or "undefined" in t]
    shot(page, "documents")

    # a page image loads as a plain <img> for the signed-in user, and for nobody else
    doc_id = page.locator("#docs-table tbody tr", has_text="pump-manual.pdf").get_attribute("data-doc-id")
    src = f"/api/v1/datasets/{kb}/documents/{doc_id}/pages/1.png"
    width = page.evaluate("""(src) => new Promise((ok, fail) => { const img = new Image();
      img.onload = () => ok(img.naturalWidth); img.onerror = () => fail('no image'); img.src = src; })""", src)
    assert width > 100
    assert httpx.get(world.live.url + src).status_code == 401

    # the list counts the documents; the settings page shows the API's own error messages
    page.goto("/ui/kb")
    count = page.locator("#kb-table tbody tr", has_text="Manuals").get_by_test_id("doc-count")
    sync_api.expect(count).to_have_text("2")
    shot(page, "knowledge-bases")
    page.goto(f"/ui/kb/{kb}/settings")
    # the form cannot check the delimiter grammar: the API's own message is shown
    page.get_by_label("Delimiters", exact=True).fill("``")
    page.get_by_role("button", name="Save").click()
    sync_api.expect(page.locator("#settings-error")).to_contain_text("delimiter")
    page.get_by_label("Delimiters", exact=True).fill("\\n.")
    page.get_by_label("Token budget").fill("256")
    page.get_by_label("Synonyms").fill("pump, impeller")
    page.get_by_label("Page rank").fill("10")
    page.get_by_label("Review new versions").check()
    page.get_by_role("button", name="Save").click()
    sync_api.expect(page.locator("#settings-error")).to_be_empty()
    sync_api.expect(page.locator("#flash")).to_have_text("Saved.")
    assert page.evaluate(f"RL.api('GET', '/datasets/{kb}').then(d => d.review_versions)") is True
    shot(page, "knowledge-base-settings")
    assert page.outside == []


def test_workspace_switcher_moves_the_session_between_workspaces(world: World) -> None:
    page = new_page(world)
    sign_up(page, "bo@example.com")
    create_kb(page, "Bo's notes")
    page.evaluate("RL.api('POST', '/workspaces', {name: 'Second team'})")
    page.goto("/ui/kb")
    switcher = page.get_by_label("Current workspace")
    assert switcher.locator("option").count() == 2
    switcher.select_option(label="Second team (owner)")
    page.wait_for_load_state("load")
    sync_api.expect(page.locator("#kb-empty")).to_be_visible()
    sync_api.expect(page.get_by_label("Current workspace")).to_have_value(
        page.evaluate("RL.api('GET', '/auth/me').then(me => me.workspace.id)"))
    assert page.evaluate("RL.api('GET', '/auth/me').then(me => me.workspace.name)") == "Second team"
    page.get_by_label("Current workspace").select_option(label="bo's workspace (owner)")
    page.wait_for_load_state("load")
    sync_api.expect(page.locator("#kb-table tbody tr", has_text="Bo's notes")).to_have_count(1)
    page.goto("/ui/workspace/members")
    sync_api.expect(page.locator("#members-table tbody tr")).to_have_count(1)
    shot(page, "members")
    page.goto("/ui/workspace/invitations")
    page.get_by_role("button", name="Create invitation").click()
    sync_api.expect(page.get_by_test_id("secret-value")).not_to_be_empty()
    sync_api.expect(page.locator("#invitations-table tbody tr")).to_have_count(1)
    shot(page, "invitations")
    page.goto("/ui/workspace/providers")
    sync_api.expect(page.locator("#providers section")).to_have_count(4)  # chat, embedding, rerank, vision
    sync_api.expect(page.locator("#providers section").last).to_contain_text("Vision model (figures)")
    shot(page, "providers")
    assert page.outside == []


def test_create_and_revoke_an_api_key(world: World) -> None:
    page = new_page(world)
    sign_up(page, "cy@example.com")
    page.goto("/ui/workspace/keys")
    page.get_by_label("Name").fill("ci robot")
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_test_id("secret-value")
    sync_api.expect(secret).not_to_be_empty()
    key = secret.inner_text().strip()
    api = httpx.Client(base_url=world.live.url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=60)
    assert api.get("/datasets").status_code == 200
    row = page.locator("#keys-table tbody tr", has_text="ci robot")
    sync_api.expect(row.get_by_test_id("key-state")).to_have_text("active")
    shot(page, "api-keys")
    row.get_by_role("button", name="Revoke: ci robot").click()
    sync_api.expect(row.get_by_test_id("key-state")).to_have_text("revoked")
    assert api.get("/datasets").status_code == 401
    # and sign out: the pages send you to sign in again
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/login$"))
    page.goto("/ui/workspace/keys")
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/login\?next=/ui/workspace/keys$"))
    page.get_by_label("E-mail address").fill("cy@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/workspace/keys$"))


def test_chinese_interface_after_switching_language(world: World) -> None:
    page = new_page(world)
    sign_up(page, "di@example.com")
    page.wait_for_load_state("load")  # the language menu's handler is attached when the page has loaded
    page.get_by_test_id("lang-switch").select_option("zh")
    sync_api.expect(page.locator("h1")).to_have_text("知识库")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    sync_api.expect(page.get_by_role("button", name="创建")).to_be_visible()
    sync_api.expect(page.get_by_role("link", name="工作区")).to_be_visible()
    shot(page, "knowledge-bases-zh")
    # a document's progress, which the server writes in English, is said in Chinese; a failure's reason is not
    said = page.evaluate("""() => ['pages 13-24: embedded 16/31 chunks', 'published 42 chunks',
      'waiting for a worker', 'report.pdf: encrypted'].map(RL.statusText)""")
    assert said == ["第 13-24 页：已向量化 16/31 个切片", "已发布 42 个切片", "等待处理", "report.pdf: encrypted"], said
    from ragloom.web import messages

    # every interface language, switched from the menu: its catalogue, its <html lang>, its date format, and
    # the server's progress words in it
    dates = {"ja": "2026/12/7", "de": "7.12.2026", "fr": "07/12/2026", "es": "7/12/2026", "en": "12/7/2026"}
    for code, date in dates.items():
        page.wait_for_load_state("load")  # the menu's handler is the page script's: the reloaded page has run it
        page.get_by_test_id("lang-switch").select_option(code)
        catalogue = messages.CATALOGUES[code]
        sync_api.expect(page.locator("h1")).to_have_text(catalogue["kb.title"])
        assert page.locator("html").get_attribute("lang") == messages.HTML_LANG[code]
        sync_api.expect(page.get_by_role("link", name=catalogue["nav.workspace"])).to_be_visible()
        assert date in page.evaluate("RL.when('2026-12-07T12:00:00Z')"), code
        published = catalogue["progress.published"].replace("{n}", "42")
        assert page.evaluate("RL.statusText('published 42 chunks')") == published, code
    sync_api.expect(page.locator("h1")).to_have_text("Knowledge bases")
    english = ["pages 13-24: embedded 16/31 chunks, in a batch of 3 parts", "published 42 chunks; 2 pages by OCR",
               "version 2 is built (9 chunks) and waits for review: publish or discard it"]
    assert page.evaluate("(m) => m.map(RL.statusText)", english) == english  # English: exactly the server's words


def test_phone_width_pages_have_no_horizontal_scroll(world: World) -> None:
    page = new_page(world, width=390, height=844)
    sign_up(page, "eve@example.com")
    kb = create_kb(page, "A knowledge base with a rather long name to wrap on a phone")
    page.locator("#file-input").set_input_files([{"name": "note.txt", "mimeType": "text/plain",
                                                  "buffer": b"The harbor lantern is lit at dusk."}])
    sync_api.expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"], timeout=120_000)
    doc = page.locator("#docs-table tbody tr").first.get_attribute("data-doc-id")
    for path in ("/ui/login", "/ui/kb", f"/ui/kb/{kb}", f"/ui/kb/{kb}/settings", f"/ui/kb/{kb}/documents/{doc}",
                 "/ui/workspace/members", "/ui/bench", "/ui/chat", "/ui/account",
                 "/ui/workspace/groups", "/ui/workspace/invitations", "/ui/workspace/keys",
                 "/ui/workspace/providers"):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        time.sleep(0.1)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 390px"
        if path == f"/ui/kb/{kb}":
            shot(page, "documents-phone")
        if path.endswith(f"/documents/{doc}"):  # no pages: the chunk list and a link to the HTML view
            sync_api.expect(page.locator("#chunk-list li", has_text="harbor lantern")).to_have_count(1)
            sync_api.expect(page.locator("#doc-view")).to_be_visible()
            sync_api.expect(page.get_by_test_id("page-image")).to_have_count(0)


SLOW = 30_000  # ms: an edit re-embeds its chunk, on a busy machine too


def test_chunks_on_their_pages_edit_one_and_the_edit_survives_a_reparse(world: World) -> None:
    pdf = world.tmp / "harbor-pump.pdf"
    make_pdf(pdf, [["# Harbor pump", "The pump is serviced every 90 days by the harbor crew."],
                   ["## Filters", "Replace the copper filter when the signal lamp is red."]])
    page = new_page(world)
    sign_up(page, "fay@example.com")
    kb = create_kb(page, "Pumps")
    page.evaluate("(kb) => RL.api('PATCH', `/datasets/${kb}`, {parser_config: {chunk_token_num: 16}})", kb)
    page.locator("#file-input").set_input_files([{"name": pdf.name, "mimeType": "application/pdf",
                                                  "buffer": pdf.read_bytes()}])
    sync_api.expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"], timeout=120_000)
    page.get_by_role("link", name=pdf.name).click()
    page.wait_for_url(re.compile(rf"^http://[^/]+/ui/kb/{kb}/documents/[^/]+$"))
    sync_api.expect(page.locator("#doc-title")).to_have_text(pdf.name, timeout=SLOW)
    sync_api.expect(page.get_by_test_id("page-image")).to_have_count(2, timeout=SLOW)
    sync_api.expect(page.locator("#doc-view")).to_be_hidden(timeout=SLOW)  # a PDF shows its pages, not the HTML view
    until(page, "() => [...document.querySelectorAll('[data-testid=page-image]')]"
                ".every(i => i.complete && i.naturalWidth > 0)")

    # the copper filter chunk's box lies on page 2's image; clicking it selects the chunk in the list
    item = page.locator("#chunk-list li", has_text="copper filter")
    sync_api.expect(item).to_have_count(1, timeout=SLOW)
    chunk_id = item.get_attribute("data-chunk-id")
    regions = page.locator(f".page-frame[data-page='2'] .region[data-chunk-id='{chunk_id}']")
    drawn = regions.count()
    assert drawn >= 1  # its heading and its paragraph may each have a box
    img = page.locator(".page-frame[data-page='2'] img").bounding_box()
    assert img
    for i in range(regions.count()):
        box = regions.nth(i).bounding_box()
        assert box and box["width"] > 5 and box["height"] > 5
        assert img["x"] <= box["x"] and box["x"] + box["width"] <= img["x"] + img["width"] + 0.5
        assert img["y"] <= box["y"] and box["y"] + box["height"] <= img["y"] + img["height"] + 0.5
    region = regions.first  # its heading's box: no other chunk's box covers it
    region.click()
    sync_api.expect(item).to_have_class(re.compile(r"\bselected\b"), timeout=SLOW)
    sync_api.expect(region).to_have_class(re.compile(r"\bselected\b"), timeout=SLOW)
    # and clicking another chunk in the list selects its box
    other = page.locator("#chunk-list li", has_text="serviced every 90 days")
    other.locator("button.pick").click()
    other_id = other.get_attribute("data-chunk-id")
    sync_api.expect(page.locator(f".region[data-chunk-id='{other_id}']").first).to_have_class(
        re.compile(r"\bselected\b"), timeout=SLOW)
    sync_api.expect(item).not_to_have_class(re.compile(r"\bselected\b"), timeout=SLOW)
    # the filter box narrows the list
    page.get_by_label("Search this document's chunks").fill("copper")
    sync_api.expect(page.locator("#chunk-list li:visible")).to_have_count(1, timeout=SLOW)
    page.get_by_label("Search this document's chunks").fill("")
    item.locator("button.pick").click()  # its boxes scrolled into view, for the screenshot
    sync_api.expect(item).to_have_class(re.compile(r"\bselected\b"), timeout=SLOW)
    shot(page, "chunks")

    # the viewer: pages by key and by thumbnail, zoom that keeps every region on its text
    viewer = page.get_by_test_id("doc-viewer")
    number = viewer.get_by_test_id("viewer-page")
    thumbs = viewer.locator(".viewer-thumb")
    sync_api.expect(thumbs).to_have_count(2)
    thumbs.first.click()
    sync_api.expect(number).to_have_value("1")
    viewer.locator(".viewer-pages").focus()
    page.keyboard.press("PageDown")
    sync_api.expect(number).to_have_value("2")
    sync_api.expect(thumbs.nth(1)).to_have_attribute("aria-current", "page")
    page.keyboard.press("Home")
    sync_api.expect(number).to_have_value("1")
    before = page.locator(".page-frame[data-page='2'] img").bounding_box()
    page.keyboard.press("+")
    page.keyboard.press("+")
    sync_api.expect(viewer.get_by_test_id("viewer-zoom")).to_have_text("150%")
    after = page.locator(".page-frame[data-page='2'] img").bounding_box()
    assert before and after and abs(after["width"] / before["width"] - 1.5) < 0.02
    item.locator("button.pick").click()  # scrolled to its region at this zoom, the region still on its page
    box = regions.first.bounding_box()
    view = viewer.locator(".viewer-pages").bounding_box()
    img = page.locator(".page-frame[data-page='2'] img").bounding_box()
    assert box and view and img and view["y"] <= box["y"] <= view["y"] + view["height"]
    assert img["x"] <= box["x"] and box["x"] + box["width"] <= img["x"] + img["width"] + 0.5
    viewer.locator(".viewer-pages").focus()
    page.keyboard.press("0")
    sync_api.expect(viewer.get_by_test_id("viewer-zoom")).to_have_text("100%")
    # a citation's link (?chunk=ID) opens the page with that chunk selected
    page.goto(f"{page.url.split('?')[0]}?chunk={chunk_id}")
    sync_api.expect(page.locator(f"#chunk-list li[data-chunk-id='{chunk_id}']")).to_have_class(
        re.compile(r"\bselected\b"), timeout=SLOW)
    until(page, """(id) => { const r = document.querySelector(`.region[data-chunk-id='${id}']`).getBoundingClientRect();
      const v = document.querySelector('.viewer-pages').getBoundingClientRect();
      return r.height > 0 && r.top >= v.top && r.bottom <= v.bottom; }""", chunk_id)

    # edit the chunk's text: marked as edited
    same = page.locator(f"#chunk-list li[data-chunk-id='{chunk_id}']")
    same.locator("button", has_text="Edit").click()
    same.locator("textarea").fill("Replace the brass filter when the signal lamp is amber.")
    same.get_by_role("button", name="Save").click()
    edited = page.locator("#chunk-list li", has_text="brass filter")
    sync_api.expect(edited.get_by_test_id("chunk-edited")).to_have_count(1, timeout=SLOW)
    sync_api.expect(page.locator("#chunk-list li", has_text="copper filter")).to_have_count(0, timeout=SLOW)

    # re-parse: a new version is built; the edit is applied to the same chunk again
    page.get_by_role("button", name="Re-parse").click()
    new_item = page.locator("#chunk-list li", has_text="brass filter")
    until(page, "(old) => !document.querySelector(`#chunk-list li[data-chunk-id='${old}']`) "
                "&& document.querySelectorAll('#chunk-list li').length > 0", chunk_id, timeout=120.0)
    sync_api.expect(new_item).to_have_count(1, timeout=SLOW)
    sync_api.expect(new_item.get_by_test_id("chunk-edited")).to_have_count(1, timeout=SLOW)
    new_id = new_item.get_attribute("data-chunk-id")
    assert new_id != chunk_id
    sync_api.expect(page.locator(f".page-frame[data-page='2'] .region[data-chunk-id='{new_id}']")).to_have_count(
        drawn, timeout=SLOW)  # drawn where it was
    sync_api.expect(page.locator("#chunk-list li", has_text="copper filter")).to_have_count(0, timeout=SLOW)
    assert page.outside == []


def test_keyboard_only_skip_to_content_and_create_a_knowledge_base(world: World) -> None:
    page = new_page(world)
    sign_up(page, "kim@example.com")
    page.goto("/ui/kb")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "kb-name"  # past the top bar, into the form
    page.keyboard.type("Typed by keyboard")
    page.keyboard.press("Enter")  # submits the form
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/kb/[^/]+$"))
    sync_api.expect(page.locator("#kb-title")).to_have_text("Typed by keyboard")
    # every control of the page is reachable with Tab, and the focused one is outlined
    seen, outlined = set(), []
    for _ in range(40):
        page.keyboard.press("Tab")
        info = page.evaluate("""() => { const a = document.activeElement;
          return a === document.body ? null
            : [a.id || a.getAttribute('aria-label') || a.textContent.trim(), getComputedStyle(a).outlineStyle]; }""")
        if info:  # past the last control the browser's own bar has the focus
            seen.add(info[0])
            outlined.append(info[1])
    assert {"Settings", "choose-files", "f-name", "f-status", "f-type"} <= seen, seen
    assert "none" not in outlined, outlined
