"""The ``webdav`` connector: the files under a WebDAV collection (Nextcloud, ownCloud, Apache mod_dav, any
WebDAV server; SharePoint where it accepts basic auth — SharePoint Online does not).

Settings: ``url`` (the collection, e.g. ``https://cloud.example.com/remote.php/dav/files/alice/Docs/``,
required), ``paths`` (sub-collections of it to take, e.g. ``["Manuals/", "HR/"]``; default: all of it),
``max_depth`` (collections walked below each one taken, default 20). Credentials: ``username`` and
``password`` (HTTP basic auth; an app password for Nextcloud), or none.

A listing walks the collections with ``PROPFIND`` and ``Depth: 1`` (``Depth: infinity`` is refused by
many servers), asking only for the properties it needs: an item's id is its path below ``url`` (decoded),
its change token its ``getetag`` (else ``getlastmodified`` and ``getcontentlength``), so a listing reads
no file; reading is a ``GET`` of the item's URL. An entry whose ``href`` leads out of ``url`` is left
out. A sub-collection that cannot be listed (timeout, 5xx) is a *problem* of the listing (a sync then
deletes nothing); the collection ``url`` itself failing is an error.

``url`` is a server-side request a workspace chooses: every connection goes through the outbound guard
(loopback, private and cloud metadata addresses only in ``RAGLOOM_OUTBOUND_ALLOW``), and redirects are
not followed while listing.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from lxml import etree

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import ConnectorSpec, Item, SourceError, setting, unknown_settings
from ragloom.ingest.connectors.rest import Rest, http_url, status_error
from ragloom.models.http import OutboundPolicy

DAV = "{DAV:}"
PROPFIND = (b'<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/>'
            b"<d:getetag/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/><d:displayname/>"
            b"</d:prop></d:propfind>")
MAX_DEPTH = 100


def _clean(path: str) -> str | None:
    """A relative path made of plain segments ('' for the collection itself); None when it climbs out
    (``..``) or has an empty or dot segment inside."""
    segments = path.strip("/").split("/") if path.strip("/") else []
    if any(s in ("", ".", "..") for s in segments):
        return None
    return "/".join(segments)


class WebDAVConnector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"url", "paths", "max_depth"})
        self.url = http_url(setting(spec.settings, "url", str, required=True), "url")
        paths = setting(spec.settings, "paths", list, [])
        cleaned = [_clean(p) if isinstance(p, str) else None for p in paths]
        if any(p is None for p in cleaned):
            raise InvalidRequestError("settings.paths must list sub-collections of url (relative paths, no '..')")
        self.paths = [p for p in dict.fromkeys(cleaned) if p is not None]
        self.max_depth = setting(spec.settings, "max_depth", int, 20)
        if not 0 <= self.max_depth <= MAX_DEPTH:
            raise InvalidRequestError(f"settings.max_depth must be between 0 and {MAX_DEPTH}")
        unknown = set(spec.credentials) - {"username", "password"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; a webdav source takes "
                                      "username and password")
        user, password = spec.credentials.get("username", ""), spec.credentials.get("password", "")
        if bool(user) != bool(password):
            raise InvalidRequestError("credentials: give both username and password, or neither")
        parts = urlsplit(self.url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base_path = unquote(parts.path).rstrip("/") + "/"  # decoded, ends with /
        self.max_bytes = spec.max_bytes
        self._rest = Rest(self.url, setting="settings.url", policy=OutboundPolicy.allowing(spec.outbound_allow),
                          timeout=spec.timeout, auth=(user, password) if user else None)
        self._rest.screen()
        self._problems: list[str] = []

    def settings(self) -> dict[str, Any]:
        return {"url": self.url, "paths": self.paths, "max_depth": self.max_depth}

    def problems(self) -> list[str]:
        """The sub-collections the last listing could not list (while there is any, a sync deletes nothing)."""
        return list(self._problems)

    def _full(self, rel: str, *, collection: bool = False) -> str:
        """The URL of ``rel`` (a decoded path below ``url``)."""
        path = self.base_path + rel
        if collection and not path.endswith("/"):
            path += "/"
        return self.origin + quote(path, safe="/~!$&'()*+,;=:@")

    def _propfind(self, rel: str) -> list[tuple[str, dict[str, str], bool]]:
        """The entries of the collection ``rel`` (itself left out): (path below ``url``, properties, is a
        collection)."""
        what = f"PROPFIND {self._full(rel, collection=True)}"
        resp = self._rest.request("PROPFIND", self._full(rel, collection=True), what,
                                  headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"},
                                  content=PROPFIND)
        if resp.status_code != 207:
            if 300 <= resp.status_code < 400:
                raise SourceError(f"{what}: HTTP {resp.status_code}: redirected to {resp.headers.get('location', '?')}"
                                  " (give that URL as settings.url)")
            if resp.status_code < 300:
                raise SourceError(f"{what}: HTTP {resp.status_code}, not a WebDAV multistatus (is it a WebDAV URL?)")
            raise status_error(resp, what)
        try:
            root = etree.fromstring(resp.content, etree.XMLParser(resolve_entities=False, no_network=True,
                                                                  huge_tree=False))
        except etree.XMLSyntaxError as exc:
            raise SourceError(f"{what}: the reply is not XML: {exc}") from None
        here = _clean(rel)
        entries = []
        for response in root.iter(f"{DAV}response"):
            href = (response.findtext(f"{DAV}href") or "").strip()
            path = unquote(urlsplit(href).path)
            if not (path + "/").startswith(self.base_path):
                continue  # out of the collection the source names
            found = _clean(path[len(self.base_path):])
            if found is None or found == here:
                continue
            props: dict[str, str] = {}
            collection = False
            for propstat in response.iter(f"{DAV}propstat"):
                status = propstat.findtext(f"{DAV}status") or ""
                if " 200 " not in f"{status} ":
                    continue
                for prop in propstat.iter(f"{DAV}prop"):
                    for child in prop:
                        if not isinstance(child.tag, str):
                            continue
                        name = etree.QName(child).localname
                        if name == "resourcetype":
                            collection = child.find(f"{DAV}collection") is not None
                        else:
                            props[name] = (child.text or "").strip()
            entries.append((found, props, collection))
        return entries

    def check(self) -> str:
        entries = self._propfind("")
        folders = sum(1 for _, _, c in entries if c)
        return f"{self.url}: {len(entries) - folders} file(s) and {folders} collection(s) at the top"

    def list_items(self) -> Iterator[Item]:
        self._problems = []
        self._rest.screen()
        starts = self.paths or [""]
        queue: deque[tuple[str, int]] = deque((p, 0) for p in starts)
        seen: set[str] = set()
        listed: set[str] = set()
        while queue:
            rel, depth = queue.popleft()
            if rel in seen:
                continue
            seen.add(rel)
            try:
                entries = self._propfind(rel)
            except SourceError as exc:
                if rel in starts:
                    raise
                if exc.transient:  # it may still hold items: nothing is deleted this time
                    self._problems.append(exc.message)
                continue  # gone meanwhile, or forbidden: what it held is no longer readable
            for path, props, collection in sorted(entries):
                if collection:
                    if depth < self.max_depth:
                        queue.append((path, depth + 1))
                    continue
                if path in listed:
                    continue
                listed.add(path)
                yield self._item(path, props)

    def _item(self, path: str, props: dict[str, str]) -> Item:
        etag = props.get("getetag", "")
        length = props.get("getcontentlength", "")
        modified = props.get("getlastmodified", "")
        token = f"etag:{etag}" if etag else f"modified:{modified}:{length}"
        name = posixpath.basename(path)
        return Item(id=path, token=token, name=name, title=props.get("displayname") or name, path=path,
                    url=self._full(path), size=int(length) if length.isdigit() else None,
                    content_type=props.get("getcontenttype", "").split(";")[0].strip(),
                    metadata={"path": path, "modified": modified})

    def read(self, item: Item) -> Iterator[bytes]:
        path = _clean(item.id)
        if not path:
            raise SourceError(f"{item.id}: not a path below this source's url")
        if self.paths and not any(path.startswith(p + "/") for p in self.paths):
            raise SourceError(f"{item.id}: not under this source's paths")
        yield from self._rest.stream(self._full(path), f"GET {self._full(path)}", self.max_bytes)

    def close(self) -> None:
        self._rest.close()
