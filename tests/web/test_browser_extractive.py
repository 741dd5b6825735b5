"""Issue 26: without a chat model the chat page says plainly that answers are extractive, with a link
to where a chat model is set (the workspace's providers page)."""

from __future__ import annotations

from typing import Any

from tests.web.browser import BROWSER, new_page, sign_up, sync_api

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
