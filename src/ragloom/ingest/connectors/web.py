"""The ``web`` connector: the pages of a web site, crawled from start URLs.

Same site only: a link is followed when its scheme is http(s) and its host one of the start URLs'.
The crawl goes breadth first up to ``max_depth`` links from a start URL and ``max_pages`` items;
``sitemap.xml`` (and the sitemaps ``robots.txt`` names) adds the URLs it lists; ``robots.txt`` is
obeyed (``Disallow`` for the ``ragloom`` user agent or ``*``), and so are a page's ``<meta
name="robots">`` ``noindex`` (not kept, its links followed) and ``nofollow``. A page that names a
canonical URL (``<link rel="canonical">``, same site) is listed under it, once. A page's HTML is kept as
it is: the HTML parser leaves out navigation, headers, footers and asides when it reads it.

Links to documents (PDF, Word, PowerPoint, Excel, ...) are listed with a ``HEAD`` request — their
ETag, or last modification and length, is their change token — and downloaded only when read. A page
is downloaded by the listing itself (its links are needed); its token is the sha256 of its bytes, kept
in a temporary folder until it is read.

Every request goes through the outbound guard (:class:`ragloom.models.http.GuardedTransport`): a web
source cannot make the server read its loopback, private network or cloud metadata addresses unless
an administrator allows the range (``RAGLOOM_OUTBOUND_ALLOW``). A page that could not be fetched
(timeout, 5xx) is a *problem* of the listing (:meth:`WebConnector.problems`): a sync then deletes
nothing, since a page it did not see may still exist.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
import shutil
import tempfile
import urllib.robotparser
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from lxml import etree
from lxml import html as lxml_html

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    READ_CHUNK,
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    setting,
    unknown_settings,
)
from ragloom.models.http import GuardedTransport, OutboundPolicy

log = logging.getLogger(__name__)

USER_AGENT = "ragloom"
DOCUMENT_EXTENSIONS = frozenset({".pdf", ".docx", ".doc", ".pptx", ".ppt", ".xlsx", ".xls", ".csv", ".txt", ".md",
                                 ".epub", ".json", ".eml", ".msg", ".tsv"})
HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_START_URLS = 50
MAX_SITEMAP_FILES = 20


def normalize(url: str) -> str | None:
    """``url`` without its fragment, scheme and host in lower case, the default port dropped and an empty
    path made ``/``; None unless it is an http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != (443 if scheme == "https" else 80):
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


def _site(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def file_name(url: str, *, html: bool) -> str:
    """A document's file name made of its URL's path (``/docs/intro`` -> ``docs-intro.html``)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    stem = "-".join(segments) or "index"
    if parts.query:
        stem += "-" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    stem = re.sub(r"[^\w.\-]+", "_", stem)[-150:].lstrip("._-") or "page"
    ext = posixpath.splitext(stem)[1].lower()
    if html and ext not in (".html", ".htm"):
        stem += ".html"
    return stem


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response read whole (within the size limit)."""

    status_code: int
    url: str
    headers: httpx.Headers
    content: bytes


class WebConnector:
    """See the module docstring. Settings: ``urls`` (start URLs, required), ``max_depth`` (links followed
    from a start URL, default 2), ``max_pages`` (items listed at most, default 200), ``sitemap`` and
    ``robots`` (default true), ``documents`` (linked PDFs and office files too, default true)."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"urls", "max_depth", "max_pages", "sitemap", "robots", "documents"})
        urls = setting(spec.settings, "urls", list, required=True)
        if not urls or len(urls) > MAX_START_URLS:
            raise InvalidRequestError(f"settings.urls must list 1 to {MAX_START_URLS} start URLs")
        starts = []
        for u in urls:
            n = normalize(u) if isinstance(u, str) else None
            if n is None:
                raise InvalidRequestError(f"settings.urls: {u!r} is not an http(s) URL")
            starts.append(n)
        self.starts = list(dict.fromkeys(starts))
        self.max_depth = setting(spec.settings, "max_depth", int, 2)
        self.max_pages = setting(spec.settings, "max_pages", int, 200)
        if not 0 <= self.max_depth <= 20:
            raise InvalidRequestError("settings.max_depth must be between 0 and 20")
        if not 1 <= self.max_pages <= 100_000:
            raise InvalidRequestError("settings.max_pages must be between 1 and 100000")
        self.use_sitemap = bool(setting(spec.settings, "sitemap", bool, True))
        self.use_robots = bool(setting(spec.settings, "robots", bool, True))
        self.documents = bool(setting(spec.settings, "documents", bool, True))
        self.sites = {_site(u) for u in self.starts}
        self.max_bytes = spec.max_bytes
        self._client = httpx.Client(transport=GuardedTransport(OutboundPolicy.allowing(spec.outbound_allow)),
                                    timeout=spec.timeout, follow_redirects=True, trust_env=False,
                                    headers={"User-Agent": USER_AGENT})
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self._cache = Path(tempfile.mkdtemp(prefix="ragloom-web-"))
        self._problems: list[str] = []

    def settings(self) -> dict[str, Any]:
        return {"urls": self.starts, "max_depth": self.max_depth, "max_pages": self.max_pages,
                "sitemap": self.use_sitemap, "robots": self.use_robots, "documents": self.documents}

    def problems(self) -> list[str]:
        """What the last listing could not fetch (while there is any, a sync deletes nothing)."""
        return list(self._problems)

    # --- requests ---

    def _get(self, url: str) -> Fetched:
        """A GET read whole, but never more than ``max_bytes`` of it (a larger body is refused as it arrives)."""
        try:
            with self._client.stream("GET", url) as resp:
                body = b"".join(bounded(resp.iter_bytes(READ_CHUNK), self.max_bytes, url))
                return Fetched(resp.status_code, str(resp.url), resp.headers, body)
        except httpx.HTTPError as exc:
            raise SourceError(f"{url}: {exc}", transient=True) from None

    def check(self) -> str:
        resp = self._get(self.starts[0])
        if resp.status_code >= 400:
            raise SourceError(f"{self.starts[0]} answered {resp.status_code}", transient=resp.status_code >= 500)
        return f"{self.starts[0]}: {resp.status_code} {resp.headers.get('content-type', '')}".strip()

    def _in_scope(self, url: str) -> bool:
        return _site(url) in self.sites

    def _allowed(self, url: str) -> bool:
        if not self.use_robots:
            return True
        site = _site(url)
        if site not in self._robots:
            self._robots[site] = self._read_robots(site)
        parser = self._robots[site]
        return parser is None or parser.can_fetch(USER_AGENT, url)

    def _read_robots(self, site: str) -> urllib.robotparser.RobotFileParser | None:
        try:
            resp = self._get(site + "/robots.txt")
        except SourceError:
            return None
        if resp.status_code >= 400:
            return None
        parser = urllib.robotparser.RobotFileParser()
        parser.parse(resp.content.decode("utf-8", "replace").splitlines())
        return parser

    def _sitemap_urls(self) -> list[str]:
        found: list[str] = []
        todo = deque(site + "/sitemap.xml" for site in sorted(self.sites))
        if self.use_robots:
            for site in sorted(self.sites):
                self._allowed(site + "/")  # reads robots.txt
                parser = self._robots.get(site)
                todo.extend((parser.site_maps() or []) if parser is not None else [])
        seen: set[str] = set()
        while todo and len(seen) < MAX_SITEMAP_FILES:
            url = normalize(todo.popleft())
            if url is None or url in seen or not self._in_scope(url):
                continue
            seen.add(url)
            try:
                resp = self._get(url)
            except SourceError:
                continue
            if resp.status_code >= 400 or not resp.content.strip():
                continue
            try:
                root = etree.fromstring(resp.content, etree.XMLParser(resolve_entities=False, no_network=True,
                                                                      huge_tree=False))
            except etree.XMLSyntaxError:
                continue
            for loc in root.iter("{*}loc"):
                text = (loc.text or "").strip()
                if etree.QName(root).localname == "sitemapindex":
                    todo.append(text)
                else:
                    found.append(text)
        return found

    # --- listing ---

    def list_items(self) -> Iterator[Item]:
        self._problems = []
        first = self._get(self.starts[0])
        if first.status_code >= 500:
            raise SourceError(f"{self.starts[0]} answered {first.status_code}", transient=True)
        queue: deque[tuple[str, int]] = deque((u, 0) for u in self.starts)
        if self.use_sitemap:
            queue.extend((u, 0) for u in (normalize(s) for s in self._sitemap_urls()) if u is not None)
        seen: set[str] = set()
        listed: set[str] = set()
        while queue and len(listed) < self.max_pages:
            url, depth = queue.popleft()
            if url in seen or not self._in_scope(url) or not self._allowed(url):
                continue
            seen.add(url)
            if self.documents and posixpath.splitext(urlsplit(url).path)[1].lower() in DOCUMENT_EXTENSIONS:
                item = self._document(url)
                links: list[str] = []
            else:
                item, links = self._page(url)
            if item is not None and item.id not in listed:
                listed.add(item.id)
                yield item
            if depth < self.max_depth:
                queue.extend((link, depth + 1) for link in links if link not in seen)

    def _document(self, url: str) -> Item | None:
        """A linked document, listed by a HEAD request (read later)."""
        try:
            resp = self._client.head(url)
            if resp.status_code in (405, 501):  # no HEAD: the listing downloads it after all
                return self._page(url)[0]
        except httpx.HTTPError as exc:
            self._problems.append(f"{url}: {exc}")
            return None
        if resp.status_code >= 400:
            if resp.status_code >= 500 or resp.status_code == 429:
                self._problems.append(f"{url}: {resp.status_code}")
            return None
        final = normalize(str(resp.url)) or url
        etag = resp.headers.get("etag", "")
        length = resp.headers.get("content-length", "")
        token = f"etag:{etag}" if etag else f"modified:{resp.headers.get('last-modified', '')}:{length}"
        if not etag and not resp.headers.get("last-modified"):  # nothing tells a change: its bytes will
            return self._page(url)[0]
        name = file_name(final, html=False)
        return Item(id=final, token=token, name=name, title=posixpath.basename(urlsplit(final).path) or name,
                    path=urlsplit(final).path, url=final, size=int(length) if length.isdigit() else None,
                    content_type=resp.headers.get("content-type", "").split(";")[0].strip(),
                    metadata={"url": final})

    def _page(self, url: str) -> tuple[Item | None, list[str]]:
        """A page (or any URL whose type the listing cannot tell without reading it): fetched, kept, its links."""
        try:
            resp = self._get(url)
        except SourceError as exc:
            if exc.transient:
                self._problems.append(exc.message)
            return None, []
        if resp.status_code >= 400:
            if resp.status_code >= 500 or resp.status_code == 429:
                self._problems.append(f"{url}: {resp.status_code}")
            return None, []
        final = normalize(resp.url) or url
        if not self._in_scope(final):
            return None, []  # redirected to another site
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        data = resp.content
        token = "sha256:" + hashlib.sha256(data).hexdigest()
        if ctype not in HTML_TYPES:
            item = Item(id=final, token=token, name=file_name(final, html=False),
                        title=posixpath.basename(urlsplit(final).path) or final, path=urlsplit(final).path,
                        url=final, size=len(data), content_type=ctype, metadata={"url": final})
            self._keep(item.id, data)
            return item, []
        try:
            doc = lxml_html.fromstring(data, base_url=final)
        except (etree.ParserError, ValueError):
            return None, []
        robots = " ".join(m.get("content", "") for m in doc.xpath('//meta[@name="robots" or @name="ROBOTS"]')).lower()
        links: list[str] = []
        if "nofollow" not in robots:
            for href in doc.xpath("//a/@href"):
                link = normalize(urljoin(final, str(href)))
                if link is not None and self._in_scope(link):
                    links.append(link)
        if "noindex" in robots:
            return None, links
        canonical = final
        for href in doc.xpath('//link[@rel="canonical"]/@href'):
            found = normalize(urljoin(final, str(href)))
            if found is not None and self._in_scope(found):
                canonical = found
                break
        title = " ".join(" ".join(doc.xpath("//title//text()")).split()) or file_name(canonical, html=True)
        item = Item(id=canonical, token=token, name=file_name(canonical, html=True), title=title[:500],
                    path=urlsplit(canonical).path, url=canonical, size=len(data), content_type="text/html",
                    metadata={"url": canonical})
        self._keep(item.id, data)
        return item, links

    def _cached(self, item_id: str) -> Path:
        return self._cache / hashlib.sha256(item_id.encode()).hexdigest()

    def _keep(self, item_id: str, data: bytes) -> None:
        self._cached(item_id).write_bytes(data)

    # --- reading ---

    def read(self, item: Item) -> Iterator[bytes]:
        kept = self._cached(item.id)
        if kept.exists():
            with kept.open("rb") as f:
                while chunk := f.read(READ_CHUNK):
                    yield chunk
            return
        if normalize(item.id) is None or not self._in_scope(item.id):
            raise SourceError(f"{item.id}: not a URL of this source's sites")
        try:
            with self._client.stream("GET", item.id) as resp:
                if resp.status_code >= 400:
                    raise SourceError(f"{item.id} answered {resp.status_code}", transient=resp.status_code >= 500)
                yield from bounded(resp.iter_bytes(READ_CHUNK), self.max_bytes, item.id)
        except httpx.HTTPError as exc:
            raise SourceError(f"{item.id}: {exc}", transient=True) from None

    def close(self) -> None:
        self._client.close()
        shutil.rmtree(self._cache, ignore_errors=True)
