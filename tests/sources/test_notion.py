"""The notion connector against a fake Notion API on loopback (tests/fakes/notion.py): pages shared with the
integration found by search, page by page, or only those of given databases and pages; a page's blocks
(read page by page, nested ones recursed) rendered to Markdown; a 429 waited out; a refused token named
without being shown; and the API's URL screened by the outbound guard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import Connector, ConnectorSpec, SourceError, open_connector
from tests.fakes.notion import FakeNotion, block, text
from tests.sources.helpers import add_source, documents, make_kb, sync

LOOPBACK = ("127.0.0.1/32",)
DATABASE = "01234567-89ab-cdef-0123-456789abcdef"


@pytest.fixture
def notion() -> Iterator[FakeNotion]:
    with FakeNotion(page_size=2) as fake:
        yield fake


def connector(notion: FakeNotion, **settings: object) -> Connector:
    return open_connector("notion", ConnectorSpec(settings={"api_url": notion.url, **settings},
                                                  credentials={"token": notion.token}, outbound_allow=LOOPBACK))


def table_row(*cells: str) -> dict[str, object]:
    return {"type": "table_row", "table_row": {"cells": [[text(c)] for c in cells]}, "children": []}


def test_blocks_rendered_to_markdown(notion: FakeNotion) -> None:
    page = notion.add_page("Pump manual", [
        block("heading_1", "Maintenance"),
        {"type": "paragraph", "paragraph": {"rich_text": [text("Grease "), text("every 450 hours", bold=True),
                                                          {**text("(spec)"), "href": "https://x.example/spec"}]},
         "children": []},
        block("bulleted_list_item", "Check the seal", block("bulleted_list_item", "the 12 mm one"),
              block("numbered_list_item", "then the valve")),
        block("bulleted_list_item", "Check the valve"),
        block("numbered_list_item", "Stop"),
        block("numbered_list_item", "Drain"),
        block("to_do", "Order seals", checked=True),
        block("to_do", "Log it", checked=False),
        block("code", "make grease", language="shell"),
        block("quote", "Safety first", block("paragraph", "Gloves on.")),
        block("divider"),
        {"type": "table", "table": {"table_width": 2, "has_column_header": True},
         "children": [table_row("part", "price"), table_row("seal", "40")]},
        {"type": "child_page", "child_page": {"title": "Appendix"}, "children": []},
    ])
    notion.rate_limit_next(1, "0")
    made = connector(notion)
    try:
        (item,) = list(made.list_items())
        assert (item.id, item.name, item.title) == (page.id, "Pump manual.md", "Pump manual")
        assert item.url.startswith("https://www.notion.so/Pump-manual-") and item.token.startswith("2026-")
        markdown = b"".join(made.read(item)).decode()
    finally:
        made.close()
    assert markdown == (
        "# Pump manual\n\n"
        "## Maintenance\n\n"
        "Grease **every 450 hours**[(spec)](https://x.example/spec)\n\n"
        "- Check the seal\n  - the 12 mm one\n  1. then the valve\n- Check the valve\n1. Stop\n2. Drain\n"
        "- [x] Order seals\n- [ ] Log it\n\n"
        "```shell\nmake grease\n```\n\n"
        "> Safety first\n> Gloves on.\n\n"
        "---\n\n"
        "| part | price |\n|---|---|\n| seal | 40 |\n\n"
        "*Page: Appendix*\n")
    children = [p for m, p, _ in notion.requests if m == "GET" and f"/v1/blocks/{page.id}/children" in p]
    assert len(children) == 7  # 13 blocks, two a request
    assert sum(1 for m, p, _ in notion.requests if m == "POST") == 2  # the 429, then the search


def test_search_pages_databases_and_pages(notion: FakeNotion) -> None:
    pages = [notion.add_page(f"Note {n}", [block("paragraph", f"note {n}")]) for n in range(5)]
    notion.add_page("Row", [block("paragraph", "a row")], database=DATABASE)
    made = connector(notion)
    try:
        assert [i.title for i in made.list_items()] == [*(f"Note {n}" for n in range(5)), "Row"]  # 3 requests
        notion.edit(pages[0].id, [block("paragraph", "changed")])
        notion.remove(pages[1].id)
        after = {i.id: i.token for i in made.list_items()}
        assert pages[1].id not in after and len(after) == 5
        assert made.check() == f"{notion.url}: signed in as ragloom test"
    finally:
        made.close()
    chosen = connector(notion, database_ids=[DATABASE.replace("-", "").upper()],
                       page_ids=[pages[2].id.replace("-", "")])
    try:
        assert [i.title for i in chosen.list_items()] == ["Row", "Note 2"]
    finally:
        chosen.close()


def test_refusals(notion: FakeNotion, monkeypatch: pytest.MonkeyPatch) -> None:
    notion.add_page("Pump", [block("paragraph", "grease")])
    wrong = open_connector("notion", ConnectorSpec(settings={"api_url": notion.url}, outbound_allow=LOOPBACK,
                                                   credentials={"token": "secret_wrong_123"}))
    try:
        with pytest.raises(SourceError, match="401: the source refused the credentials.*API token is invalid"
                           ) as refused:
            wrong.check()
        assert "secret_wrong_123" not in refused.value.message
    finally:
        wrong.close()
    made = connector(notion)
    monkeypatch.setattr(made._rest, "sleep", lambda _: None)  # type: ignore[attr-defined]
    notion.rate_limit_next(5, "30")  # the first ask and 4 more
    try:
        with pytest.raises(SourceError, match="rate limited") as limited:
            list(made.list_items())
        assert limited.value.transient
        made._rest.max_reply = 200  # type: ignore[attr-defined]
        with pytest.raises(SourceError, match="reply is larger than 200 bytes"):  # refused as it arrives
            list(made.list_items())
    finally:
        made.close()
    with pytest.raises(InvalidRequestError, match="loopback address"):
        open_connector("notion", ConnectorSpec(settings={"api_url": notion.url}, credentials={"token": "t"}))
    for settings, named in (({"page_ids": ["nope"]}, "settings.page_ids"),
                            ({"database_ids": "x"}, "settings.database_ids must be list"),
                            ({"api_url": "file:///etc"}, "settings.api_url")):
        with pytest.raises(InvalidRequestError, match=named):
            open_connector("notion", ConnectorSpec(settings=settings, credentials={"token": "t"},
                                                   outbound_allow=LOOPBACK))
    with pytest.raises(InvalidRequestError, match="needs token"):
        open_connector("notion", ConnectorSpec(settings={"api_url": notion.url}, outbound_allow=LOOPBACK))


def test_pages_synced(ctx: Context, principal: Principal, notion: FakeNotion) -> None:
    pump = notion.add_page("Pump", [block("paragraph", "The pump needs grease every 450 hours.")])
    notion.add_page("Valve", [block("paragraph", "The valve is blue.")])
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="notion", settings={"api_url": notion.url},
                        credentials={"token": notion.token})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"]) == (2, 2), first.message
    assert set(documents(ctx, kb)) == {"Pump.md", "Valve.md"}
    notion.edit(pump.id, [block("paragraph", "The pump needs grease every 500 hours.")])
    second = sync(ctx, principal, kb, source)
    assert (second.stats["changed"], second.stats["unchanged"]) == (1, 1)
