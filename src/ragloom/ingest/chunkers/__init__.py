"""Chunk methods, registered by name, and their validated parameters.

``chunk_blocks(blocks, config, count_tokens)`` runs the method named by
``config.method``. Built-in methods register through :meth:`ChunkerRegistry.register`,
the same way an extension adds its own:

=============  ==================================================================
naive          delimiter-aware packing under the budget (:mod:`.naive`)
title          one chunk per section, heading path prefixed (:mod:`.sectioned`)
book           TOC dropped, sections packed while they fit
laws           TOC dropped, one chunk per article with its ancestors' titles
manual         top sections apart, their subsections packed while they fit
paper          front matter, abstract (keyword "abstract"), body sections
qa             question/answer pairs, only the question indexed (:mod:`.qa`)
table          one chunk per table row, typed ``fields`` (:mod:`.tabular`)
presentation   one chunk per slide with its notes (:mod:`.units`)
picture        the OCR text of an image as one chunk
one            the whole document as one chunk (ignores the budget by definition)
email          headers, body and attachments, each naive-chunked
tag            a tag set: one chunk per (content, tags) row, ``tag_keywords`` set (:mod:`.tag`)
=============  ==================================================================

``naive`` and ``title`` take ``children_delimiter`` (parent-child, :mod:`.parent_child`).
Every method sets ``Chunk.method`` to its name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Protocol

from ragloom.errors import InvalidRequestError
from ragloom.ingest.blocks import Block, Chunk
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.ingest.chunkers.naive import naive_chunk
from ragloom.ingest.chunkers.parent_child import split_children
from ragloom.ingest.chunkers.qa import qa_chunk
from ragloom.ingest.chunkers.sectioned import (
    book_chunk,
    laws_chunk,
    manual_chunk,
    paper_chunk,
    run_naive,
    title_chunk,
)
from ragloom.ingest.chunkers.tabular import table_rows_chunk
from ragloom.ingest.chunkers.tag import tag_chunk
from ragloom.ingest.chunkers.units import email_chunk, one_chunk, picture_chunk, presentation_chunk

__all__ = ["ChunkerConfig", "Chunker", "ChunkerRegistry", "chunk_blocks", "default_chunkers", "naive_chunk"]


class Chunker(Protocol):
    """Turns a document's blocks into chunks, in reading order, each within the token budget."""

    def __call__(
        self, blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]
    ) -> list[Chunk]: ...


def _naive(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    return split_children(run_naive(blocks, config, count_tokens), config.children_delimiter)


def _title(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    return split_children(title_chunk(blocks, config, count_tokens), config.children_delimiter)


BUILTIN_METHODS: dict[str, Chunker] = {
    "naive": _naive, "title": _title, "book": book_chunk, "laws": laws_chunk, "manual": manual_chunk,
    "paper": paper_chunk, "qa": qa_chunk, "table": table_rows_chunk, "presentation": presentation_chunk,
    "picture": picture_chunk, "one": one_chunk, "email": email_chunk, "tag": tag_chunk,
}


class ChunkerRegistry:
    """Chunk methods keyed by name."""

    def __init__(self) -> None:
        self._methods: dict[str, Chunker] = {}

    def register(self, name: str, chunker: Chunker, *, replace: bool = False) -> None:
        if name in self._methods and not replace:
            raise ValueError(f"a chunk method named {name!r} is already registered")
        self._methods[name] = chunker

    @property
    def names(self) -> list[str]:
        return sorted(self._methods)

    def get(self, name: str) -> Chunker:
        try:
            return self._methods[name]
        except KeyError:
            raise InvalidRequestError(
                f"unknown chunk method {name!r}; available: {', '.join(self.names)}"
            ) from None


@cache
def default_chunkers() -> ChunkerRegistry:
    """The process-wide registry with the built-in methods."""
    registry = ChunkerRegistry()
    for name, method in BUILTIN_METHODS.items():
        registry.register(name, method)
    return registry


def chunk_blocks(
    blocks: Sequence[Block],
    config: ChunkerConfig,
    count_tokens: Callable[[str], int],
    registry: ChunkerRegistry | None = None,
) -> list[Chunk]:
    """Run the method ``config.method`` over ``blocks``; chunks are numbered in order and stamped
    with the method's name."""
    chunks = (registry or default_chunkers()).get(config.method)(blocks, config, count_tokens)
    for order, chunk in enumerate(chunks):
        chunk.order = order
        chunk.method = config.method
    return chunks
