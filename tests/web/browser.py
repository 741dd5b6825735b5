"""Shared parts of the browser tests: Playwright for Python driving Debian's chromium (never a
downloaded browser build) against a real server on loopback with a worker thread. Each test module
uses ``BROWSER`` as its ``pytestmark`` and the ``world`` fixture of tests/web/conftest.py.

``RAGLOOM_SCREENSHOTS=1`` also saves a screenshot of each page to docs/screenshots/ (the README's).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragloom.config import Settings
from tests.live import Live, live_server

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).parents[2] / "docs" / "screenshots"
PASSWORD = "correct horse battery staple"

BROWSER = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium; .ci/run does)"),
]
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (pip install -e '.[server,dev]')")
# Assertions wait up to 30 s, not Playwright's 5: the full suite runs beside these tests on two cores, and
# a request the page waits for (a settings save, a re-embedded chunk) can take seconds there.
sync_api.expect.set_options(timeout=30_000)


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """A screenshot for docs/, only when asked (RAGLOOM_SCREENSHOTS=1): normal runs rewrite no file."""
    if os.environ.get("RAGLOOM_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@dataclass
class World:
    live: Live
    browser: object
    tmp: Path


@contextmanager
def open_world(tmp: Path, **overrides: object) -> Iterator[World]:
    """A live server with its own home under ``tmp`` and a chromium to drive it (the ``world`` fixture);
    ``overrides`` are more settings (a chat model's address, say)."""
    settings = Settings(home=tmp / "home", workers=0, worker_poll_seconds=0.05, _env_file=None,
                        **overrides)  # type: ignore[arg-type]
    with live_server(settings) as live, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield World(live, browser, tmp)
        finally:
            browser.close()


def until(page, expression: str, arg: object = None, *, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Poll a JavaScript function until it returns something true. Not ``page.wait_for_function``:
    when its first try fails it polls with ``eval`` in the page, which the UI's Content-Security-Policy
    (script-src 'self') refuses; ``page.evaluate`` runs through the DevTools protocol, outside it."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(100)


def new_page(world: World, *, width: int = 1280, height: int = 800, lang: str = "en-US"):  # type: ignore[no-untyped-def]
    context = world.browser.new_context(viewport={"width": width, "height": height}, locale=lang,  # type: ignore[attr-defined]
                                        base_url=world.live.url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((world.live.url, "data:")) else None)
    page.on("dialog", lambda d: d.accept())
    page.outside = outside  # requests to any other host: there must be none
    return page


def sign_up(page, email: str) -> None:  # type: ignore[no-untyped-def]
    page.goto("/ui/kb")
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/login\?next=/ui/kb$"))
    shot(page, "sign-in")
    page.get_by_role("link", name="No account yet? Sign up").click()
    page.wait_for_url("**/ui/signup**")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    shot(page, "sign-up")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/kb$"))


def create_kb(page, name: str) -> str:  # type: ignore[no-untyped-def]
    page.goto("/ui/kb")
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create").click()
    page.wait_for_url(re.compile(r"^http://[^/]+/ui/kb/[^/]+$"))
    sync_api.expect(page.locator("#kb-title")).to_have_text(name)
    return page.url.rsplit("/", 1)[1]


def upload_texts(page, files: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Drop text files (Markdown for ``.md`` names, plain text otherwise) on a knowledge base's page."""
    page.locator("#file-input").set_input_files([
        {"name": name, "mimeType": "text/markdown" if name.endswith(".md") else "text/plain",
         "buffer": text.encode()} for name, text in files.items()])


def watch_statuses(page) -> None:  # type: ignore[no-untyped-def]
    """Record every status badge text the documents table ever shows (the live progress)."""
    page.evaluate("""() => { window.seen = new Set();
      const note = () => document.querySelectorAll('[data-testid=doc-status]')
        .forEach(b => window.seen.add(b.textContent));
      new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
    }""")


