"""Screenshots of every page of the web UI over ragloom's sample set, in English and Chinese, at desktop
and phone width: ``make screenshots`` (or ``.venv/bin/python scripts/screenshots.py [--out DIR]``).

It starts a server of its own (a temporary data directory, a worker thread), signs up, uploads the
sample set (``src/ragloom/samples/``) through the documents page, makes an assistant and asks it a
question, then opens each page in four browsers (en and zh, 1280 px and 390 px wide) and saves
``{page}-{en|zh}[-phone].jpg`` under ``docs/screenshots/walk/``. The browser is Debian's chromium
(``apt-get install chromium``); nothing is downloaded. Takes about two minutes on two cores.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/web/browser.py: the browser tests' server and browser helpers

from tests.web.browser import CHROMIUM, World, new_page, open_world, sign_up, until  # noqa: E402

from ragloom.cli.quickstart import SAMPLE_FILES, samples_dir  # noqa: E402

log = logging.getLogger("screenshots")

QUESTION = "How often must the Orion pump be serviced?"
VIEWS = [("en", "en-US", 1280, 800, ""), ("zh", "zh-CN", 1280, 800, ""),
         ("en", "en-US", 390, 844, "-phone"), ("zh", "zh-CN", 390, 844, "-phone")]


class Walk:
    """The sample world: a signed-up owner, the samples parsed, an assistant with one answered session."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.page = new_page(world)
        sign_up(self.page, "ana@example.com")
        self.page.goto("/ui/kb")
        self.page.locator("#kb-name").fill("samples")
        self.page.locator("#kb-create button[type=submit]").click()
        self.page.wait_for_url(re.compile(r"^http://[^/]+/ui/kb/[^/]+$"))
        self.kb = self.page.url.rsplit("/", 1)[1]
        folder = samples_dir()
        self.page.locator("#file-input").set_input_files([str(folder / name) for name in SAMPLE_FILES])
        until(self.page, "(n) => document.querySelectorAll('#docs-table [data-testid=doc-status]').length === n"
                         " && [...document.querySelectorAll('#docs-table [data-testid=doc-status]')]"
                         ".every(b => ['done', 'failed'].includes(b.closest('tr').dataset.status))",
              len(SAMPLE_FILES), timeout=600)
        docs = self.api("GET", f"/datasets/{self.kb}/documents")["documents"]
        self.doc = {d["name"]: d["id"] for d in docs}
        chat = self.api("POST", "/chats", {"name": "sample helper", "dataset_ids": [self.kb]})
        self.chat = chat["id"]
        self.page.goto(f"/ui/chat/{self.chat}")
        self.page.locator("#question").fill(QUESTION)
        self.page.locator("#question").press("Enter")
        until(self.page, "() => { const a = [...document.querySelectorAll('[data-testid=answer]')].at(-1);"
                         " return a && ['done', 'failed'].includes(a.dataset.state); }", timeout=300)
        self.session = self.page.evaluate("new URLSearchParams(location.search).get('session')")

    def api(self, method: str, path: str, body: object = None) -> dict:  # type: ignore[type-arg]
        return self.page.evaluate("([m, p, b]) => RL.api(m, p, b === null ? undefined : b)", [method, path, body])


def settle(page) -> None:  # type: ignore[no-untyped-def]
    """Every image loaded but the lazy ones (out of view, or in a hidden thumbnail column: they never
    load; those in view are fetched before the network goes quiet) and nothing more to fetch."""
    until(page, "() => [...document.images].every(i => i.complete || i.loading === 'lazy')", timeout=60)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)


def pages(walk: Walk) -> list[tuple[str, Callable]]:  # type: ignore[type-arg]
    """(name, open it) for every page; each opener leaves the page as a person would look at it."""
    kb, pdf, csv = walk.kb, walk.doc.get("orion-manual.pdf"), walk.doc.get("topics.csv")

    def goto(path: str, ready: str) -> Callable:  # type: ignore[type-arg]
        def go(page) -> None:  # type: ignore[no-untyped-def]
            page.goto(path)
            page.locator(ready).first.wait_for()
        return go

    def details(page) -> None:  # type: ignore[no-untyped-def]
        goto(f"/ui/kb/{kb}", "#docs-table [data-testid=doc-status]")(page)
        page.locator("#docs-table tr", has_text="orion-manual.pdf").locator(".details-toggle").click()
        page.locator(".doc-details").first.wait_for()

    def bench(page) -> None:  # type: ignore[no-untyped-def]
        goto("/ui/bench", "#bench-question")(page)
        until(page, "() => document.querySelectorAll('[data-testid=bench-kbs] input:checked').length > 0")
        page.locator("#bench-question").fill(QUESTION)
        page.locator("#bench-question").press("Enter")
        page.locator("#result-a .bench-hit").first.wait_for()

    def chat(page) -> None:  # type: ignore[no-untyped-def]
        goto(f"/ui/chat/{walk.chat}?session={walk.session}", "[data-testid=answer][data-state=done]")(page)

    def citation(page) -> None:  # type: ignore[no-untyped-def]
        chat(page)
        page.locator("[data-testid=cite]").first.click()
        page.locator("#cite-panel [data-testid=cite-text]").wait_for()

    def assistant(page) -> None:  # type: ignore[no-untyped-def]
        goto(f"/ui/chat/{walk.chat}", "#assistant-edit")(page)
        page.locator("#assistant-edit").click()
        page.locator("#assistant-dialog[open]").wait_for()

    return [
        ("knowledge-bases", goto("/ui/kb", "#kb-table tbody tr")),
        ("documents", goto(f"/ui/kb/{kb}", "#docs-table [data-testid=doc-status]")),
        ("document-details", details),
        ("chunks", goto(f"/ui/kb/{kb}/documents/{pdf}", "[data-testid=page-image]")),
        ("chunks-table", goto(f"/ui/kb/{kb}/documents/{csv}", "#chunk-list li")),
        ("knowledge-base-settings", goto(f"/ui/kb/{kb}/settings", "form")),
        ("knowledge-builds", goto(f"/ui/kb/{kb}/knowledge", "main h1")),
        ("knowledge-graph", goto(f"/ui/kb/{kb}/graph", "main h1")),
        ("retrieval-bench", bench),
        ("chat", chat),
        ("chat-citation", citation),
        ("chat-assistant", assistant),
        ("members", goto("/ui/workspace/members", "main table tbody tr")),
        ("groups", goto("/ui/workspace/groups", "main h1")),
        ("invitations", goto("/ui/workspace/invitations", "main h1")),
        ("api-keys", goto("/ui/workspace/keys", "main h1")),
        ("providers", goto("/ui/workspace/providers", "main h1")),
        ("account", goto("/ui/account", "main h1")),
        ("status", goto("/status", "main, body")),
    ]


def shoot(world: World, walk: Walk, out: Path) -> list[Path]:
    saved: list[Path] = []
    cookies = walk.page.context.cookies()
    for lang, locale, width, height, suffix in VIEWS:
        signed_out = new_page(world, width=width, height=height, lang=locale)
        for name, path in (("sign-in", "/ui/login"), ("sign-up", "/ui/signup")):
            signed_out.goto(path)
            settle(signed_out)
            saved.append(save(signed_out, out / f"{name}-{lang}{suffix}.jpg"))
        signed_out.context.close()
        page = new_page(world, width=width, height=height, lang=locale)
        page.context.add_cookies(cookies)
        for name, opener in pages(walk):
            started = time.monotonic()
            opener(page)
            settle(page)
            saved.append(save(page, out / f"{name}-{lang}{suffix}.jpg"))
            log.info("%s-%s%s in %.1f s", name, lang, suffix, time.monotonic() - started)
        page.context.close()
    return saved


def save(page, path: Path) -> Path:  # type: ignore[no-untyped-def]
    page.screenshot(path=str(path), full_page=True, type="jpeg", quality=72)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "walk",
                        help="where the screenshots go (default: %(default)s)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not CHROMIUM.exists():
        log.error("Debian's chromium is not installed at %s (apt-get install -y chromium)", CHROMIUM)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragloom-shots-") as tmp, open_world(Path(tmp)) as world:
        started = time.monotonic()
        walk = Walk(world)
        log.info("samples parsed and a question answered in %.0f s", time.monotonic() - started)
        saved = shoot(world, walk, args.out)
    log.info("%d screenshots in %s", len(saved), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
