"""Issue 26: without a chat model the chat page says plainly that answers are extractive, with a link
to where a chat model is set (the workspace's providers page)."""

from __future__ import annotations

import re
from typing import Any

from tests.web.browser import BROWSER, new_page, sign_up, sync_api, until

pytestmark = BROWSER

expect = sync_api.expect


def test_the_chat_page_says_answers_are_extractive_and_links_to_the_providers(world: Any) -> None:
    page = new_page(world)
    sign_up(page, "ext@example.com")
    page.goto("/ui/chat")
    notice = page.locator("#chat-extractive")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("No chat model is configured, so answers are extractive")
    link = notice.get_by_role("link", name="Set a chat model in Providers")
    link.click()
    page.wait_for_url("**/ui/workspace/providers")


def test_a_cited_figure_is_shown_under_the_answer_and_in_its_citation(world: Any) -> None:
    from tests.test_figures import docx_with_figure
    from tests.web.browser import create_kb

    page = new_page(world)
    sign_up(page, "fig@example.com")
    kb = create_kb(page, "Reports")
    page.locator("#file-input").set_input_files([{
        "name": "report.docx", "buffer": docx_with_figure(),
        "mimeType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}])
    expect(page.locator("#docs-table [data-testid=doc-status]")).to_have_text(["done"], timeout=240_000)
    chat = page.evaluate("(kb) => RL.api('POST', '/chats', {name: 'Reports', dataset_ids: [kb]})", kb)
    page.goto(f"/ui/chat/{chat['id']}")
    page.get_by_label("Your question").fill("What does the chart of Orion sales per quarter show for Q3?")
    page.get_by_label("Your question").press("Enter")
    answer = page.get_by_test_id("answer").last
    expect(answer).to_have_attribute("data-state", "done", timeout=120_000)
    thumb = answer.get_by_test_id("answer-figure")
    expect(thumb).to_have_count(1)
    image = thumb.locator("img")
    expect(image).to_have_attribute("alt", re.compile("Figure 1: Orion sales per quarter"))
    until(page, "(img) => img.complete && img.naturalWidth === 640", image.element_handle())
    thumb.click()
    panel_image = page.get_by_test_id("cite-figure").locator("img")
    expect(panel_image).to_be_visible()
    until(page, "(img) => img.complete && img.naturalHeight === 400", panel_image.element_handle())
