"""A small, real Notion API for tests: the wire protocol the ``notion`` connector speaks (``Notion-Version:
2022-06-28``), over HTTP on 127.0.0.1 (a free port) in a background thread, from in-memory pages a test
changes between listings.

* ``POST /v1/search`` (``filter`` by object ``page``), ``POST /v1/databases/{id}/query``,
  ``GET /v1/pages/{id}``, ``GET /v1/blocks/{id}/children``, ``GET /v1/users/me``;
* lists page by ``start_cursor`` / ``has_more`` / ``next_cursor``, at most :attr:`page_size` results a
  request (so listings and block reads page);
* every request needs ``Authorization: Bearer`` :attr:`token` and a ``Notion-Version`` header (else 401 /
  400 with Notion's JSON error); ``rate_limit_next(n, retry_after)`` answers the next ``n`` requests 429.

A page's blocks are given as dicts ``{"type": ..., <type>: {...}, "children": [...]}``: the fake gives
them ids and ``has_children``, and serves the children from their own block id.

    with FakeNotion() as notion:
        notion.add_page("Pump", [paragraph("Grease every 450 hours.")])
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.loopback import LoopbackFake


def text(content: str, **annotations: bool) -> dict[str, Any]:
    """A rich-text run."""
    return {"type": "text", "text": {"content": content}, "plain_text": content,
            "annotations": {"bold": False, "italic": False, "code": False, **annotations}, "href": None}


def block(kind: str, content: str = "", *children: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A block of ``kind`` with one rich-text run (``content``) and nested ``children``."""
    body: dict[str, Any] = {"rich_text": [text(content)] if content else [], **extra}
    return {"type": kind, kind: body, "children": list(children)}


@dataclass
class NotionPage:
    id: str
    title: str
    blocks: list[dict[str, Any]]
    database: str | None = None
    edited: int = 1
    archived: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class FakeNotion(LoopbackFake):
    """See the module docstring. Thread-safe; a context manager."""

    def __init__(self, *, page_size: int = 2, token: str = "secret_notion") -> None:
        self.page_size, self.token = page_size, token
        self.pages: dict[str, NotionPage] = {}
        self.blocks: dict[str, list[dict[str, Any]]] = {}  # block or page id -> children (with ids)
        self.requests: list[tuple[str, str, Any]] = []
        self._rate_limited: list[str] = []
        self._clock = itertools.count(1)
        self._lock = threading.RLock()

    # -- the content -----------------------------------------------------
    def _store(self, parent: str, blocks: list[dict[str, Any]]) -> None:
        stored = []
        for b in blocks:
            block_id = str(uuid.uuid4())
            children = b.get("children") or []
            stored.append({"object": "block", "id": block_id, "type": b["type"], b["type"]: b[b["type"]],
                           "has_children": bool(children)})
            self._store(block_id, children)
        self.blocks[parent] = stored

    def add_page(self, title: str, blocks: list[dict[str, Any]], *, database: str | None = None) -> NotionPage:
        with self._lock:
            page = NotionPage(str(uuid.uuid4()), title, blocks, database, next(self._clock))
            self.pages[page.id] = page
            self._store(page.id, blocks)
            return page

    def edit(self, page_id: str, blocks: list[dict[str, Any]]) -> None:
        with self._lock:
            page = self.pages[page_id]
            page.blocks, page.edited = blocks, next(self._clock)
            self._store(page_id, blocks)

    def remove(self, page_id: str) -> None:
        """The page moved to the trash (archived: search no longer finds it, as Notion's)."""
        with self._lock:
            self.pages[page_id].archived = True

    def rate_limit_next(self, count: int = 1, retry_after: str = "0") -> None:
        with self._lock:
            self._rate_limited.extend([retry_after] * count)

    def page_json(self, page: NotionPage) -> dict[str, Any]:
        parent = {"type": "database_id", "database_id": page.database} if page.database else {
            "type": "workspace", "workspace": True}
        return {"object": "page", "id": page.id, "created_time": "2026-01-01T00:00:00.000Z",
                "last_edited_time": f"2026-01-01T00:{page.edited // 60:02d}:{page.edited % 60:02d}.000Z",
                "archived": page.archived, "in_trash": page.archived, "parent": parent,
                "url": f"https://www.notion.so/{page.title.replace(' ', '-')}-{page.id.replace('-', '')}",
                "properties": {"Name": {"id": "title", "type": "title", "title": [text(page.title)]}}}

    # -- lifecycle -------------------------------------------------------
    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def url(self) -> str:
        """The API's base URL (``http://127.0.0.1:<port>``)."""
        return self.origin


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"object": "error", "status": status, "code": code, "message": message}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeNotion

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _paged(self, results: list[dict[str, Any]], cursor: str | None, size: int) -> dict[str, Any]:
        start = int(cursor) if cursor and cursor.isdigit() else 0
        size = min(size or 100, self.fake.page_size)
        more = start + size < len(results)
        return {"object": "list", "results": results[start:start + size], "has_more": more,
                "next_cursor": str(start + size) if more else None, "type": "page_or_database"}

    def _gate(self, body: Any) -> bool:
        fake = self.fake
        fake.requests.append((self.command, self.path, body))
        if fake._rate_limited:
            self._send(429, _error(429, "rate_limited", "You have been rate limited."),
                       {"Retry-After": fake._rate_limited.pop(0)})
            return False
        if self.headers.get("Authorization") != f"Bearer {fake.token}":
            self._send(401, _error(401, "unauthorized", "API token is invalid."))
            return False
        if not self.headers.get("Notion-Version"):
            self._send(400, _error(400, "missing_version", "Notion-Version header failed validation."))
            return False
        return True

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        fake = self.fake
        with fake._lock:
            if not self._gate(body):
                return
            path = urlsplit(self.path).path.rstrip("/").split("/")
            live = [p for p in fake.pages.values() if not p.archived]
            if path == ["", "v1", "search"]:
                pages = live
            elif path[:3] == ["", "v1", "databases"] and path[4:] == ["query"]:
                pages = [p for p in live if p.database == path[3]]
            else:
                self._send(404, _error(404, "invalid_request_url", "Invalid request URL."))
                return
            self._send(200, self._paged([fake.page_json(p) for p in pages], body.get("start_cursor"),
                                        int(body.get("page_size") or 100)))

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        fake = self.fake
        with fake._lock:
            if not self._gate(None):
                return
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            path = parts.path.rstrip("/").split("/")
            if path == ["", "v1", "users", "me"]:
                self._send(200, {"object": "user", "id": "bot-1", "type": "bot", "name": "ragloom test",
                                 "bot": {"owner": {"type": "workspace", "workspace": True}}})
            elif path[:3] == ["", "v1", "pages"] and len(path) == 4 and path[3] in fake.pages:
                self._send(200, fake.page_json(fake.pages[path[3]]))
            elif path[:3] == ["", "v1", "blocks"] and path[4:] == ["children"] and path[3] in fake.blocks:
                self._send(200, self._paged(fake.blocks[path[3]], query.get("start_cursor"),
                                            int(query.get("page_size") or 100)) | {"type": "block"})
            else:
                self._send(404, _error(404, "object_not_found", "Could not find the object."))
