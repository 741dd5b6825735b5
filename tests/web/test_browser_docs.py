"""/docs and /redoc under their Content-Security-Policy (issue 24): Swagger UI and ReDoc, served from
the fastapi-offline package, still render in chromium with no policy violation, and no page of the
server can be framed by another site."""

from __future__ import annotations

import pytest

from tests.web.browser import BROWSER, World, new_page, sync_api, until

pytestmark = BROWSER


def test_swagger_ui_renders_every_operation_without_a_policy_violation(world: World) -> None:
    page = new_page(world)
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto("/docs")
    assert response is not None and "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "'unsafe-inline'" not in response.headers["content-security-policy"].split("script-src", 1)[1].split(";")[0]
    until(page, "() => document.querySelectorAll('.opblock').length > 40")
    page.locator(".opblock-summary").first.click()  # an operation opens: the UI's scripts run
    sync_api.expect(page.locator(".opblock-body").first).to_be_visible()
    assert seen == [] and page.outside == []


def test_redoc_renders_without_a_policy_violation(world: World) -> None:
    page = new_page(world)
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto("/redoc")
    sync_api.expect(page.locator("h1").first).to_contain_text("ragloom")
    until(page, "() => document.querySelectorAll('[data-section-id^=\"operation/\"]').length > 40")
    # ReDoc's "API docs by Redocly" badge is an image on its CDN: the policy blocks it, the page stays
    # offline; its search index runs in a worker from a blob: of this origin
    assert [m for m in seen if "https://cdn.redoc.ly/" not in m] == []
    assert [u for u in page.outside if not u.startswith(("blob:" + world.live.url, "https://cdn.redoc.ly/"))] == []


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/", "/ui/login", "/api/v1/health"])
def test_no_page_can_be_framed_by_another_site(world: World, path: str) -> None:
    page = new_page(world)
    page.goto("about:blank")
    page.set_content(f'<iframe id="f" src="{world.live.url}{path}"></iframe>')
    page.wait_for_timeout(1000)
    inner = next(f for f in page.frames if f != page.main_frame)
    assert inner.url.startswith("chrome-error://"), (path, inner.url)  # chromium refused to show it
