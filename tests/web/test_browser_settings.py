"""The web UI in a real browser: a knowledge base's chunking form and its live preview, the documents
page's filters, a document's own chunk method, metadata and version history, and the account page
(shared parts in browser.py)."""

from __future__ import annotations

import re

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
)

pytestmark = BROWSER
expect = sync_api.expect
LONG = " ".join(f"Sentence {n} of the harbor manual explains how valve {n} is checked by the crew." for n in range(40))


def upload(page, files: list[tuple[str, str, bytes]]) -> None:  # type: ignore[no-untyped-def]
    page.locator("#file-input").set_input_files([{"name": n, "mimeType": m, "buffer": b} for n, m, b in files])
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"] * len(files),
                                                                               timeout=120_000)


def api(page, method: str, path: str, body: object = None):  # type: ignore[no-untyped-def]
    return page.evaluate("([m, p, b]) => RL.api(m, p, b === null ? undefined : b)", [method, path, body])


def test_the_chunking_form_validates_and_previews_a_sample_live(world: World) -> None:
    page = new_page(world)
    sign_up(page, "gil@example.com")
    kb = create_kb(page, "Harbor manual")
    upload(page, [("harbor.txt", "text/plain", LONG.encode())])
    page.goto(f"/ui/kb/{kb}/settings")
    expect(page.get_by_test_id("method-about")).to_contain_text("token budget")
    budget = page.get_by_label("Token budget")
    expect(budget).to_have_value("512")
    assert budget.get_attribute("min") == "16" and budget.get_attribute("max") == "16384"

    # each method shows the parameters it reads, explained
    page.get_by_label("Chunk method").select_option("picture")
    expect(page.get_by_label("Shortest text")).to_be_visible()
    expect(page.get_by_label("Token budget")).to_have_count(0)
    page.get_by_label("Chunk method").select_option("one")
    expect(page.get_by_label("Keywords per chunk")).to_be_visible()  # enrichment: every method
    expect(page.get_by_label("Title depth")).to_have_count(0)
    page.get_by_label("Chunk method").select_option("title")
    expect(page.get_by_label("Title depth")).to_be_visible()
    page.get_by_label("Chunk method").select_option("naive")

    # a value out of the API's bounds is refused in the form, and nothing is saved
    page.get_by_label("Token budget").fill("5")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#settings-error")).to_contain_text("Token budget")
    expect(page.get_by_label("Token budget")).to_be_focused()
    assert api(page, "GET", f"/datasets/{kb}")["parser_config"].get("chunk_token_num") in (None, 512)

    # an object parameter is JSON: a typo is caught in the form
    page.get_by_label("Token budget").fill("512")
    page.get_by_label("Metadata to extract").fill('{"author": ')
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#settings-error")).to_contain_text("Metadata to extract: not valid JSON")
    page.get_by_label("Metadata to extract").fill('{"author": "who wrote it"}')

    # the preview chunks the chosen document with the unsaved values, again at each change
    page.get_by_label("Token budget").fill("512")
    page.get_by_label("Sample document").select_option(label="harbor.txt")
    chunks = page.get_by_test_id("preview-chunk")
    expect(page.get_by_test_id("preview-summary")).to_contain_text("harbor.txt")
    expect(chunks.first).to_contain_text("Sentence 0 of the harbor manual")
    few = chunks.count()
    page.get_by_label("Token budget").fill("32")
    # the summary of the new preview (not the 'running' note between two): another number of chunks
    expect(page.get_by_test_id("preview-summary")).to_contain_text(re.compile(rf": (?!{few} )\d+ chunks"))
    many = chunks.count()
    assert many > few >= 1, (few, many)
    tokens = [int(re.sub(r"\D", "", t)) for t in page.get_by_test_id("preview-tokens").all_inner_texts()]
    assert max(tokens) <= 32 + 8, tokens
    shot(page, "chunking-preview")

    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_have_text("Saved.")
    saved = api(page, "GET", f"/datasets/{kb}")["parser_config"]
    assert saved["chunk_token_num"] == 32 and saved["metadata_fields"] == {"author": "who wrote it"}
    assert page.outside == []


def test_documents_filters_metadata_own_method_and_versions(world: World) -> None:
    page = new_page(world)
    sign_up(page, "hal@example.com")
    kb = create_kb(page, "Fleet")
    upload(page, [("ferry-log.txt", "text/plain", b"The ferry sails at nine. " * 30),
                  ("tug-notes.md", "text/markdown", b"# Tug\n\nThe tug pushes barges. " * 10),
                  ("ferry-rules.md", "text/markdown", b"# Rules\n\nNo dogs on the ferry deck.")])
    rows = page.locator("#docs-table tbody tr[data-doc-id]")
    page.get_by_label("Name contains").fill("FERRY")
    expect(rows).to_have_count(2)
    page.get_by_label("File type").fill("md")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_role("link", name="ferry-rules.md")).to_be_visible()
    page.get_by_label("Name contains").fill("")
    page.get_by_label("File type").fill("")
    page.get_by_label("Status", exact=True).select_option("failed")
    expect(page.locator("#docs-none-match")).to_be_visible()
    page.get_by_label("Status", exact=True).select_option("")
    expect(rows).to_have_count(3)
    expect(page.locator("#pager")).to_be_hidden()  # one page only

    # metadata: add two fields, typed as the API keeps them
    row = page.locator("#docs-table tbody tr", has_text="tug-notes.md")
    doc = row.get_attribute("data-doc-id")
    row.get_by_role("button", name="Details: tug-notes.md").click()
    details = page.locator(f"tr[data-details-of='{doc}']")
    expect(details.get_by_test_id("versions").locator("tbody tr")).to_have_count(1)
    expect(details.get_by_test_id("version-active")).to_have_count(1)
    for key, value in (("team", "harbor ops"), ("year", "2024")):
        details.get_by_role("button", name="Add field").click()
        details.get_by_label("Field", exact=True).last.fill(key)
        details.get_by_label("Value", exact=True).last.fill(value)
    details.get_by_role("button", name="Save metadata").click()
    expect(page.locator("#flash")).to_have_text("Saved.")
    meta = api(page, "GET", f"/datasets/{kb}/documents/{doc}")["metadata"]
    assert meta["team"] == "harbor ops" and meta["year"] == 2024
    # removing a field removes it
    details.get_by_test_id("meta-row").filter(has=page.locator("input[value='team']")).get_by_role(
        "button", name="Remove field").click()
    details.get_by_role("button", name="Save metadata").click()
    # (the first save's "Saved." may still be shown: wait for the stored metadata itself)
    until(page, "(path) => RL.api('GET', path).then((d) => !('team' in d.metadata))",
          f"/datasets/{kb}/documents/{doc}")
    expect(details.get_by_test_id("meta-row")).to_have_count(2)  # title and year, as stored
    shot(page, "document-details")

    # its own chunk method: the document is parsed again into a new version, the old one superseded
    details.get_by_test_id("doc-method-select").select_option("one")
    details.get_by_role("button", name="Apply and re-parse").click()
    expect(row.get_by_test_id("doc-method")).to_have_text("one")
    expect(row.get_by_test_id("doc-status")).to_have_text("done", timeout=120_000)
    expect(row.locator("td.num")).to_have_text("1")
    row.get_by_role("button", name="Details: tug-notes.md").click()  # closed
    row.get_by_role("button", name="Details: tug-notes.md").click()  # opened again: the history now
    versions = details.get_by_test_id("versions").locator("tbody tr")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("#2")
    expect(versions.first.get_by_test_id("version-active")).to_have_count(1)
    expect(versions.nth(1)).to_contain_text("superseded")
    expect(versions.first).to_contain_text("settings")  # why it was made (issue 27)
    # what changed, and back to version 1 at once (no parsing); then new content for the same document
    versions.first.get_by_test_id("version-changes").click()
    expect(details.get_by_role("heading", name=re.compile("Version 1 → 2"))).to_be_visible()
    expect(details.get_by_test_id("version-diff")).to_have_count(1)
    versions.nth(1).get_by_test_id("version-activate").click()
    expect(page.locator("#flash")).to_have_text("rolled back to version 1")
    expect(details.get_by_test_id("versions").locator("tbody tr").nth(1).get_by_test_id("version-active")) \
        .to_have_count(1)
    details.get_by_test_id("version-upload").set_input_files(
        [{"name": "tug-notes.md", "mimeType": "text/markdown", "buffer": b"# Tug\n\nThe tug tows the ferry."}])
    expect(page.locator("#flash")).to_contain_text("New version uploaded")
    until(page, "(path) => RL.api('GET', path).then((d) => d.status === 'done' && d.chunk_count > 0 && "
          "d.message.startsWith('published'))", f"/datasets/{kb}/documents/{doc}")
    listed = api(page, "GET", f"/datasets/{kb}/documents/{doc}/versions")["versions"]
    assert [(v["number"], v["active"], v["reason"]) for v in listed][0] == (3, True, "upload")
    assert page.outside == []


def test_account_page_changes_the_password_and_renames_the_workspace(world: World) -> None:
    page = new_page(world)
    sign_up(page, "ivy@example.com")
    page.locator("a.who").click()  # the top bar names the person: their account page
    page.wait_for_url("**/ui/account")
    expect(page.get_by_test_id("me-email")).to_have_text("ivy@example.com")
    new = "a much longer new passphrase"
    page.get_by_label("Current password").fill("not my password")
    page.get_by_label("New password", exact=True).fill(new)
    page.get_by_label("New password again").fill(new + "!")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#password-error")).to_have_text("The two new passwords differ.")
    page.get_by_label("New password again").fill(new)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#password-error")).to_contain_text("wrong password")
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#flash")).to_contain_text("Password changed")

    row = page.locator("#spaces-table tbody tr").first
    row.get_by_role("textbox").fill("Ivy's harbor")
    row.get_by_role("button", name=re.compile("^Rename workspace")).click()
    expect(page.get_by_label("Current workspace").locator("option")).to_have_text(["Ivy's harbor (owner)"])
    shot(page, "account")

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/ui/login")
    page.get_by_label("E-mail address").fill("ivy@example.com")
    page.get_by_label("Password").fill(new)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/kb$"))
    assert page.outside == []
