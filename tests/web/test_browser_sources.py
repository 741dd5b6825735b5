"""The sources tab of a knowledge base in chromium (issue 30): add a folder source, test it, sync it now
and see the counts live, pause and resume it, sync a change, see the folder outside the allowed roots
refused, remove it with its documents."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import BROWSER

pytestmark = BROWSER  # slow, and skipped with the reason when Debian's chromium is missing


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.web.browser import open_world

    tmp = tmp_path_factory.mktemp("ui-sources")
    (tmp / "shared").mkdir()
    with open_world(tmp, source_roots=[tmp / "shared"]) as w:
        yield w


def test_a_folder_source_from_the_sources_tab(world: Any) -> None:
    from playwright.sync_api import expect

    from tests.web.browser import create_kb, new_page, shot, sign_up

    folder: Path = world.tmp / "shared" / "handbook"
    folder.mkdir()
    (folder / "pump.md").write_text("# Pump\n\nGrease every 450 hours.\n")
    (folder / "valve.md").write_text("# Valve\n\nThe valve is blue.\n")
    (folder / "notes.txt").write_text("notes\n")
    page = new_page(world)
    sign_up(page, "sources@example.com")
    kb = create_kb(page, "Handbook")
    page.get_by_role("link", name="Sources", exact=True).click()
    page.wait_for_url(re.compile(rf"/ui/kb/{kb}/sources$"))
    expect(page.locator("#kb-crumb")).to_have_text("Handbook")
    expect(page.locator("#sources-empty")).to_be_visible()

    page.get_by_label("Name", exact=True).fill("handbook")
    page.get_by_label("Type").select_option("folder")
    page.get_by_label("Where").fill(str(folder))
    page.get_by_label("Only paths matching").fill("*.md")
    page.get_by_role("button", name="Add the source").click()
    rows = page.locator("#sources-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(str(folder))
    expect(rows.first).to_contain_text("never synced")

    rows.first.get_by_role("button", name="Test").click()
    expect(page.locator("#flash")).to_contain_text("✓")
    rows.first.get_by_role("button", name="Sync now").click()
    last = rows.first.get_by_test_id("source-last-sync")
    expect(last).to_contain_text("done", timeout=60_000)
    expect(last).to_contain_text("3 listed, 2 new, 0 changed, 0 deleted, 0 unchanged, 1 skipped, 0 failed")
    expect(page.locator("#syncs-table tbody tr")).to_have_count(1)

    rows.first.get_by_role("button", name="Pause").click()
    expect(rows.first).to_contain_text("paused")
    rows.first.get_by_role("button", name="Resume").click()
    expect(rows.first).not_to_contain_text("paused")

    (folder / "pump.md").write_text("# Pump\n\nGrease every 500 hours, and more.\n")
    rows.first.get_by_role("button", name="Sync now").click()
    expect(page.locator("#syncs-table tbody tr")).to_have_count(2, timeout=60_000)
    expect(last).to_contain_text("1 changed", timeout=60_000)
    shot(page, "sources")

    page.get_by_label("Name", exact=True).fill("outside")
    page.get_by_label("Where").fill("/etc")
    page.get_by_role("button", name="Add the source").click()
    expect(page.get_by_test_id("sources-error")).to_contain_text("RAGLOOM_SOURCE_ROOTS")

    rows.first.get_by_role("button", name="Remove").click()  # the dialog is accepted
    expect(page.locator("#sources-empty")).to_be_visible()
    docs = page.evaluate(f"RL.api('GET', '/datasets/{kb}/documents').then(d => d.total)")
    assert docs == 0
    assert page.outside == []
