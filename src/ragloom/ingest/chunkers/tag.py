"""The tag method: a tag set, one chunk per row (content, tags) carrying its tags.

A knowledge base of this method is a *tag set* (REFERENCE §2 "tag", §5.5): other
knowledge bases name it in ``tag_kb_ids`` and their chunks get the tags of the
rows their text matches. Rows come from, in document order:

* table blocks (XLSX/XLS sheets, CSV, TSV): the content is the column named like
  ``content``/``text``/``内容`` and the tags the column named like ``tags``/``标签``;
  without such names the first column is the content and every other cell of
  the row holds tags (so an unquoted ``text,tag1,tag2`` CSV line still works).
  Parsers take a first row that looks like a header as the header; here it is
  a data row unless its cells are such column names;
* text blocks (TXT, and rows a spreadsheet parser set apart as titles): one row
  per line, ``content<TAB>tags``.

Tags are separated by commas (``,`` ``，`` ``、`` ``;`` ``；``), trimmed, inner
whitespace collapsed, de-duplicated in order; their case is kept. A row
without tags or without content is skipped and counted (logged); a file with
no usable row is a :class:`ParseError` saying how many rows were skipped.
A chunk's ``text`` is the row's content (indexed for full text, embedded) and
``tag_keywords`` its tags. A row is indivisible: one chunk even over the budget.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, Chunk, Position
from ragloom.ingest.chunkers.tabular import block_table

log = logging.getLogger(__name__)

_TAG_SEPARATORS = re.compile(r"[,，、;；]")
_CONTENT_NAMES = {"content", "contents", "text", "sentence", "passage", "question", "内容", "文本", "问题"}
_TAG_NAMES = {"tag", "tags", "label", "labels", "tag_kwd", "keywords", "标签", "标注"}


@dataclass(slots=True)
class TagRow:
    content: str
    tags: list[str]
    positions: list[Position] = field(default_factory=list)


@dataclass(slots=True)
class TagRows:
    """The usable rows of a tag set and how many rows were skipped (no tags or no content)."""

    rows: list[TagRow] = field(default_factory=list)
    skipped: int = 0

    def add(self, content: str, tag_cells: Sequence[str], positions: list[Position]) -> None:
        content, tags = " ".join(content.split()), split_tags(tag_cells)
        if content and tags:
            self.rows.append(TagRow(content, tags, positions))
        elif content or tags:
            self.skipped += 1


def split_tags(cells: Sequence[str]) -> list[str]:
    """Tags of some cells: split at commas, trimmed, de-duplicated in order."""
    tags = (" ".join(t.split()) for cell in cells for t in _TAG_SEPARATORS.split(cell))
    return list(dict.fromkeys(t for t in tags if t))


def _name(cell: str) -> str:
    return cell.strip().lower().rstrip(":：")


def _table_rows(block: Block, out: TagRows) -> bool:
    """Rows of a table block into ``out``; False when the block is not a table."""
    table = block_table(block)
    if table is None:
        return False
    names = [_name(h) for h in table.header]
    content_col = next((i for i, n in enumerate(names) if n in _CONTENT_NAMES), None)
    tag_col = next((i for i, n in enumerate(names) if n in _TAG_NAMES), None)
    rows = table.rows
    if content_col is None or tag_col is None:
        content_col, tag_col = 0, None
        header_found = not block.meta.get("header", "").startswith("none found") and any(table.header)
        if header_found:  # the parser's "header" is the first row of the tag set
            rows = [table.header, *rows]
    for row in rows:
        if not row:
            continue
        content = row[content_col] if content_col < len(row) else ""
        if tag_col is None:
            cells = [c for i, c in enumerate(row) if i != content_col]
        else:
            cells = [row[tag_col]] if tag_col < len(row) else []
        out.add(content, cells, block.positions())
    return True


def _text_rows(block: Block, out: TagRows) -> None:
    for line in block.text.split("\n"):
        if not line.strip():
            continue
        content, _, tags = line.partition("\t")
        out.add(content, tags.split("\t") if tags else [], block.positions())


def read_tag_rows(blocks: Sequence[Block]) -> TagRows:
    """Every (content, tags) row of a tag-set document, in order (see the module docstring)."""
    out = TagRows()
    for block in blocks:
        if block.kind == BlockKind.TITLE:
            continue  # sheet names
        if not _table_rows(block, out) and block.kind != BlockKind.TABLE:
            _text_rows(block, out)
    return out


def tag_chunk(blocks: Sequence[Block], config: object, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """One chunk per usable row; ParseError when the document has none."""
    found = read_tag_rows(blocks)
    if not found.rows:
        raise ParseError(
            f"tag: no usable row ({found.skipped} rows without tags or content skipped); a tag set has one row "
            "per line: content, then its comma-separated tags (a two-column sheet or CSV, or 'content<TAB>tags')"
        )
    if found.skipped:
        log.warning("tag: %d rows without tags or content skipped, %d rows kept", found.skipped, len(found.rows))
    return [Chunk(text=row.content, order=i, positions=list(row.positions), method="tag", tag_keywords=row.tags)
            for i, row in enumerate(found.rows)]
