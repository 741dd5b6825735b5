"""The web connector against a real site on loopback (Python's http.server): same site only, depth and
page limits, robots.txt, sitemap.xml, canonical URLs, noindex, linked documents listed by HEAD and
downloaded only when read, the outbound guard, and a listing with a failing page deleting nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, SourceError, open_connector
from tests.ingest.docgen import make_pdf
from tests.sources.helpers import add_source, documents, make_kb, sync
from tests.sources.sites import page, web_site

LOOPBACK = ("127.0.0.1/32",)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Path, object]]:
    root = tmp_path / "site"
    root.mkdir()
    with web_site(root) as server:
        yield root, server


def crawl(url: str, **settings: object) -> dict[str, object]:
    made = open_connector("web", ConnectorSpec(settings={"urls": [url], **settings}, outbound_allow=LOOPBACK))
    try:
        return {i.id: i for i in made.list_items()}
    finally:
        made.close()


def test_same_site_depth_and_page_limits(site: tuple[Path, object]) -> None:
    root, server = site
    url: str = server.url  # type: ignore[attr-defined]
    (root / "index.html").write_text(page("Home", "home", links=["/a.html", "https://example.com/x", "mailto:x@y"]))
    (root / "a.html").write_text(page("A", "a", links=["/b.html", "a.html#section"]))
    (root / "b.html").write_text(page("B", "b", links=["/c.html"]))
    (root / "c.html").write_text(page("C", "c"))
    assert set(crawl(url + "/", max_depth=2)) == {url + "/", url + "/a.html", url + "/b.html"}
    assert set(crawl(url + "/", max_depth=0)) == {url + "/"}
    assert len(crawl(url + "/", max_depth=5, max_pages=2)) == 2
    assert set(crawl(url + "/", max_depth=5)) == {url + "/", url + "/a.html", url + "/b.html", url + "/c.html"}
    assert not any("example.com" in r for _, r in server.requests)  # type: ignore[attr-defined]
    item = crawl(url + "/")[url + "/a.html"]
    assert item.title == "A" and item.name == "a.html" and item.url == url + "/a.html"  # type: ignore[attr-defined]


def test_robots_sitemap_canonical_and_noindex(site: tuple[Path, object]) -> None:
    root, server = site
    url: str = server.url  # type: ignore[attr-defined]
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (root / "private").mkdir()
    (root / "private" / "p.html").write_text(page("Private", "no"))
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{url}/orphan.html</loc></url></urlset>")
    (root / "orphan.html").write_text(page("Orphan", "only in the sitemap"))
    (root / "index.html").write_text(page("Home", "home", links=["/private/p.html", "/print.html", "/hidden.html"]))
    (root / "print.html").write_text(page("Print view", "same", head=f'<link rel="canonical" href="{url}/">'))
    (root / "hidden.html").write_text(page("Hidden", "x", links=["/deep.html"],
                                           head='<meta name="robots" content="noindex">'))
    (root / "deep.html").write_text(page("Deep", "found through a noindex page"))
    found = crawl(url + "/")
    assert set(found) == {url + "/", url + "/orphan.html", url + "/deep.html"}
    assert ("GET", "/private/p.html") not in server.requests  # type: ignore[attr-defined]
    assert set(crawl(url + "/", robots=False, sitemap=False)) == {url + "/", url + "/private/p.html",
                                                                   url + "/deep.html"}


def test_linked_documents_are_listed_by_head_and_read_on_demand(site: tuple[Path, object]) -> None:
    root, server = site
    url: str = server.url  # type: ignore[attr-defined]
    make_pdf(root / "manual.pdf", [["# Manual", "The pump needs grease every 450 hours."]])
    (root / "index.html").write_text(page("Home", "home", links=["/manual.pdf"]))
    made = open_connector("web", ConnectorSpec(settings={"urls": [url + "/"]}, outbound_allow=LOOPBACK))
    try:
        items = {i.id: i for i in made.list_items()}
        pdf = items[url + "/manual.pdf"]
        assert pdf.token.startswith("etag:") and pdf.name == "manual.pdf"
        assert pdf.size == (root / "manual.pdf").stat().st_size
        requests = server.requests  # type: ignore[attr-defined]
        assert ("GET", "/manual.pdf") not in requests and ("HEAD", "/manual.pdf") in requests
        assert b"".join(made.read(pdf)) == (root / "manual.pdf").read_bytes()
    finally:
        made.close()


def test_the_outbound_guard_refuses_loopback_unless_allowed(site: tuple[Path, object]) -> None:
    root, server = site
    (root / "index.html").write_text(page("Home", "home"))
    made = open_connector("web", ConnectorSpec(settings={"urls": [server.url + "/"]}))  # type: ignore[attr-defined]
    try:
        with pytest.raises(SourceError, match="loopback"):
            list(made.list_items())
    finally:
        made.close()
    with pytest.raises(InvalidRequestError, match="not an http"):
        open_connector("web", ConnectorSpec(settings={"urls": ["file:///etc/passwd"]}))


def test_a_sync_deletes_nothing_while_a_page_fails(ctx: Context, principal: Principal,
                                                   site: tuple[Path, object]) -> None:
    root, server = site
    url: str = server.url  # type: ignore[attr-defined]
    (root / "index.html").write_text(page("Home", "home", links=["/a.html", "/b.html"]))
    (root / "a.html").write_text(page("Alpha", "The alpha valve is green."))
    (root / "b.html").write_text(page("Beta", "The beta valve is red."))
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="web", settings={"urls": [url + "/"]})
    first = sync(ctx, principal, kb, source)
    assert first.stats["new"] == 3 and set(documents(ctx, kb)) == {"index.html", "a.html", "b.html"}
    beta = documents(ctx, kb)["b.html"]
    assert beta.meta["source_url"] == url + "/b.html" and beta.meta["source_title"] == "Beta"

    server.fail.add("/b.html")  # type: ignore[attr-defined]
    flaky = sync(ctx, principal, kb, source)
    assert flaky.stats["deleted"] == 0 and "deleted nothing" in flaky.message
    assert "b.html" in documents(ctx, kb)

    server.fail.clear()  # type: ignore[attr-defined]
    (root / "b.html").unlink()
    (root / "a.html").write_text(page("Alpha", "The alpha valve is now yellow."))
    later = sync(ctx, principal, kb, source)
    assert (later.stats["deleted"], later.stats["changed"], later.stats["unchanged"]) == (1, 1, 1)
    assert set(documents(ctx, kb)) == {"index.html", "a.html"}


def test_a_page_larger_than_the_limit_is_refused_as_it_arrives(site: tuple[Path, object]) -> None:
    root, server = site
    url: str = server.url  # type: ignore[attr-defined]
    (root / "index.html").write_text(page("Home", "home", links=["/big.html", "/small.html"]))
    (root / "big.html").write_text(page("Big", "x" * 200_000))
    (root / "small.html").write_text(page("Small", "small"))
    made = open_connector("web", ConnectorSpec(settings={"urls": [url + "/"]}, outbound_allow=LOOPBACK,
                                               max_bytes=50_000))
    try:
        assert set(i.id for i in made.list_items()) == {url + "/", url + "/small.html"}
        assert made.problems() == []  # too large is no transient fault: the page is left out
    finally:
        made.close()
