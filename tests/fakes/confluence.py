"""A small, real Confluence for tests: the REST API v1 wire protocol the ``confluence`` connector speaks,
over HTTP on 127.0.0.1 (a free port) in a background thread, from in-memory spaces, pages and attachments
a test changes between listings.

Served under the context path ``/wiki`` (as Cloud is):

* ``GET /wiki/rest/api/space/{key}`` (``expand=permissions``: who may view it, when the test set it);
* ``GET /wiki/rest/api/content?spaceKey=&type=page&expand=&start=&limit=`` — at most :attr:`page_size`
  results a request (so listings page), ``_links.next`` relative to ``_links.base`` as Confluence gives
  it; ``version``, ``history.lastUpdated``, ``restrictions.read.restrictions.{user,group}``, ``ancestors``
  (with their restrictions) expanded when asked;
* ``GET /wiki/rest/api/content/{id}?expand=body.storage,version``;
* ``GET /wiki/rest/api/content/{id}/child/attachment?start=&limit=`` (paged the same way);
* ``GET /wiki/download/attachments/{page}/{file}`` — an attachment's bytes;
* ``GET /wiki/rest/api/group/member?name=`` (Cloud) and ``/wiki/rest/api/group/{name}/member`` (Data
  Center) — a group's members from :attr:`groups`, paged.

Every request needs HTTP basic auth with :attr:`email` / :attr:`api_token` (Cloud) or ``Authorization:
Bearer`` :attr:`token` (Data Center); else a 401 with Confluence's JSON error. ``rate_limit_next(n,
retry_after)`` answers the next ``n`` requests 429 with ``Retry-After``. Requests are recorded
(``requests``: method and path with query).

    with FakeConfluence() as wiki:
        wiki.add_page("ENG", "Pump", "<p>Grease every 450 hours.</p>", users=["bob@example.com"])
        ...
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from tests.fakes.loopback import LoopbackFake

CONTEXT = "/wiki"


@dataclass
class Attachment:
    id: str
    title: str
    data: bytes
    media_type: str = "application/octet-stream"
    version: int = 1


@dataclass
class Page:
    id: str
    space: str
    title: str
    body: str
    parent: str | None = None
    version: int = 1
    users: list[dict[str, str]] = field(default_factory=list)  # read restriction: {"email"} or {"accountId"}
    groups: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)


class FakeConfluence(LoopbackFake):
    """See the module docstring. Thread-safe; a context manager."""

    def __init__(self, *, page_size: int = 2, email: str = "bot@example.com", api_token: str = "atl-token",
                 token: str = "dc-pat") -> None:
        self.page_size, self.email, self.api_token, self.token = page_size, email, api_token, token
        self.spaces: dict[str, str] = {}
        self.pages: dict[str, Page] = {}
        self.groups: dict[str, list[dict[str, str]]] = {}  # group name -> members ({"email"} or {"accountId"})
        self.space_permissions: dict[str, tuple[list[str], list[str], bool]] = {}  # key -> users, groups, anonymous
        self.requests: list[tuple[str, str]] = []
        self._rate_limited: list[str] = []
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()

    # -- the content -----------------------------------------------------
    def add_space(self, key: str, name: str = "", *, users: list[str] = (),  # type: ignore[assignment]
                  groups: list[str] = (), anonymous: bool = False) -> None:  # type: ignore[assignment]
        """A space; ``users`` (e-mails) and ``groups`` may view it (none given: its permissions are not
        shown, as to a token without the right), ``anonymous``: anyone may."""
        with self._lock:
            self.spaces[key] = name or key
            if users or groups or anonymous:
                self.space_permissions[key] = (list(users), list(groups), anonymous)

    def add_page(self, space: str, title: str, body: str, *, parent: str | None = None,
                 users: list[str | dict[str, str]] = (), groups: list[str] = ()) -> Page:  # type: ignore[assignment]
        with self._lock:
            self.spaces.setdefault(space, space)
            page = Page(str(next(self._ids)), space, title, body, parent,
                        users=[u if isinstance(u, dict) else {"email": u} for u in users], groups=list(groups))
            self.pages[page.id] = page
            return page

    def edit(self, page_id: str, *, body: str | None = None, title: str | None = None) -> None:
        with self._lock:
            page = self.pages[page_id]
            page.body = body if body is not None else page.body
            page.title = title if title is not None else page.title
            page.version += 1

    def remove(self, page_id: str) -> None:
        with self._lock:
            del self.pages[page_id]

    def attach(self, page_id: str, title: str, data: bytes, media_type: str = "application/octet-stream"
               ) -> Attachment:
        with self._lock:
            att = Attachment(f"att{next(self._ids)}", title, data, media_type)
            self.pages[page_id].attachments.append(att)
            return att

    def rate_limit_next(self, count: int = 1, retry_after: str = "0") -> None:
        with self._lock:
            self._rate_limited.extend([retry_after] * count)

    # -- lifecycle -------------------------------------------------------
    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def url(self) -> str:
        """The site's base URL (``http://127.0.0.1:<port>/wiki``)."""
        return self.origin + CONTEXT

    # -- the wire format -------------------------------------------------
    def _restrictions(self, page: Page, expand: set[str], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {"read": {"operation": "read", "restrictions": {}}}
        read = out["read"]["restrictions"]
        if f"{prefix}restrictions.read.restrictions.user" in expand:
            read["user"] = {"results": [{"type": "known", "accountId": u.get("accountId", f"acc-{u.get('email')}"),
                                         **({"email": u["email"]} if "email" in u else {}),
                                         "displayName": u.get("email", "someone")} for u in page.users],
                            "size": len(page.users)}
        if f"{prefix}restrictions.read.restrictions.group" in expand:
            read["group"] = {"results": [{"type": "group", "name": g, "id": f"g-{g}"} for g in page.groups],
                             "size": len(page.groups)}
        return out

    def _ancestors(self, page: Page) -> list[Page]:
        chain: list[Page] = []
        parent = page.parent
        while parent is not None and parent in self.pages:
            chain.insert(0, self.pages[parent])
            parent = self.pages[parent].parent
        return chain

    def content(self, page: Page, expand: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": page.id, "type": "page", "status": "current", "title": page.title,
                               "_links": {"webui": f"/spaces/{page.space}/pages/{page.id}/{quote(page.title)}",
                                          "self": f"{self.url}/rest/api/content/{page.id}"}}
        if "version" in expand:
            out["version"] = {"number": page.version, "when": f"2026-01-{page.version:02d}T10:00:00.000Z",
                              "by": {"displayName": "Bot"}}
        if "history.lastUpdated" in expand:
            out["history"] = {"lastUpdated": {"when": f"2026-01-{page.version:02d}T10:00:00.000Z"}}
        if any(e.startswith("restrictions.") for e in expand):
            out["restrictions"] = self._restrictions(page, expand)
        if "ancestors" in expand:
            out["ancestors"] = [{"id": a.id, "type": "page", "title": a.title,
                                 **({"restrictions": self._restrictions(a, expand, "ancestors.")}
                                    if any(e.startswith("ancestors.restrictions.") for e in expand) else {})}
                                for a in self._ancestors(page)]
        if "body.storage" in expand:
            out["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        return out


class _Handler(BaseHTTPRequestHandler):
    fake: FakeConfluence

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream" if isinstance(payload, bytes)
                         else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        given = self.headers.get("Authorization", "")
        fake = self.fake
        basic = "Basic " + base64.b64encode(f"{fake.email}:{fake.api_token}".encode()).decode()
        return given in (basic, f"Bearer {fake.token}")

    def _paged(self, results: list[dict[str, Any]], query: dict[str, list[str]], path: str) -> dict[str, Any]:
        start = int(query.get("start", ["0"])[0])
        limit = min(int(query.get("limit", ["25"])[0]), self.fake.page_size)
        chunk = results[start:start + limit]
        links: dict[str, str] = {"base": self.fake.url, "context": CONTEXT}
        if start + limit < len(results):
            rest = {k: v[0] for k, v in query.items()}
            rest.update(start=str(start + limit), limit=str(limit))
            links["next"] = f"{path.removeprefix(CONTEXT)}?{urlencode(rest)}"
        return {"results": chunk, "start": start, "limit": limit, "size": len(chunk), "_links": links}

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        fake = self.fake
        with fake._lock:
            fake.requests.append(("GET", self.path))
            if fake._rate_limited:
                wait = fake._rate_limited.pop(0)
                self._send(429, {"statusCode": 429, "message": "Rate limit exceeded"}, {"Retry-After": wait})
                return
            if not self._authorized():
                self._send(401, {"statusCode": 401, "message": "Current user not permitted to use Confluence"})
                return
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            path = unquote(parts.path)
            expand = set(",".join(query.get("expand", [""])).split(","))
            segments = path.removeprefix(CONTEXT + "/").split("/")
            if not path.startswith(CONTEXT + "/"):
                self._send(404, {"statusCode": 404, "message": "not found"})
            elif segments[:3] == ["rest", "api", "space"] and len(segments) == 4:
                key = segments[3]
                if key in fake.spaces:
                    space: dict[str, Any] = {"key": key, "name": fake.spaces[key], "type": "global"}
                    if "permissions" in expand and key in fake.space_permissions:
                        users, groups, anonymous = fake.space_permissions[key]
                        read = {"operation": "read", "targetType": "space"}
                        space["permissions"] = [
                            {"operation": {"operation": "administer", "targetType": "space"},
                             "subjects": {"group": {"results": [{"name": "admins"}]}}},
                            {"operation": read, "anonymousAccess": anonymous, "unlicensedAccess": False,
                             "subjects": {"user": {"results": [{"accountId": f"acc-{u}", "email": u} for u in users]},
                                          "group": {"results": [{"name": g} for g in groups]}}}]
                    self._send(200, space)
                else:
                    self._send(404, {"statusCode": 404, "message": f"No space with key : {key}"})
            elif segments == ["rest", "api", "content"]:
                space = query.get("spaceKey", [""])[0]
                pages = sorted((p for p in fake.pages.values() if p.space == space), key=lambda p: int(p.id))
                self._send(200, self._paged([fake.content(p, expand) for p in pages], query, path))
            elif segments[:3] == ["rest", "api", "content"] and len(segments) == 4:
                page = fake.pages.get(segments[3])
                att = next((a for p in fake.pages.values() for a in p.attachments if a.id == segments[3]), None)
                if page is not None:
                    self._send(200, fake.content(page, expand))
                elif att is not None:
                    self._send(200, {"id": att.id, "type": "attachment", "title": att.title,
                                     "_links": {"download": self._download(att)}})
                else:
                    self._send(404, {"statusCode": 404, "message": "No content found"})
            elif segments[:3] == ["rest", "api", "content"] and segments[4:] == ["child", "attachment"]:
                page = fake.pages.get(segments[3])
                if page is None:
                    self._send(404, {"statusCode": 404, "message": "No content found"})
                    return
                results = [{"id": a.id, "type": "attachment", "title": a.title, "version": {"number": a.version},
                            "extensions": {"mediaType": a.media_type, "fileSize": len(a.data)},
                            "_links": {"download": self._download(a), "webui": f"/pages/viewpageattachments.action"
                                                                                f"?pageId={page.id}"}}
                           for a in page.attachments]
                self._send(200, self._paged(results, query, path))
            elif segments == ["rest", "api", "group", "member"] or (
                    segments[:3] == ["rest", "api", "group"] and len(segments) == 5 and segments[4] == "member"):
                name = query.get("name", [""])[0] if len(segments) == 4 else segments[3]
                members = [{"type": "known", "accountId": f"acc-{m.get('email', m.get('accountId'))}",
                            **({"email": m["email"]} if "email" in m else {})} for m in fake.groups.get(name, [])]
                if name not in fake.groups:
                    self._send(404, {"statusCode": 404, "message": f"No group with name : {name}"})
                else:
                    self._send(200, self._paged(members, query, path))
            elif segments[:2] == ["download", "attachments"] and len(segments) == 4:
                page = fake.pages.get(segments[2])
                att = next((a for a in page.attachments if a.title == segments[3]), None) if page else None
                if att is None:
                    self._send(404, {"statusCode": 404, "message": "not found"})
                else:
                    self._send(200, att.data)
            else:
                self._send(404, {"statusCode": 404, "message": "not found"})

    def _download(self, att: Attachment) -> str:
        page = next(p for p in self.fake.pages.values() if att in p.attachments)
        return f"/download/attachments/{page.id}/{quote(att.title)}?version={att.version}&api=v2"
