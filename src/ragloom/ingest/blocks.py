"""Plain dataclasses carried between ingestion stages (defined in :mod:`ragloom.dataflow`).

A parser turns bytes into a :class:`ParsedDocument` (a list of :class:`Block`);
a chunker turns blocks into :class:`Chunk` objects. Coordinates are PDF points
with the origin at the *top-left* of the page (``top < bottom``); pages are
1-based. Formats without pages use ``page=None`` and no box. The types live in
the leaf module :mod:`ragloom.dataflow` so that layers below ``ingest`` can use
them; this module keeps the names importable from here.
"""

from __future__ import annotations

from ragloom.dataflow import BBox, Block, BlockKind, Chunk, ChunkKind, ParsedDocument, Position, Table, pages_of

__all__ = ["BBox", "Block", "BlockKind", "Chunk", "ChunkKind", "ParsedDocument", "Position", "Table", "pages_of"]
