"""Parent-child chunking: each chunk (the parent) re-split into small indexed children.

A child is a piece of its parent's text between ``children_delimiter`` matches
(the grammar of :mod:`.delimiters`; a one-character delimiter stays at the end
of its child, as in the reference). Each child carries the parent's text in
``parent_text``; the pipeline stores the parent hidden (``available = 0``),
indexes the children, and retrieval swaps the parent back in
(:func:`ragloom.retrieval.parents.swap_in_parents`).

A leading heading-prefix line is not a child of its own: it goes with the first
child. A chunk that gives a single child (or a table) stays as it is, without
a parent. Children are never larger than their parent, so the budget holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragloom.ingest.blocks import Chunk, ChunkKind
from ragloom.ingest.chunkers._atoms import segments
from ragloom.ingest.chunkers.delimiters import parse_delimiters


def split_children(chunks: Sequence[Chunk], children_delimiter: str) -> list[Chunk]:
    """Children of every chunk in order, renumbered; ``chunks`` unchanged when the delimiter is empty."""
    if not children_delimiter:
        return list(chunks)
    pattern = parse_delimiters(children_delimiter).pattern
    out: list[Chunk] = []
    for chunk in chunks:
        pieces = _pieces(chunk, pattern) if chunk.kind != ChunkKind.TABLE else []
        if len(pieces) <= 1:
            out.append(replace(chunk, order=len(out)))
            continue
        for piece in pieces:
            out.append(replace(chunk, text=piece, order=len(out), parent_text=chunk.text,
                               positions=list(chunk.positions)))
    return out


def _pieces(chunk: Chunk, pattern: re.Pattern[str] | None) -> list[str]:
    text = chunk.text
    pieces = [p for p in (text[a:b].strip() for a, b in segments(text, pattern, keep_delims=True)) if p]
    path = chunk.heading_path
    headings = {*path, *(" > ".join(path[i:]) for i in range(len(path)))}
    lead: list[str] = []
    while len(pieces) > 1 and pieces[0] in headings:  # heading lines go with the first real child
        lead.append(pieces.pop(0))
    if lead:
        pieces[0] = "\n".join([*lead, pieces[0]])
    return pieces
