"""The ``confluence`` connector: the pages of Confluence spaces (Cloud or Data Center/Server, REST API v1)
and their attachments.

Settings: ``url`` (the site's base: ``https://example.atlassian.net/wiki``, or a Data Center's
``https://confluence.example.com``; required), ``spaces`` (space keys, required), ``cloud`` (true: Cloud,
false: Data Center; default: a host under ``atlassian.net`` is Cloud), ``attachments`` (default true).
Credentials: ``email`` and ``api_token`` (Cloud: HTTP basic auth), or ``token`` (Data Center: a personal
access token, sent as a bearer token).

A listing pages through ``/rest/api/content`` of each space (``type=page``, following ``_links.next``)
with the page's version, last update, read restrictions and ancestors expanded, and through each page's
``child/attachment``: a page's id is ``page:<id>``, an attachment's ``attachment:<id>``; the change token
is the version number — and a digest of the principals, so that a change of who may read an item reaches
the sync too. A page is named ``<title>.html`` and read as its storage-format body (``body.storage``)
wrapped in a small HTML document; an attachment is downloaded from its ``_links.download``.

**Principals.** A page's read restriction lists users — ``user:<e-mail>``, or ``user:<accountId>`` (Cloud)
or ``user:<username>`` (Data Center) when no e-mail is visible to the token — and groups
(``group:<name>``). A page without a read restriction of its own takes its nearest restricted ancestor's
(Confluence applies every ancestor's restriction; the nearest stands for them here), and a page restricted
at no level its space's read permission (``/rest/api/space/{key}?expand=permissions``: the users and
groups allowed to view the space; none when anonymous access is on, or when the server does not show the
permissions to the token). An attachment has its page's principals. **Groups:** after a listing,
:meth:`ConfluenceConnector.groups` reads the members of every group the principals named
(``/rest/api/group/member?name=`` on Cloud, ``/rest/api/group/{name}/member`` on Data Center, paged), so
a sync keeps those groups of the workspace in step; a member whose e-mail the token cannot see is left out.

Rate limits: a 429 (Cloud) is waited out per its ``Retry-After`` a few times, then the listing fails as a
transient error (:mod:`ragloom.ingest.connectors.rest`). ``url`` is a server-side request a workspace
chooses: every connection goes through the outbound guard (``RAGLOOM_OUTBOUND_ALLOW``).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    group_principal,
    safe_file_name,
    setting,
    unknown_settings,
    user_principal,
)
from ragloom.ingest.connectors.rest import Rest, http_url
from ragloom.models.http import OutboundPolicy

PAGE_LIMIT = 50  # results asked per request (servers may give fewer)
MAX_SPACES = 100
SPACE_KEY = re.compile(r"^~?[A-Za-z0-9_\-]{1,255}$")
RESTRICTIONS = ("restrictions.read.restrictions.user", "restrictions.read.restrictions.group")
EXPAND = ",".join(("version", "history.lastUpdated", *RESTRICTIONS, "ancestors",
                   *(f"ancestors.{r}" for r in RESTRICTIONS)))


def page_html(title: str, storage: str) -> bytes:
    """A page's document: its storage-format body (XHTML with Confluence's macros) in a small HTML page
    titled with its title."""
    escaped = html.escape(title)
    return (f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{escaped}</title></head>\n'
            f"<body><h1>{escaped}</h1>\n{storage}\n</body></html>\n").encode()


def _principals(restrictions: Any) -> tuple[str, ...] | None:
    """The principals of a content's read restriction; None when it has none."""
    if not isinstance(restrictions, dict):
        return None
    read = (restrictions.get("read") or {}).get("restrictions") or {}
    found: list[str] = []
    for user in ((read.get("user") or {}).get("results") or []):
        if not isinstance(user, dict):
            continue
        email = str(user.get("email") or "").strip()
        other = str(user.get("accountId") or user.get("username") or user.get("userKey") or "").strip()
        if email:
            found.append(user_principal(email))
        elif other:
            found.append(f"user:{other}")
    for group in ((read.get("group") or {}).get("results") or []):
        if isinstance(group, dict) and str(group.get("name") or "").strip():
            found.append(group_principal(str(group["name"])))
    return tuple(sorted(set(found))) or None


def principals_of(page: dict[str, Any], space: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A page's principals: its own read restriction, else its nearest restricted ancestor's, else its
    space's readers (``space``)."""
    own = _principals(page.get("restrictions"))
    if own is not None:
        return own
    for ancestor in reversed(page.get("ancestors") or []):  # the root first: the parent is the last
        if isinstance(ancestor, dict) and (found := _principals(ancestor.get("restrictions"))) is not None:
            return found
    return space


def space_readers(space: dict[str, Any]) -> tuple[str, ...]:
    """Who may view a space, from its ``permissions`` expansion: () when anonymous access is on or the
    permissions are not shown (everyone the knowledge base lets in)."""
    found: list[str] = []
    for perm in space.get("permissions") or []:
        if not isinstance(perm, dict):
            continue
        operation = perm.get("operation") or {}
        if operation.get("operation") != "read" or operation.get("targetType") != "space":
            continue
        if perm.get("anonymousAccess"):
            return ()
        subjects = perm.get("subjects") or {}
        found += _principals({"read": {"restrictions": subjects}}) or ()
    return tuple(sorted(set(found)))


def _digest(principals: tuple[str, ...]) -> str:
    return hashlib.sha256("\n".join(principals).encode()).hexdigest()[:12] if principals else "-"


class ConfluenceConnector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"url", "spaces", "cloud", "attachments"})
        self.url = http_url(setting(spec.settings, "url", str, required=True), "url")
        spaces = setting(spec.settings, "spaces", list, required=True)
        if not spaces or len(spaces) > MAX_SPACES or not all(isinstance(k, str) and SPACE_KEY.match(k.strip())
                                                             for k in spaces):
            raise InvalidRequestError(f"settings.spaces must list 1 to {MAX_SPACES} space keys")
        self.spaces = list(dict.fromkeys(k.strip() for k in spaces))
        cloud = setting(spec.settings, "cloud", bool)
        self.cloud = bool(cloud) if cloud is not None else (urlsplit(self.url).hostname or "").endswith(
            ".atlassian.net")
        self.attachments = bool(setting(spec.settings, "attachments", bool, True))
        unknown = set(spec.credentials) - {"email", "api_token", "token"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; a confluence source "
                                      "takes email and api_token (Cloud) or token (Data Center)")
        email, api_token = spec.credentials.get("email", ""), spec.credentials.get("api_token", "")
        token = spec.credentials.get("token", "")
        headers: dict[str, str] = {"Accept": "application/json"}
        auth: tuple[str, str] | None = None
        if email and api_token and not token:
            auth = (email, api_token)
        elif token and not email and not api_token and not self.cloud:
            headers["Authorization"] = f"Bearer {token}"
        elif self.cloud:
            raise InvalidRequestError("credentials: Confluence Cloud takes email and api_token")
        else:
            raise InvalidRequestError("credentials: give token (a personal access token), or email and api_token")
        self.max_bytes = spec.max_bytes
        self._rest = Rest(self.url, setting="settings.url", policy=OutboundPolicy.allowing(spec.outbound_allow),
                          timeout=spec.timeout, headers=headers, auth=auth)
        self._rest.screen()
        self._downloads: dict[str, str] = {}
        self._groups: set[str] = set()

    def settings(self) -> dict[str, Any]:
        return {"url": self.url, "spaces": self.spaces, "cloud": self.cloud, "attachments": self.attachments}

    def problems(self) -> list[str]:
        """A space is listed whole or the listing fails."""
        return []

    def _api(self, path: str) -> str:
        """The URL of a path of the site (``/rest/api/...``): a ``_links`` value, with or without the site's
        context path (``/wiki``), stays on the site the source names."""
        parts = urlsplit(path)
        rel = parts.path + (f"?{parts.query}" if parts.query else "")
        context = urlsplit(self.url).path.rstrip("/")
        if context and (rel == context or rel.startswith(context + "/")):
            rel = rel[len(context):]
        return self.url + "/" + rel.lstrip("/")

    def _get(self, path: str, what: str) -> Any:
        data = self._rest.json("GET", self._api(path), what)
        if not isinstance(data, dict):
            raise SourceError(f"{what}: not a Confluence reply (a JSON object was expected)")
        return data

    def _pages(self, first: str, what: str) -> Iterator[dict[str, Any]]:
        """The results of a paged listing, following ``_links.next``."""
        path: str | None = first
        seen: set[str] = set()
        while path and path not in seen:
            seen.add(path)
            data = self._get(path, what)
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result
            nxt = (data.get("_links") or {}).get("next")
            path = nxt if isinstance(nxt, str) and nxt else None

    def check(self) -> str:
        names = []
        for key in self.spaces:
            space = self._get(f"/rest/api/space/{quote(key)}", f"space {key}")
            names.append(f"{key} ({space.get('name', '')})")
        return f"{self.url} ({'Cloud' if self.cloud else 'Data Center'}): spaces " + ", ".join(names)

    def list_items(self) -> Iterator[Item]:
        self._rest.screen()
        self._downloads, self._groups = {}, set()
        for key in self.spaces:
            readers = space_readers(self._get(f"/rest/api/space/{quote(key)}?expand=permissions", f"space {key}"))
            self._groups.update(p.removeprefix("group:") for p in readers if p.startswith("group:"))
            query = urlencode({"spaceKey": key, "type": "page", "expand": EXPAND, "start": 0, "limit": PAGE_LIMIT})
            for page in self._pages(f"/rest/api/content?{query}", f"pages of space {key}"):
                item = self._page(key, page, readers)
                if item is None:
                    continue
                yield item
                if self.attachments:
                    yield from self._attachments(item, str(page["id"]))

    def _page(self, space: str, page: dict[str, Any], readers: tuple[str, ...] = ()) -> Item | None:
        page_id = str(page.get("id") or "")
        if not page_id.isdigit():
            return None
        title = str(page.get("title") or "").strip()
        version = (page.get("version") or {}).get("number", 0)
        principals = principals_of(page, readers)
        self._groups.update(p.removeprefix("group:") for p in principals if p.startswith("group:"))
        name = safe_file_name(title, f"page-{page_id}", ".html")
        parents = [safe_file_name(str(a.get("title") or ""), f"page-{a.get('id')}", "")
                   for a in page.get("ancestors") or [] if isinstance(a, dict)]
        updated = ((page.get("history") or {}).get("lastUpdated") or {}).get("when") or (
            page.get("version") or {}).get("when") or ""
        webui = ((page.get("_links") or {}).get("webui")) or f"/pages/viewpage.action?pageId={page_id}"
        return Item(id=f"page:{page_id}", token=f"{version}:{_digest(principals)}", name=name, title=title or name,
                    path="/".join([space, *parents, name]), url=self._api(str(webui)), content_type="text/html",
                    metadata={"space": space, "page_id": page_id, "version": int(version) if str(version).isdigit()
                              else 0, "modified": str(updated)},
                    principals=principals)

    def _attachments(self, page: Item, page_id: str) -> Iterator[Item]:
        query = urlencode({"expand": "version", "start": 0, "limit": PAGE_LIMIT})
        parent = page.path.rsplit("/", 1)[0]
        for att in self._pages(f"/rest/api/content/{page_id}/child/attachment?{query}",
                               f"attachments of page {page_id}"):
            att_id = str(att.get("id") or "")
            links = att.get("_links") or {}
            download = links.get("download")
            if not att_id or not isinstance(download, str):
                continue
            title = str(att.get("title") or "").strip()
            version = (att.get("version") or {}).get("number", 0)
            extensions = att.get("extensions") or {}
            size = extensions.get("fileSize")
            item_id = f"attachment:{att_id.removeprefix('att')}"
            self._downloads[item_id] = download
            name = safe_file_name(title, f"attachment-{att_id}", "")
            yield Item(id=item_id, token=f"{version}:{_digest(page.principals)}", name=name, title=title or name,
                       path=f"{parent}/{page.name.removesuffix('.html')}/{name}",
                       url=self._api(str(links.get("webui") or download)),
                       size=size if isinstance(size, int) else None,
                       content_type=str(extensions.get("mediaType") or ""),
                       metadata={"page_id": page_id, "attachment_id": att_id, "version": int(version)
                                 if str(version).isdigit() else 0},
                       principals=page.principals)

    def groups(self) -> Iterator[tuple[str, list[str]]]:
        for name in sorted(self._groups):
            query = {"start": 0, "limit": PAGE_LIMIT}
            first = (f"/rest/api/group/member?{urlencode({'name': name, **query})}" if self.cloud
                     else f"/rest/api/group/{quote(name, safe='')}/member?{urlencode(query)}")
            emails = sorted({str(m["email"]).strip().lower() for m in self._pages(first, f"members of group {name}")
                             if isinstance(m.get("email"), str) and "@" in m["email"]})
            yield name, emails

    def read(self, item: Item) -> Iterator[bytes]:
        kind, _, content_id = item.id.partition(":")
        if not content_id.isdigit():
            raise SourceError(f"{item.id}: not a Confluence page or attachment id")
        if kind == "page":
            data = self._get(f"/rest/api/content/{content_id}?expand=body.storage,version", f"page {content_id}")
            body = str(((data.get("body") or {}).get("storage") or {}).get("value") or "")
            yield from bounded([page_html(str(data.get("title") or ""), body)], self.max_bytes, item.id)
            return
        if kind != "attachment":
            raise SourceError(f"{item.id}: not a Confluence page or attachment id")
        download = self._downloads.get(item.id)
        if download is None:
            found = self._get(f"/rest/api/content/att{content_id}", f"attachment {content_id}")
            download = (found.get("_links") or {}).get("download")
            if not isinstance(download, str):
                raise SourceError(f"{item.id}: the attachment has no download link")
        yield from self._rest.stream(self._api(download), f"attachment {content_id}", self.max_bytes)

    def close(self) -> None:
        self._rest.close()
