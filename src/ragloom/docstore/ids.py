"""Ids of search-store rows, derived from what they hold so a re-run task rewrites the same rows."""

from __future__ import annotations

import xxhash


def chunk_id(version_id: str, order: int) -> str:
    """A chunk's row: one per (version, reading order)."""
    return xxhash.xxh3_128_hexdigest(f"{version_id}:{order}".encode())


def toc_id(version_id: str, from_page: int) -> str:
    """The hidden table-of-contents row a task stores (one per page range)."""
    return xxhash.xxh3_128_hexdigest(f"{version_id}:toc:{from_page}".encode())


def parent_id(version_id: str, text: str) -> str:
    """The hidden parent row of parent-child chunking (one per distinct parent text)."""
    return xxhash.xxh3_128_hexdigest(f"{version_id}:parent:{text}".encode())
