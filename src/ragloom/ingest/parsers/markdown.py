"""Markdown with markdown-it-py: headings, paragraphs, lists, tables, code kept whole.

A table's first row (the one above ``|---|``) is its header row, its cells marked as headers.
"""

from __future__ import annotations

from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.tabular import Cell, table_from_cells
from ragloom.ingest.parsers.text import decode_or_raise


def inline_text(token: Token) -> str:
    """Plain text of an ``inline`` token (markup dropped, inline code kept)."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
        elif child.type == "html_inline":
            continue
    return "".join(parts).strip()


class _Walker:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.blocks: list[Block] = []
        self.headings = HeadingTracker()

    def run(self) -> list[Block]:
        while self.i < len(self.tokens):
            self.step(self.tokens[self.i])
        return self.blocks

    def _until_close(self, open_type: str) -> int:
        """Index of the close token matching the open token at ``self.i``."""
        close = open_type.replace("_open", "_close")
        depth = 0
        for j in range(self.i, len(self.tokens)):
            if self.tokens[j].type == open_type:
                depth += 1
            elif self.tokens[j].type == close:
                depth -= 1
                if depth == 0:
                    return j
        return len(self.tokens) - 1

    def step(self, tok: Token) -> None:
        if tok.type == "heading_open":
            text = inline_text(self.tokens[self.i + 1])
            if text:
                self.blocks.append(self.headings.title_block(text, int(tok.tag[1:])))
            self.i += 3
        elif tok.type == "paragraph_open":
            self._add(BlockKind.TEXT, inline_text(self.tokens[self.i + 1]))
            self.i += 3
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            end = self._until_close(tok.type)
            self._add(BlockKind.LIST, self._list_text(self.i, end))
            self.i = end + 1
        elif tok.type == "table_open":
            end = self._until_close(tok.type)
            rows = self._table_rows(self.i, end)
            header = 1 if rows and any(cell.strip() for cell in rows[0]) else 0  # GFM: the row above |---|
            cells = [[Cell(text, header=r < header) for text in row] for r, row in enumerate(rows)]
            block = table_from_cells(cells, header_rows=header, heading_path=self.headings.path, lone_notes=False)
            if block:
                self.blocks.append(block)
            self.i = end + 1
        elif tok.type in ("fence", "code_block"):
            language = tok.info.strip().split(" ")[0]
            fence = f"```{language}\n{tok.content.rstrip()}\n```"
            meta = {"language": language} if language else None
            self._add(BlockKind.CODE, fence if tok.content.strip() else "", meta)
            self.i += 1
        elif tok.type == "html_block":
            self._add(BlockKind.TEXT, BeautifulSoup(tok.content, "lxml").get_text(" ", strip=True))
            self.i += 1
        else:  # blockquote_open/close, hr, ...: descend or skip
            self.i += 1

    def _add(self, kind: BlockKind, text: str, meta: dict[str, str] | None = None) -> None:
        if text.strip():
            self.blocks.append(Block(text=text, kind=kind, heading_path=self.headings.path, meta=meta or {}))

    def _list_text(self, start: int, end: int) -> str:
        lines: list[str] = []
        depth = 0
        for tok in self.tokens[start : end + 1]:
            if tok.type in ("bullet_list_open", "ordered_list_open"):
                depth += 1
            elif tok.type in ("bullet_list_close", "ordered_list_close"):
                depth -= 1
            elif tok.type == "inline":
                lines.append("  " * (depth - 1) + "- " + inline_text(tok))
            elif tok.type in ("fence", "code_block"):
                lines.append(tok.content.rstrip())
        return "\n".join(lines)

    def _table_rows(self, start: int, end: int) -> list[list[str]]:
        rows: list[list[str]] = []
        for tok in self.tokens[start : end + 1]:
            if tok.type == "tr_open":
                rows.append([])
            elif tok.type == "inline" and rows:
                rows[-1].append(inline_text(tok))
        return rows


class MarkdownParser:
    """Blocks of a Markdown file; headings give every block its ``heading_path``."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        md = MarkdownIt("commonmark").enable("table")
        blocks = _Walker(md.parse(text)).run()
        if not blocks:
            raise ParseError(f"{filename}: the Markdown file contains no text")
        title = next((b.text for b in blocks if b.kind == BlockKind.TITLE and b.level == 1), None)
        return ParsedDocument(blocks=blocks, title=title, metadata={"encoding": encoding})
