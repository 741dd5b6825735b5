"""Chunk methods, registered by name, and their validated parameters.

``chunk_blocks(blocks, config, count_tokens)`` runs the method named by
``config.method``. :data:`chunkers` is a :class:`~ragloom.registry.Registry` whose
entries are the chunk methods themselves; the built-ins (listed in :mod:`ragloom.plugins`)
are these, and extensions come through the entry-point group ``ragloom.chunkers`` or
``chunkers.register(name, method)``:

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
from typing import Protocol, TypeAlias

from ragloom.ingest.blocks import Block, Chunk
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.ingest.chunkers.naive import naive_chunk
from ragloom.ingest.chunkers.parent_child import split_children
from ragloom.ingest.chunkers.sectioned import run_naive, title_chunk
from ragloom.registry import Registry

__all__ = ["ChunkMethods", "ChunkerConfig", "Chunker", "chunk_blocks", "chunkers", "default_chunkers", "naive_chunk"]


class Chunker(Protocol):
    """Turns a document's blocks into chunks, in reading order, each within the token budget."""

    def __call__(
        self, blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]
    ) -> list[Chunk]: ...


ChunkMethods: TypeAlias = Registry[[Sequence[Block], ChunkerConfig, Callable[[str], int]], list[Chunk]]
"""A registry of chunk methods: its entries are the methods themselves, ``create`` runs one."""


def naive_method(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """``naive``: delimiter-aware packing, children split off when ``children_delimiter`` is set."""
    return split_children(run_naive(blocks, config, count_tokens), config.children_delimiter)


def title_method(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """``title``: one chunk per section, children split off when ``children_delimiter`` is set."""
    return split_children(title_chunk(blocks, config, count_tokens), config.children_delimiter)


chunkers: ChunkMethods = Registry("chunk method", "ragloom.chunkers")
"""Chunk methods keyed by name; an unknown name is an ``InvalidRequestError`` listing the known ones."""


def default_chunkers() -> ChunkMethods:
    """The process-wide registry of chunk methods."""
    return chunkers


def chunk_blocks(
    blocks: Sequence[Block],
    config: ChunkerConfig,
    count_tokens: Callable[[str], int],
    registry: ChunkMethods | None = None,
) -> list[Chunk]:
    """Run the method ``config.method`` over ``blocks``; chunks are numbered in order and stamped
    with the method's name."""
    chunks = (registry or chunkers).create(config.method, blocks, config, count_tokens)
    for order, chunk in enumerate(chunks):
        chunk.order = order
        chunk.method = config.method
    return chunks
