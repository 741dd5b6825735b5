"""Text too long for one chunk: ``max_chunk_chars`` and ``max_chunks``.

A chunk method may make a chunk of any size (``one`` takes the whole document,
a table row is indivisible under the token budget); no chunk may hold more
than ``max_chunk_chars`` characters, so nothing longer is ever embedded.
:func:`split_text` cuts long text at line ends, else sentence ends, else
whitespace, and only as a last resort inside a word; :func:`split_row` cuts a
table row between cells first. :func:`bound_chunks` is the pipeline's safety
net: it splits every chunk still over the limit into pieces that keep its
positions and heading path, and fails a document of more than ``max_chunks``
chunks (:class:`~ragloom.errors.LimitExceededError` naming the setting).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragloom.ingest.blocks import Chunk
from ragloom.ingest.guard import exceeded, limits

__all__ = ["bound_chunks", "split_row", "split_text"]

_SENTENCE_END = re.compile(r"[.!?;:…](?=[\s'\"”’)\]])|[。！？；…]")
_SPACE = re.compile(r"\s")
ROW_SEPARATORS = ("; ", " | ")  # between the cells of a table row's text (parsers.common.table_text_and_html)


def _cut(text: str, start: int, end: int) -> int:
    """Where the piece ``text[start:...]`` of at most ``end - start`` characters should end: after the
    last line end, else sentence end, else whitespace in the window's second half; else at ``end``."""
    floor = start + (end - start) // 2
    newline = text.rfind("\n", floor, end)
    if newline >= 0:
        return newline + 1
    for pattern in (_SENTENCE_END, _SPACE):
        found = [m.end() for m in pattern.finditer(text, floor, end)]
        if found:
            return found[-1]
    return end


def split_text(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars`` characters (whitespace at the cuts dropped)."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        end = _cut(text, start, start + max_chars)
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        start = end
    rest = text[start:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def split_row(row: str, max_chars: int) -> list[str]:
    """A table row's text in pieces of at most ``max_chars``: whole cells packed together, a cell
    longer than that split by :func:`split_text`."""
    if len(row) <= max_chars:
        return [row]
    separator = next((s for s in ROW_SEPARATORS if s in row), None)
    if separator is None:
        return split_text(row, max_chars)
    return pack([p for cell in row.split(separator) for p in split_text(cell, max_chars)], separator, max_chars)


def pack(parts: Sequence[str], separator: str, max_chars: int) -> list[str]:
    """Consecutive ``parts`` joined by ``separator`` into as few pieces of at most ``max_chars`` as
    greedy packing gives (each part is at most ``max_chars`` long)."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        extra = len(part) + (len(separator) if current else 0)
        if current and size + extra > max_chars:
            pieces.append(separator.join(current))
            current, size, extra = [], 0, len(part)
        current.append(part)
        size += extra
    if current:
        pieces.append(separator.join(current))
    return pieces


def bound_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    """Chunks with none over ``max_chunk_chars`` (longer ones split, in place, into pieces with the same
    positions, heading path and kind; a table's HTML is dropped from the pieces), renumbered from 0.

    Raises ``LimitExceededError`` naming ``max_chunks`` when there are more chunks than it allows.
    """
    max_chars, max_chunks = limits().max_chunk_chars, limits().max_chunks
    if len(chunks) > max_chunks:
        raise exceeded("max_chunks", "chunks", max_chunks, len(chunks))
    out: list[Chunk] = []
    for chunk in chunks:
        if len(chunk.text) <= max_chars:
            out.append(chunk)
            continue
        for k, piece in enumerate(split_text(chunk.text, max_chars)):
            out.append(replace(chunk, text=piece, html=None, positions=list(chunk.positions),
                               questions=list(chunk.questions) if k == 0 else [],
                               important_keywords=list(chunk.important_keywords), fields=dict(chunk.fields),
                               tag_keywords=list(chunk.tag_keywords)))
        if len(out) > max_chunks:
            raise exceeded("max_chunks", "chunks (long chunks split)", max_chunks)
    for order, chunk in enumerate(out):
        chunk.order = order
    return out
