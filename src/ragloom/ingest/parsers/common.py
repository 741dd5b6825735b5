"""Helpers shared by the format parsers: heading paths and table blocks."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ragloom.ingest.blocks import BBox, Block, BlockKind

if TYPE_CHECKING:
    from lxml.etree import _Element


LABEL_CHARS = 120  # a column name repeated on every row of a table is cut to this length


class HeadingTracker:
    """Keeps the stack of open section titles while a parser walks a document.

    ``title(text, level)`` closes every section at ``level`` or deeper and returns
    the heading path *enclosing* the new title; ``path`` is the path a body block
    at the current point belongs to (outermost first).
    """

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(text for _, text in self._stack)

    def title(self, text: str, level: int) -> tuple[str, ...]:
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        enclosing = self.path
        self._stack.append((level, text))
        return enclosing

    def title_block(
        self, text: str, level: int, *, page: int | None = None, boxes: list[tuple[int, BBox]] | None = None
    ) -> Block:
        """A ``title`` block for ``text`` at ``level`` with its enclosing path."""
        enclosing = self.title(text, level)
        return Block(text=text, kind=BlockKind.TITLE, level=level, heading_path=enclosing, page=page,
                     boxes=boxes if boxes is not None else [])


def small_int(value: str, default: int, cap: int) -> int:
    """``value`` (ASCII digits, surrounding white space allowed) as an int of at most ``cap``, else
    ``default``. Never raises: ``"²".isdigit()`` is true but ``int("²")`` fails, and ``int()`` refuses
    strings of more than 4,300 digits."""
    value = value.strip()
    if not value or not value.isascii() or not value.isdigit():
        return default
    value = value.lstrip("0") or "0"
    return cap if len(value) > len(str(cap)) else min(int(value), cap)


def clean_cell(text: str) -> str:
    return " ".join(text.split())


def column_label(name: str) -> str:
    """A column name as each row repeats it: cut to :data:`LABEL_CHARS` characters (and "…") when
    longer, so that a long header cell costs its length once, not once per row."""
    return name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS].rstrip() + "…"


def table_text_and_html(rows: list[list[str]], has_header: bool) -> tuple[str, str]:
    """Render table rows as retrieval text (one line per body row) and as HTML.

    With a header, each body row reads ``"header: value; header: value"``: the first body row
    names its columns in full, the others by :func:`column_label` (a long header is read once).
    The HTML has the header (labels) in ``<thead>`` and one ``<tr>`` in ``<tbody>`` per text
    line, in the same order — the chunker relies on this to split big tables.
    """
    rows = [[clean_cell(c) for c in row] for row in rows]
    rows = [row for row in rows if any(row)]
    header = rows[0] if has_header and len(rows) > 1 else None
    body = rows[1:] if header else rows
    labels = [column_label(h) for h in header] if header else []
    lines = []
    for index, row in enumerate(body):
        if header:
            names = header if index == 0 else labels
            pairs = [f"{h}: {v}" if h else v for h, v in zip(names, row, strict=False) if v]
            pairs += [v for v in row[len(header):] if v]
            lines.append("; ".join(pairs))
        else:
            lines.append(" | ".join(v for v in row if v))
    html = ["<table>"]
    if header:
        html.append("<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in labels) + "</tr></thead>")
    html.append("<tbody>")
    for row in body:
        html.append("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>")
    html.append("</tbody></table>")
    return "\n".join(lines), "".join(html)


def xml_name(el: _Element) -> str:
    """Local name of an OOXML element; "" for comments and processing instructions."""
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def chosen_branch(alternate: _Element) -> _Element | None:
    """The branch of an ``mc:AlternateContent`` that is read: its first choice, else its fallback."""
    branches = [c for c in alternate if xml_name(c) in ("Choice", "Fallback")]
    return next((c for c in branches if xml_name(c) == "Choice"), branches[0] if branches else None)
