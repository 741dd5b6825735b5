"""Chunk methods that follow the document's sections: title, book, laws, manual, paper.

Each method finds the sections (from the parser's titles, or from numbered
heading lines, :mod:`.headings`), then hands every section — or a pack of small
consecutive sections — to the naive chunker, which prefixes the heading path
and re-splits anything over the budget (at delimiters, then sentences, then
words). So every chunk fits ``chunk_token_num`` (an over-long table row aside),
and because a section that fits always costs one chunk and an oversize one is
split by the monotone naive planner, a larger budget never yields more chunks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from ragloom.ingest.blocks import Block, BlockKind, Chunk
from ragloom.ingest.chunkers._atoms import TokenCounter
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.ingest.chunkers.cuts import min_cuts
from ragloom.ingest.chunkers.headings import (
    FAMILIES,
    Outline,
    detect_family,
    drop_toc,
    fold_empty_heads,
    heading_level,
    looks_like_title,
    outline_from_family,
    outline_from_titles,
    sections,
    split_lines,
)
from ragloom.ingest.chunkers.naive import _heads_of, _prefix_reserve, naive_chunk

CountTokens = Callable[[str], int]
ARTICLE_LEVEL = 4  # "第X条" in the chinese family, "Article N" in the english one
ABSTRACT_KEYWORD = "abstract"


def run_naive(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """The naive chunker with the config's budget, delimiters, overlap and heading prefix."""
    return naive_chunk(
        blocks, count_tokens=count_tokens, chunk_token_num=config.chunk_token_num, delimiter=config.delimiter,
        overlapped_percent=config.overlapped_percent, heading_prefix=config.heading_prefix,
    )


def chunk_sections(groups: Sequence[Sequence[Block]], config: ChunkerConfig, count_tokens: CountTokens,
                   *, pack: bool) -> list[Chunk]:
    """Chunks of consecutive sections; with ``pack``, small neighbours share a chunk.

    Packing takes the fewest chunks that hold whole sections within the budget,
    preferring to cut before an outer heading; a section over the budget, or
    holding a table (a table is a chunk of its own anyway), is chunked alone.
    """
    if not pack:
        return [c for g in groups for c in run_naive(g, config, count_tokens)]
    counter = TokenCounter(count_tokens)
    every = [b for g in groups for b in g]
    reserve = _prefix_reserve(every, counter, config.chunk_token_num) if config.heading_prefix else 0.0
    capacity = config.chunk_token_num - reserve
    sizes = [float(counter.count("\n".join(b.text for b in g))) for g in groups]
    chunks: list[Chunk] = []
    run: list[int] = []
    for i in [*range(len(groups)), -1]:
        if i >= 0 and sizes[i] <= capacity and not any(b.kind == BlockKind.TABLE for b in groups[i]):
            run.append(i)
            continue
        if run:
            cut_quality = [_cut_quality(groups[j + 1]) if j + 1 < len(groups) else 0 for j in run]
            start = 0
            for end in min_cuts([sizes[j] for j in run], cut_quality, capacity):
                pack_blocks = [b for j in run[start : end + 1] for b in groups[j]]
                chunks.extend(run_naive(pack_blocks, config, count_tokens))
                start = end + 1
            run = []
        if i >= 0:
            chunks.extend(run_naive(groups[i], config, count_tokens))
    return chunks


def _cut_quality(next_group: Sequence[Block]) -> int:
    head = next_group[0]
    return 10 - head.level if head.kind == BlockKind.TITLE and head.level else 0


def find_outline(blocks: Sequence[Block], *, text_heads: bool, prefer_numbering: bool = False) -> Outline | None:
    """The document's sections: the parser's titles, else numbered heading lines; None when neither.

    ``prefer_numbering`` looks for numbered lines first (law articles are
    paragraphs even in documents whose chapters are styled as headings).
    """
    has_titles = any(b.kind == BlockKind.TITLE for b in blocks)
    if has_titles and not prefer_numbering:
        return outline_from_titles(blocks)
    lines = split_lines(blocks)
    family = detect_family([b.text for b in lines])
    if family is not None:
        return outline_from_family(lines, family, text_heads=text_heads)
    return outline_from_titles(blocks) if has_titles else None


def title_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """One chunk per section (headings of the ``title_depth`` outermost levels), split when oversize."""
    outline = find_outline(blocks, text_heads=False)
    if outline is None:
        return run_naive(blocks, config, count_tokens)
    groups = [g.blocks for g in fold_empty_heads(sections(outline, config.title_depth))]
    return chunk_sections(groups, config, count_tokens, pack=False)


def book_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """Table of contents dropped; sections (5 levels deep) packed while they fit; naive when no headings."""
    lines = drop_toc(split_lines(blocks) if not any(b.kind == BlockKind.TITLE for b in blocks) else blocks)
    outline = find_outline(lines, text_heads=False)
    if outline is None:
        return run_naive(lines, config, count_tokens)
    groups = [g.blocks for g in fold_empty_heads(sections(outline, 5))]
    return chunk_sections(groups, config, count_tokens, pack=True)


def laws_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """Table of contents dropped; one chunk per article (split when oversize), its ancestors' titles prefixed.

    The tree is cut down to the article level (第X条 / Article N) when present,
    else to depth 2; items inside an article stay in it.
    """
    outline = find_outline(drop_toc(split_lines(blocks)), text_heads=True, prefer_numbering=True)
    if outline is None:
        return run_naive(drop_toc(blocks), config, count_tokens)
    ranks = outline.ranks
    depth = ranks.index(ARTICLE_LEVEL) + 1 if ARTICLE_LEVEL in ranks else 2
    groups = [g.blocks for g in fold_empty_heads(sections(outline, depth))]
    return chunk_sections(groups, config, count_tokens, pack=False)


def manual_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """Top sections (the outermost heading level used more than once) never share a chunk;
    inside one, subsections are appended to each other while they fit."""
    outline = find_outline(blocks, text_heads=False)
    if outline is None:
        return run_naive(blocks, config, count_tokens)
    used = Counter(lv for lv in outline.levels if lv is not None)
    repeated = [lv for lv in outline.ranks if used[lv] > 1]
    top = repeated[0] if repeated else outline.ranks[0]
    chunks: list[Chunk] = []
    for group in fold_empty_heads(sections(outline, outline.ranks.index(top) + 1)):
        parts = sections(group, len(group.ranks)) if group.ranks else [group]
        inner = [g.blocks for g in fold_empty_heads(parts)]
        chunks.extend(chunk_sections(inner, config, count_tokens, pack=True))
    return chunks


_ABSTRACT = re.compile(r"^\W*(?:abstract|summary|摘\s*要)\b\W*", re.IGNORECASE)


def _abstract_span(blocks: Sequence[Block]) -> tuple[int, int] | None:
    """[start, end) of the abstract: a heading "Abstract" and its body, or a paragraph starting "Abstract"."""
    for i, block in enumerate(blocks):
        m = _ABSTRACT.match(block.text)
        if not m or (block.kind == BlockKind.TITLE and m.end() < len(block.text.strip())):
            continue
        end = i + 1
        while end < len(blocks) and blocks[end].kind != BlockKind.TITLE and not _heading_line(blocks[end].text):
            end += 1
        return i, end
    return None


def _heading_line(text: str) -> bool:
    return looks_like_title(text) and any(heading_level(text, family) for family in FAMILIES)


def paper_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: CountTokens) -> list[Chunk]:
    """Front matter (title, authors), the abstract as its own chunk(s) with the important keyword
    "abstract", then the body cut at the most frequent heading level. Titles right before the abstract
    that it sits in go with it (front matter of nothing but the paper's title is no chunk of its own)."""
    span = _abstract_span(blocks)
    chunks: list[Chunk] = []
    body = list(blocks)
    if span is not None:
        # titles the abstract sits in (the paper's title) go with it rather than make a chunk of their own
        front = [i for i in range(span[0]) if blocks[i].text.strip()]
        start = front[len(front) - n] if (n := _heads_of(blocks, front, blocks[span[0]].heading_path)) else span[0]
        chunks.extend(run_naive(blocks[:start], config, count_tokens))
        for chunk in run_naive(blocks[start : span[1]], config, count_tokens):
            chunk.important_keywords = [ABSTRACT_KEYWORD]
            chunks.append(chunk)
        body = list(blocks[span[1] :])
    outline = find_outline(body, text_heads=False)
    if outline is None:
        return chunks + run_naive(body, config, count_tokens)
    used = Counter(lv for lv in outline.levels if lv is not None)
    level = max(outline.ranks, key=lambda lv: (used[lv], -lv))
    groups = [g.blocks for g in fold_empty_heads(sections(outline, outline.ranks.index(level) + 1))]
    return chunks + chunk_sections(groups, config, count_tokens, pack=False)
