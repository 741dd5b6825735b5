"""The ``notion`` connector: Notion pages, each a Markdown document.

Settings: ``database_ids`` (the pages of these databases), ``page_ids`` (these pages); neither: every page
shared with the integration (``POST /v1/search``). ``api_url`` (default ``https://api.notion.com``) is
where the API is reached. Credentials: ``token`` (an integration's secret, sent as a bearer token with
``Notion-Version: 2022-06-28``).

An item's id is the page's id, its change token its ``last_edited_time``, its name ``<title>.md``, its
URL the page's. Reading renders the page's blocks (``GET /v1/blocks/{id}/children``, every page of them,
nested blocks recursed) to Markdown: headings, paragraphs, bulleted, numbered and to-do lists (nested
lists indented), toggles, quotes and callouts, code, equations, dividers, simple tables, links to files,
images and bookmarks; a child page or database is a line naming it (it is an item of its own when it is
shared); a database row's properties other than its title are not rendered. The Notion API does not say
who may read a page: items have no principals. Notion gives ``last_edited_time`` to the minute: an edit
made in the same minute as the listing that saw the page before it is seen with the page's next edit.

Rate limits: a 429 is waited out per its ``Retry-After`` a few times, then the request fails as a transient
error (:mod:`ragloom.ingest.connectors.rest`). ``api_url`` is a server-side request a workspace chooses:
every connection goes through the outbound guard (``RAGLOOM_OUTBOUND_ALLOW``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    safe_file_name,
    setting,
    unknown_settings,
)
from ragloom.ingest.connectors.rest import Rest, http_url
from ragloom.models.http import OutboundPolicy

API_URL = "https://api.notion.com"
NOTION_VERSION = "2022-06-28"
PAGE_SIZE = 100
MAX_IDS = 200
MAX_NESTING = 12  # levels of nested blocks rendered
ID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_LIST_KINDS = ("bulleted_list_item", "numbered_list_item", "to_do", "toggle")


def _dashed(value: str) -> str:
    """A Notion id in its dashed form (ids are given with or without dashes)."""
    raw = value.replace("-", "").lower()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def rich_text(parts: Any) -> str:
    """Notion rich text as Markdown: bold, italic, strikethrough, inline code and links kept."""
    out = []
    for part in parts or []:
        if not isinstance(part, dict):
            continue
        text = str(part.get("plain_text") or "")
        if not text:
            continue
        marks = part.get("annotations") or {}
        if marks.get("code"):
            text = f"`{text}`"
        if marks.get("bold"):
            text = f"**{text}**"
        if marks.get("italic"):
            text = f"*{text}*"
        if marks.get("strikethrough"):
            text = f"~~{text}~~"
        href = part.get("href")
        if isinstance(href, str) and href:
            text = f"[{text}]({href})"
        out.append(text)
    return "".join(out)


def title_of(page: dict[str, Any]) -> str:
    """A page's title: its ``title`` property (a database row's is named as its database says)."""
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return " ".join("".join(str(p.get("plain_text") or "") for p in prop.get("title") or []
                                    if isinstance(p, dict)).split())
    return ""


class NotionConnector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"api_url", "database_ids", "page_ids"})
        self.api_url = http_url(setting(spec.settings, "api_url", str, API_URL), "api_url")
        self.database_ids = self._ids(spec.settings, "database_ids")
        self.page_ids = self._ids(spec.settings, "page_ids")
        unknown = set(spec.credentials) - {"token"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; a notion source takes "
                                      "token")
        token = spec.credentials.get("token", "")
        if not token:
            raise InvalidRequestError("credentials: a notion source needs token (an integration's secret)")
        self.max_bytes = spec.max_bytes
        self._rest = Rest(self.api_url, setting="settings.api_url",
                          policy=OutboundPolicy.allowing(spec.outbound_allow), timeout=spec.timeout,
                          headers={"Authorization": f"Bearer {token}", "Notion-Version": NOTION_VERSION})
        self._rest.screen()

    @staticmethod
    def _ids(settings: dict[str, Any] | Any, name: str) -> list[str]:
        ids = setting(settings, name, list, [])
        if len(ids) > MAX_IDS or not all(isinstance(i, str) and ID.match(i.strip()) for i in ids):
            raise InvalidRequestError(f"settings.{name} must list at most {MAX_IDS} Notion ids (32 hex digits)")
        return list(dict.fromkeys(_dashed(i.strip()) for i in ids))

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"api_url": self.api_url}
        if self.database_ids:
            out["database_ids"] = self.database_ids
        if self.page_ids:
            out["page_ids"] = self.page_ids
        return out

    def problems(self) -> list[str]:
        """A listing is whole or fails."""
        return []

    def _call(self, method: str, path: str, what: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = self._rest.json(method, self.api_url + path, what, json=body)
        if not isinstance(data, dict):
            raise SourceError(f"{what}: not a Notion reply (a JSON object was expected)")
        return data

    def _paged(self, method: str, path: str, what: str, body: dict[str, Any] | None = None
               ) -> Iterator[dict[str, Any]]:
        """The results of a paginated endpoint, following ``next_cursor`` while ``has_more``."""
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            if method == "GET":
                query = {"page_size": PAGE_SIZE, **({"start_cursor": cursor} if cursor else {})}
                data = self._call("GET", f"{path}?{urlencode(query)}", what)
            else:
                data = self._call("POST", path, what, {**(body or {}), "page_size": PAGE_SIZE,
                                                        **({"start_cursor": cursor} if cursor else {})})
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result
            cursor = data.get("next_cursor") if data.get("has_more") else None
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                return
            seen.add(cursor)

    def check(self) -> str:
        me = self._call("GET", "/v1/users/me", "the integration")
        name = me.get("name") or (me.get("bot") or {}).get("owner", {}).get("type", "") or me.get("id", "")
        return f"{self.api_url}: signed in as {name}"

    def _all_pages(self) -> Iterator[dict[str, Any]]:
        if not self.database_ids and not self.page_ids:
            yield from self._paged("POST", "/v1/search", "the pages shared with the integration",
                                   {"filter": {"property": "object", "value": "page"}})
            return
        for database in self.database_ids:
            yield from self._paged("POST", f"/v1/databases/{database}/query", f"database {database}", {})
        for page in self.page_ids:
            yield self._call("GET", f"/v1/pages/{page}", f"page {page}")

    def list_items(self) -> Iterator[Item]:
        self._rest.screen()
        listed: set[str] = set()
        for page in self._all_pages():
            page_id = str(page.get("id") or "")
            if page.get("object") != "page" or not ID.match(page_id) or page.get("archived") or page.get(
                    "in_trash"):
                continue
            page_id = _dashed(page_id)
            if page_id in listed:
                continue
            listed.add(page_id)
            title = title_of(page)
            name = safe_file_name(title, f"page-{page_id}", ".md")
            parent = page.get("parent") or {}
            yield Item(id=page_id, token=str(page.get("last_edited_time") or ""), name=name, title=title or name,
                       path=name, url=str(page.get("url") or ""), content_type="text/markdown",
                       metadata={"page_id": page_id, "modified": str(page.get("last_edited_time") or ""),
                                 "created": str(page.get("created_time") or ""),
                                 "parent": str(parent.get("type") or "")})

    # --- reading: blocks to Markdown ---

    def _children(self, block_id: str) -> list[dict[str, Any]]:
        return list(self._paged("GET", f"/v1/blocks/{block_id}/children", f"the blocks of {block_id}"))

    def read(self, item: Item) -> Iterator[bytes]:
        if not ID.match(item.id):
            raise SourceError(f"{item.id}: not a Notion page id")
        lines = [f"# {item.title}", ""] if item.title else []
        self._render(self._children(_dashed(item.id)), lines, 0, [0])
        text = "\n".join(lines).rstrip() + "\n"
        yield from bounded([text.encode()], self.max_bytes, item.id)

    def _render(self, blocks: list[dict[str, Any]], out: list[str], depth: int, size: list[int]) -> None:
        """Append ``blocks`` as Markdown lines, the children of a list item indented under it (``size[0]``:
        characters so far, to stop walking a page already too large)."""
        indent = "  " * depth
        number = 0
        for i, block in enumerate(blocks):
            if size[0] > self.max_bytes:
                raise SourceError(f"a page is larger than {self.max_bytes} bytes")
            kind = str(block.get("type") or "")
            found = block.get(kind)
            body: dict[str, Any] = found if isinstance(found, dict) else {}
            number = number + 1 if kind == "numbered_list_item" else 0
            children: list[dict[str, Any]] = []
            if block.get("has_children") and kind not in ("child_page", "child_database") and depth < MAX_NESTING:
                children = self._children(str(block.get("id")))
            if kind == "table":
                self._table(children, out, body, indent)
                continue
            line = self._line(kind, body, rich_text(body.get("rich_text")), number)
            listed = kind in _LIST_KINDS
            if line is not None:
                if kind in ("quote", "callout") and children:  # the children inside the quote
                    nested: list[str] = []
                    self._render(children, nested, 0, size)
                    while nested and not nested[-1]:
                        nested.pop()
                    line += "".join("\n> " + n if n else "\n>" for n in nested)
                    children = []
                out.append("\n".join(indent + part for part in line.split("\n")))
                size[0] += len(line)
                if not listed and not depth:
                    out.append("")
            if children:
                self._render(children, out, depth + 1 if listed else depth, size)
            if listed and not depth and (i + 1 == len(blocks) or blocks[i + 1].get("type") not in _LIST_KINDS):
                out.append("")

    @staticmethod
    def _line(kind: str, body: dict[str, Any], text: str, number: int) -> str | None:
        """One block's Markdown line; None for a block with nothing to show."""
        if kind == "paragraph":
            return text or None
        if kind in ("heading_1", "heading_2", "heading_3"):
            return "#" * (int(kind[-1]) + 1) + " " + text  # the page's title is the only level-1 heading
        if kind == "bulleted_list_item" or kind == "toggle":
            return f"- {text}"
        if kind == "numbered_list_item":
            return f"{number}. {text}"
        if kind == "to_do":
            return f"- [{'x' if body.get('checked') else ' '}] {text}"
        if kind == "quote":
            return f"> {text}"
        if kind == "callout":
            icon = (body.get("icon") or {}).get("emoji") or ""
            return f"> {icon} {text}".replace(">  ", "> ")
        if kind == "code":
            code = "".join(str(p.get("plain_text") or "") for p in body.get("rich_text") or [] if isinstance(p, dict))
            return f"```{body.get('language') or ''}\n{code}\n```"
        if kind == "equation":
            return f"$$ {body.get('expression') or ''} $$"
        if kind == "divider":
            return "---"
        if kind == "child_page":
            return f"*Page: {body.get('title') or ''}*"
        if kind == "child_database":
            return f"*Database: {body.get('title') or ''}*"
        if kind in ("image", "file", "pdf", "video", "bookmark", "embed", "link_preview"):
            url = body.get("url") or (body.get("file") or {}).get("url") or (body.get("external") or {}).get("url")
            caption = rich_text(body.get("caption")) or kind
            return f"[{caption}]({url})" if url else None
        return text or None

    @staticmethod
    def _table(rows: list[dict[str, Any]], out: list[str], table: dict[str, Any], indent: str) -> None:
        """A simple table (its rows' cells as text) as a Markdown table."""
        cells = [[rich_text(cell).replace("|", "\\|").replace("\n", " ") for cell in
                  (row.get("table_row") or {}).get("cells") or []] for row in rows if row.get("type") == "table_row"]
        if not cells:
            return
        width = max(len(r) for r in cells)
        cells = [r + [""] * (width - len(r)) for r in cells]
        header = cells[0] if table.get("has_column_header") else [""] * width
        body = cells[1:] if table.get("has_column_header") else cells
        out.append(f"{indent}| " + " | ".join(header) + " |")
        out.append(f"{indent}|" + "---|" * width)
        out.extend(f"{indent}| " + " | ".join(r) + " |" for r in body)
        out.append("")

    def close(self) -> None:
        self._rest.close()
