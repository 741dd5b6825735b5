"""A connector added through the registry (as a package's ``ragloom.connectors`` entry point would):
a source whose items keep their id when they move, so a moved item's document is renamed — same
document, nothing read — and the sync works with any connector, not only the built-in ones."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from ragloom.context import Context, Principal
from ragloom.ingest.connectors import ConnectorSpec, Item, connectors
from tests.sources.helpers import add_source, documents, make_kb, sync


@dataclass
class Page:
    path: str
    title: str
    body: str
    revision: int = 1


@dataclass
class Wiki:
    """A wiki in memory: pages by stable id, each with its path and revision."""

    pages: dict[str, Page] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)


WIKI = Wiki()


class WikiConnector:
    def __init__(self, spec: ConnectorSpec) -> None:
        self.space = str(spec.settings.get("space", ""))

    def settings(self) -> dict[str, Any]:
        return {"space": self.space}

    def check(self) -> str:
        return f"{len(WIKI.pages)} pages"

    def problems(self) -> list[str]:
        return []

    def list_items(self) -> Iterator[Item]:
        for page_id, page in WIKI.pages.items():
            yield Item(id=page_id, token=f"rev-{page.revision}", name=page.path.rsplit("/", 1)[-1] + ".md",
                       title=page.title, path=page.path, url=f"https://wiki.example/{self.space}/{page_id}")

    def read(self, item: Item) -> Iterator[bytes]:
        WIKI.reads.append(item.id)
        page = WIKI.pages[item.id]
        yield f"# {page.title}\n\n{page.body}\n".encode()

    def close(self) -> None:
        pass


@pytest.fixture
def wiki() -> Iterator[Wiki]:
    connectors.register("wiki", WikiConnector)
    WIKI.pages.clear()
    WIKI.reads.clear()
    try:
        yield WIKI
    finally:
        connectors._factories.pop("wiki", None)


def test_a_moved_item_keeps_its_document_and_is_renamed_without_a_read(ctx: Context, principal: Principal,
                                                                        wiki: Wiki) -> None:
    wiki.pages["p1"] = Page("guides/pump", "Pump", "Grease every 450 hours.")
    wiki.pages["p2"] = Page("guides/valve", "Valve", "The valve is blue.")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="wiki", settings={"space": "ops"})
    assert sync(ctx, principal, kb, source).stats["new"] == 2
    pump = documents(ctx, kb)["pump.md"]
    assert pump.meta["source_url"] == "https://wiki.example/ops/p1" and pump.meta["source_title"] == "Pump"

    wiki.reads.clear()
    wiki.pages["p1"] = Page("archive/old-pump", "Old pump", "Grease every 450 hours.")  # moved, renamed, same rev
    moved = sync(ctx, principal, kb, source)
    assert (moved.stats["unchanged"], moved.stats["new"], moved.stats["deleted"]) == (2, 0, 0)
    assert wiki.reads == []
    after = documents(ctx, kb)
    assert set(after) == {"old-pump.md", "valve.md"} and after["old-pump.md"].id == pump.id
    assert after["old-pump.md"].meta["source_path"] == "archive/old-pump"
    assert after["old-pump.md"].meta["source_title"] == "Old pump"

    wiki.pages["p1"].revision = 2  # edited at the source: a new version of the same document
    wiki.pages["p1"].body = "Grease every 500 hours."
    edited = sync(ctx, principal, kb, source)
    assert edited.stats["changed"] == 1 and wiki.reads == ["p1"]
    assert documents(ctx, kb)["old-pump.md"].id == pump.id
