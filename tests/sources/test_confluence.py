"""The confluence connector against a fake Confluence speaking the REST API v1 on loopback
(tests/fakes/confluence.py): spaces listed page by page through ``_links.next``, a 429 waited out and one
that lasts a transient error, principals from read restrictions (own, inherited from an ancestor, users
without a visible e-mail by account id), attachments listed and downloaded, Cloud and Data Center
credentials, a refused token named without being shown, and a sync of a space."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import Connector, ConnectorSpec, SourceError, open_connector
from tests.fakes.confluence import FakeConfluence
from tests.sources.helpers import add_source, documents, make_kb, sync

LOOPBACK = ("127.0.0.1/32",)


@pytest.fixture
def wiki() -> Iterator[FakeConfluence]:
    with FakeConfluence(page_size=2) as fake:
        yield fake


def cloud(wiki: FakeConfluence, **settings: object) -> Connector:
    return open_connector("confluence", ConnectorSpec(
        settings={"url": wiki.url, "spaces": ["ENG"], "cloud": True, **settings}, outbound_allow=LOOPBACK,
        credentials={"email": wiki.email, "api_token": wiki.api_token}))


def test_pages_paged_restrictions_and_attachments(wiki: FakeConfluence) -> None:
    home = wiki.add_page("ENG", "Engineering", "<p>Home.</p>")
    secret = wiki.add_page("ENG", "Salaries", "<p>Secret.</p>", parent=home.id,
                           users=["Bob@Example.com", {"accountId": "557058:abc"}], groups=["hr"])
    child = wiki.add_page("ENG", "Salaries 2026", "<p>Still secret.</p>", parent=secret.id)
    for n in range(3):
        wiki.add_page("ENG", f"Note {n}", f"<p>Note {n}.</p>", parent=home.id)
    wiki.add_page("SALES", "Elsewhere", "<p>Other space.</p>")
    sheet = wiki.attach(child.id, "grid 2026.csv", b"name,eur\nbob,1\n", "text/csv")
    wiki.rate_limit_next(1, "0")
    made = cloud(wiki)
    try:
        items = {i.id: i for i in made.list_items()}
        assert set(items) == {f"page:{p.id}" for p in wiki.pages.values() if p.space == "ENG"} | {
            f"attachment:{sheet.id.removeprefix('att')}"}
        pages = [r for _, r in wiki.requests if "/rest/api/content?" in r]
        assert len(pages) == 3  # 6 pages two at a time following _links.next
        space = [r for _, r in wiki.requests if "/rest/api/space/ENG?expand=permissions" in r]
        assert len(space) == 2  # the space's permissions first: the 429, then again
        assert any("start=4" in r for r in pages)
        assert items[f"page:{home.id}"].principals == ()
        assert items[f"page:{secret.id}"].principals == ("group:hr", "user:557058:abc", "user:bob@example.com")
        assert items[f"page:{child.id}"].principals == items[f"page:{secret.id}"].principals  # inherited
        page = items[f"page:{child.id}"]
        assert page.name == "Salaries 2026.html" and page.title == "Salaries 2026"
        assert page.path == "ENG/Engineering/Salaries/Salaries 2026.html"
        assert page.url == f"{wiki.url}/spaces/ENG/pages/{child.id}/Salaries%202026"
        assert page.token.startswith("1:")
        html = b"".join(made.read(page)).decode()
        assert "<title>Salaries 2026</title>" in html and "<p>Still secret.</p>" in html
        att = items[f"attachment:{sheet.id.removeprefix('att')}"]
        assert att.name == "grid 2026.csv" and att.size == 15 and att.principals == page.principals
        assert att.path == "ENG/Engineering/Salaries/Salaries 2026/grid 2026.csv"
        assert b"".join(made.read(att)) == b"name,eur\nbob,1\n"
        assert made.check().endswith("(Cloud): spaces ENG (ENG)")
        wiki.edit(child.id, body="<p>Changed.</p>")
        assert {i.id: i for i in made.list_items()}[page.id].token.startswith("2:")
    finally:
        made.close()


def test_a_rate_limit_that_lasts_is_a_transient_error(wiki: FakeConfluence, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki.add_page("ENG", "Pump", "<p>Grease.</p>")
    wiki.rate_limit_next(50, "7")
    waits: list[float] = []
    made = cloud(wiki)
    monkeypatch.setattr(made._rest, "sleep", waits.append)  # type: ignore[attr-defined]
    try:
        with pytest.raises(SourceError, match="rate limited") as limited:
            list(made.list_items())
        assert limited.value.transient and waits == [7.0] * 4
    finally:
        made.close()


def test_credentials_cloud_and_data_center(wiki: FakeConfluence) -> None:
    wiki.add_page("ENG", "Pump", "<p>Grease.</p>")
    refused = open_connector("confluence", ConnectorSpec(
        settings={"url": wiki.url, "spaces": ["ENG"]}, outbound_allow=LOOPBACK,
        credentials={"email": wiki.email, "api_token": "wrong-token-xyz"}))
    try:
        with pytest.raises(SourceError, match="401: the source refused the credentials") as error:
            refused.check()
        assert "wrong-token-xyz" not in error.value.message and not error.value.transient
    finally:
        refused.close()
    center = open_connector("confluence", ConnectorSpec(
        settings={"url": wiki.url, "spaces": ["ENG"]}, outbound_allow=LOOPBACK, credentials={"token": wiki.token}))
    try:
        assert center.settings()["cloud"] is False and "(Data Center)" in center.check()
        assert [i.title for i in center.list_items()] == ["Pump"]
    finally:
        center.close()
    with pytest.raises(InvalidRequestError, match="Cloud takes email and api_token"):
        open_connector("confluence", ConnectorSpec(settings={"url": wiki.url, "spaces": ["ENG"], "cloud": True},
                                                   credentials={"token": "t"}, outbound_allow=LOOPBACK))
    for settings, named in (({"url": wiki.url}, "settings.spaces is required"),
                            ({"url": wiki.url, "spaces": ["no spaces!"]}, "settings.spaces"),
                            ({"url": "gopher://x", "spaces": ["ENG"]}, "settings.url"),
                            ({"url": wiki.url, "spaces": ["ENG"], "cloud": "yes"}, "settings.cloud")):
        with pytest.raises(InvalidRequestError, match=named):
            open_connector("confluence", ConnectorSpec(settings=settings, credentials={"token": "t"},
                                                       outbound_allow=LOOPBACK))
    with pytest.raises(InvalidRequestError, match="loopback address"):
        open_connector("confluence", ConnectorSpec(settings={"url": wiki.url, "spaces": ["ENG"]},
                                                   credentials={"token": "t"}))


def test_a_space_synced(ctx: Context, principal: Principal, wiki: FakeConfluence) -> None:
    pump = wiki.add_page("ENG", "Pump", "<p>The pump needs grease every 450 hours.</p>")
    wiki.add_page("ENG", "Valve", "<p>The valve is blue.</p>")
    wiki.attach(pump.id, "parts.csv", b"part,price\nseal,40\n", "text/csv")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="confluence", settings={"url": wiki.url, "spaces": ["ENG"]},
                        credentials={"email": wiki.email, "api_token": wiki.api_token})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"]) == (3, 3), first.message
    docs = documents(ctx, kb)
    assert set(docs) == {"Pump.html", "Valve.html", "parts.csv"}
    assert docs["Pump.html"].meta["source_title"] == "Pump"
    wiki.edit(pump.id, body="<p>The pump needs grease every 500 hours.</p>")
    second = sync(ctx, principal, kb, source)
    assert (second.stats["changed"], second.stats["unchanged"]) == (1, 2)


def test_the_groups_a_space_names_are_kept_in_step_and_its_readers_find_their_pages(
        ctx: Context, principal: Principal, wiki: FakeConfluence) -> None:
    from sqlalchemy import select

    from ragloom.db.models import MemberGroup
    from ragloom.schemas.datasets import KBUpdate
    from ragloom.schemas.groups import GroupCreate
    from ragloom.service import knowledgebases
    from ragloom.service.accounts import groups, identity
    from ragloom.service.documents import catalog
    from ragloom.states import Role

    wiki.groups = {"hr": [{"email": "Carol@Example.com"}, {"accountId": "557058:hidden"}],
                   "eng": [{"email": "dan@example.com"}]}
    salaries = wiki.add_page("ENG", "Salaries", "<p>Carol's team is paid monthly.</p>", groups=["hr"])
    wiki.add_page("ENG", "Build", "<p>The build runs nightly.</p>", groups=["eng"])
    wiki.add_page("ENG", "Lunch", "<p>Lunch is at noon.</p>")
    with ctx.db.session() as s:  # a group made by hand is never taken over by a source
        groups.create(s, principal=principal, spec=GroupCreate(name="eng", members=["erin@example.com"]))
        carol = identity.add_member(s, tenant_id=principal.tenant_id, email="carol@example.com")
        erin = identity.add_member(s, tenant_id=principal.tenant_id, email="erin@example.com")
    kb = make_kb(ctx, principal)
    with ctx.db.session() as s:
        knowledgebases.update(s, principal=principal, kb_id_or_name=kb,
                              spec=KBUpdate(source_permissions=True, permission="team"))
    source = add_source(ctx, principal, kb, type="confluence", settings={"url": wiki.url, "spaces": ["ENG"]},
                        credentials={"email": wiki.email, "api_token": wiki.api_token})
    job = sync(ctx, principal, kb, source)
    assert job.stats["new"] == 3
    assert any(e["item"] == "group:eng" and "made by hand" in e["message"] for e in job.errors), job.errors

    def kept() -> dict[str, tuple[list[str], str | None]]:
        with ctx.db.session() as s:
            return {g.name: (groups.members_of(s, g.id), g.source_id)
                    for g in s.scalars(select(MemberGroup).where(MemberGroup.tenant_id == principal.tenant_id))}

    assert kept() == {"hr": (["carol@example.com"], source), "eng": (["erin@example.com"], None)}

    def listed(user_id: str) -> set[str]:
        with ctx.db.session() as s:
            docs, _ = catalog.list_documents(s, principal=Principal(principal.tenant_id, user_id, Role.MEMBER),
                                             kb_id=kb)
            return {d.name for d in docs}

    assert listed(carol.id) == {"Salaries.html", "Lunch.html"}  # hr, synced from the source
    assert listed(erin.id) == {"Build.html", "Lunch.html"}  # eng, the workspace's own group
    # the restriction lifted at the source: the page is everyone's, and the group the source made goes
    wiki.pages[salaries.id].groups = []
    wiki.edit(salaries.id)
    sync(ctx, principal, kb, source)
    assert "hr" not in kept() and listed(erin.id) == {"Build.html", "Lunch.html", "Salaries.html"}


def test_a_page_restricted_at_no_level_is_read_as_its_space_allows(wiki: FakeConfluence) -> None:
    wiki.add_space("ENG", "Engineering", users=["Ann@Example.com"], groups=["eng"])
    wiki.add_space("OPEN", "Everyone", groups=["staff"], anonymous=True)
    home = wiki.add_page("ENG", "Home", "<p>Home.</p>")
    locked = wiki.add_page("ENG", "Locked", "<p>Locked.</p>", parent=home.id, groups=["leads"])
    notes = wiki.add_page("OPEN", "Notes", "<p>For all.</p>")
    made = cloud(wiki, spaces=["ENG", "OPEN"])
    try:
        items = {i.id: i.principals for i in made.list_items()}
        assert items[f"page:{home.id}"] == ("group:eng", "user:ann@example.com")  # the space's viewers
        assert items[f"page:{locked.id}"] == ("group:leads",)  # its own restriction first
        assert items[f"page:{notes.id}"] == ()  # anonymous access: anyone
        wiki.groups = {"eng": [{"email": "bo@example.com"}], "leads": [{"email": "cy@example.com"}]}
        assert dict(made.groups()) == {"eng": ["bo@example.com"], "leads": ["cy@example.com"]}
    finally:
        made.close()
