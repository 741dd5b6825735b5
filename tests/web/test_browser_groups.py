"""Source permissions in chromium (issue 30): the workspace's Groups page (create a group, add and remove
members, delete one), a knowledge base's two source-permission settings, a folder source's readers; and a
member who sees the groups read-only, and whose stale page shows the API's refusal (shared parts in
browser.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.browser import BROWSER

pytestmark = BROWSER  # slow, and skipped with the reason when Debian's chromium is missing


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.web.browser import open_world

    tmp = tmp_path_factory.mktemp("ui-groups")
    (tmp / "shared").mkdir()
    with open_world(tmp, source_roots=[tmp / "shared"]) as w:
        yield w


def api(page, method: str, path: str, body: object = None):  # type: ignore[no-untyped-def]
    return page.evaluate("([m, p, b]) => RL.api(m, p, b === null ? undefined : b)", [method, path, body])


def test_groups_settings_and_readers_as_the_owner_and_read_only_for_a_member(world: Any) -> None:
    from playwright.sync_api import expect

    from ragloom.web import messages
    from tests.web.browser import PASSWORD, create_kb, new_page, shot, sign_up

    owner = new_page(world)
    sign_up(owner, "olga@example.com")
    owner.goto("/ui/workspace/members")
    owner.get_by_role("link", name="Groups", exact=True).click()
    owner.wait_for_url(re.compile(r"/ui/workspace/groups$"))
    expect(owner.locator("#groups-empty")).to_be_visible()
    expect(owner.get_by_test_id("groups-read-only")).to_be_hidden()

    # create a group with two members, add a third, take one out
    owner.get_by_label("Name").fill("Engineering")
    owner.get_by_label("Description").fill("Builds the pumps")
    owner.get_by_label("Members").fill("ana@example.com\nBo@Example.com")
    owner.get_by_role("button", name="Create group").click()
    rows = owner.locator("#groups-table tbody tr")
    expect(rows).to_have_count(1)
    row = rows.first
    expect(row.get_by_test_id("group-count")).to_have_text("2 members")
    expect(row.get_by_test_id("group-members")).to_contain_text("bo@example.com")
    expect(row).to_contain_text("Builds the pumps")
    row.get_by_label("Add members to Engineering").fill("cy@example.com, dee@example.com")
    row.get_by_role("button", name="Add", exact=True).click()
    expect(row.get_by_test_id("group-count")).to_have_text("4 members")
    row.get_by_role("button", name="Remove dee@example.com from Engineering").click()
    expect(row.get_by_test_id("group-count")).to_have_text("3 members")
    assert api(owner, "GET", "/groups/Engineering")["members"] == ["ana@example.com", "bo@example.com",
                                                                   "cy@example.com"]
    # the API's refusal is shown as it came
    row.get_by_label("Add members to Engineering").fill("not-an-address")
    row.get_by_role("button", name="Add", exact=True).click()
    expect(owner.get_by_test_id("page-error")).to_contain_text("'not-an-address' is not an e-mail address")
    # a second group, deleted (the confirm is accepted)
    owner.get_by_label("Name").fill("Temp")
    owner.get_by_role("button", name="Create group").click()
    expect(rows).to_have_count(2)
    expect(owner.get_by_test_id("page-error")).to_be_empty()
    owner.get_by_role("button", name="Delete the group Temp").click()
    expect(rows).to_have_count(1)
    shot(owner, "groups")
    owner.set_viewport_size({"width": 390, "height": 844})  # a phone: the page does not scroll sideways
    expect(row.get_by_label("Add members to Engineering")).to_be_visible()
    assert owner.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    owner.set_viewport_size({"width": 1280, "height": 800})

    # the knowledge base's source permissions: the second box only with the first; saved, and kept on reload
    kb = create_kb(owner, "Handbook")
    owner.goto(f"/ui/kb/{kb}/settings")
    permissions = owner.get_by_label("Source permissions", exact=True)
    see_all = owner.get_by_label("Owner and admins see everything", exact=True)
    expect(permissions).not_to_be_checked()
    expect(see_all).to_be_disabled()
    permissions.check()
    expect(see_all).to_be_enabled()
    see_all.check()
    owner.get_by_role("button", name="Save").click()
    expect(owner.locator("#settings-error")).to_be_empty()
    expect(owner.locator("#flash")).to_have_text("Saved.")
    owner.reload()
    expect(permissions).to_be_checked()
    expect(see_all).to_be_checked()
    expect(see_all).to_be_enabled()
    saved = api(owner, "GET", f"/datasets/{kb}")
    assert saved["source_permissions"] is True and saved["admins_see_all"] is True

    # a folder source with its readers, shown in its row
    folder = world.tmp / "shared" / "handbook"
    folder.mkdir()
    (folder / "pump.md").write_text("# Pump\n\nGrease every 450 hours.\n")
    owner.goto(f"/ui/kb/{kb}/sources")
    owner.get_by_label("Name", exact=True).fill("handbook")
    owner.get_by_label("Type").select_option("folder")
    owner.get_by_label("Where").fill(str(folder))
    owner.get_by_label("Readers").fill("group:Engineering\nuser:Erin@example.com")
    owner.get_by_role("button", name="Add the source").click()
    source = owner.locator("#sources-table tbody tr")
    expect(source).to_have_count(1)
    expect(source.first.get_by_test_id("source-readers")).to_have_text("group:Engineeringuser:erin@example.com")
    assert api(owner, "GET", f"/datasets/{kb}/sources")["sources"][0]["readers"] == [
        "group:Engineering", "user:erin@example.com"]
    owner.get_by_label("Name", exact=True).fill("bad readers")
    owner.get_by_label("Where").fill(str(folder))
    owner.get_by_label("Readers").fill("nobody")
    owner.get_by_role("button", name="Add the source").click()
    expect(owner.get_by_test_id("sources-error")).to_contain_text("reader 'nobody' is neither")
    expect(source).to_have_count(1)

    # someone invited as an admin opens the groups page; made a member meanwhile, their change is refused
    token = api(owner, "POST", "/invitations", {"role": "admin"})["token"]
    other = new_page(world)
    other.goto(f"/ui/signup?invitation={token}")
    other.get_by_label("E-mail address").fill("bo@example.com")
    other.get_by_label("Password").fill(PASSWORD)
    other.get_by_role("button", name="Create account").click()
    other.wait_for_url(re.compile(r"/ui/kb$"))
    other.goto("/ui/workspace/groups")
    expect(other.get_by_role("button", name="Delete the group Engineering")).to_be_visible()
    bo = next(m for m in api(owner, "GET", "/members")["members"] if m["email"] == "bo@example.com")
    api(owner, "PATCH", f"/members/{bo['user_id']}", {"role": "member"})
    other.get_by_role("button", name="Delete the group Engineering").click()
    expect(other.get_by_test_id("page-error")).to_have_text(
        "only the workspace's owner or an admin may delete a group")
    expect(other.locator("#groups-table tbody tr")).to_have_count(1)

    # as a member: the groups, read-only
    other.reload()
    expect(other.get_by_test_id("groups-read-only")).to_be_visible()
    expect(other.locator("#group-form")).to_be_hidden()
    member_rows = other.locator("#groups-table tbody tr")
    expect(member_rows).to_have_count(1)
    expect(member_rows.first.get_by_test_id("group-members")).to_contain_text("ana@example.com")
    expect(member_rows.first.get_by_role("button")).to_have_count(0)
    expect(member_rows.first.get_by_role("textbox")).to_have_count(0)
    other.context.add_cookies([{"name": messages.LANGUAGE_COOKIE, "value": "zh", "url": world.live.url}])
    other.reload()
    expect(other.locator("section[data-page=groups] h2")).to_have_text("群组")
    expect(other.get_by_test_id("groups-read-only")).to_have_text(messages.ZH["groups.read_only"])
    expect(member_rows.first.get_by_test_id("group-count")).to_have_text("3 名成员")
    assert owner.outside == [] and other.outside == []
