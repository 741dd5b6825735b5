"""Plain text: encoding detection, one block per paragraph (blank-line separated).

:func:`decode_or_raise` is the one decoder of every text-ish parser (text, Markdown, HTML, CSV/TSV,
JSON): :func:`~ragloom.ingest.parsers.sniff.decode_text` finds the encoding.
"""

from __future__ import annotations

import re

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers.sniff import decode_text

_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n+")


def decode_or_raise(data: bytes, filename: str, declared: str | None = None) -> tuple[str, str]:
    """Decoded text with newlines normalised to ``\\n``, and the encoding used.

    ``declared`` is a charset label the file gives itself (HTML ``<meta charset>``), used when the
    bytes fit it. Raises :class:`ParseError` when the bytes are binary, not text.
    """
    decoded = decode_text(data, declared)
    if decoded is None:
        raise ParseError(
            f"{filename}: not text in any known encoding (UTF-8/16/32, Windows code pages, GB18030, Big5, "
            "Shift-JIS, EUC-KR): too many control characters"
        )
    text, encoding = decoded
    return text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff"), encoding


class TextParser:
    """Paragraphs of a text file; ``metadata['encoding']`` records the decoding."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        blocks = [Block(text=p.strip("\n")) for p in _BLANK_LINES.split(text) if p.strip()]
        if not blocks:
            raise ParseError(f"{filename}: the file holds only whitespace")
        return ParsedDocument(blocks=blocks, metadata={"encoding": encoding})
