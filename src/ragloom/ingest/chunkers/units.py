"""Methods whose chunk is a natural unit: one (whole document), picture, presentation, email.

``one`` and ``picture`` make a single chunk and ignore the token budget by
definition (the embedder truncates what it cannot read); a ``presentation``
slide is indivisible too. ``email`` keeps the budget: headers, body and each
attachment are chunked by the naive chunker.

Block conventions read here (set by the parsers):

* slides — ``meta["slide"]`` (slide number; else ``page``); a speaker-notes
  block has ``meta["notes"]`` set (any non-empty value) or ``meta["role"] == "notes"``;
* e-mails — header values in ``meta`` under ``from``, ``to``, ``cc``, ``date``,
  ``subject`` (any case); a block with ``meta["part"] == "headers"`` only
  repeats them and is left out of the body; blocks of an attached file carry
  ``meta["attachment"]`` = its file name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, Chunk, ChunkKind, Position
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.ingest.chunkers.sectioned import run_naive

log = logging.getLogger(__name__)

HEADER_ORDER = ("from", "to", "cc", "date", "subject")


def _positions(blocks: Sequence[Block]) -> list[Position]:
    out: list[Position] = []
    for block in blocks:
        out.extend(p for p in block.positions() if p not in out)
    return out


def _joined(blocks: Sequence[Block]) -> str:
    return "\n".join(b.text.strip() for b in blocks if b.text.strip())


def _with_headings(blocks: Sequence[Block]) -> str:
    """The blocks' text, each block preceded by the headings of its path that no title block put
    in the text before it (a sheet's name and title rows, which exist only as heading paths)."""
    lines: list[str] = []
    shown: tuple[str, ...] = ()  # the heading path the text so far has opened
    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        path = tuple(name.strip() for name in block.heading_path)
        same = 0
        while same < min(len(path), len(shown)) and path[same] == shown[same]:
            same += 1
        lines.extend(name for name in path[same:] if name)
        shown = path + (text,) if block.kind == BlockKind.TITLE else path
        lines.append(text)
    return "\n".join(lines)


def one_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """The whole document as one chunk, whatever its size (tables' HTML kept when there is one table).

    Headings that exist only in heading paths (a sheet's name) are put in the text where their section starts.
    """
    if not _joined(blocks):
        return []
    text = _with_headings(blocks)
    htmls = [b.html for b in blocks if b.html]
    return [Chunk(text=text, order=0, positions=_positions(blocks), method="one",
                  html=htmls[0] if len(htmls) == 1 else None)]


def picture_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """The OCR text of an image as one chunk.

    No text at all is a :class:`ParseError`; text shorter than
    ``picture_min_chars`` is kept but logged as too short to describe the image
    (the reference would add a vision-model description here; none is configured).
    """
    text = _joined(blocks)
    if not text:
        raise ParseError("picture: no text was recognised in the image, and no vision model is configured "
                         "to describe it")
    if len(text) < config.picture_min_chars:
        log.warning("picture: the recognised text has only %d characters (< %d); it may not describe the image",
                    len(text), config.picture_min_chars)
    return [Chunk(text=text, order=0, positions=_positions(blocks), kind=ChunkKind.FIGURE, method="picture")]


def _slide_of(block: Block) -> int | None:
    value = block.meta.get("slide")
    if value is not None and str(value).strip().isdigit():
        return int(value)
    return block.page


def _is_notes(block: Block) -> bool:
    return bool(block.meta.get("notes")) or block.meta.get("role") == "notes" or block.kind == BlockKind.NOTES


def presentation_chunk(blocks: Sequence[Block], config: ChunkerConfig,
                       count_tokens: Callable[[str], int]) -> list[Chunk]:
    """One chunk per slide: its content, then "Notes:" and the speaker notes. Slides are indivisible."""
    slides: dict[int | None, list[Block]] = {}
    for block in blocks:
        if block.text.strip():
            slides.setdefault(_slide_of(block), []).append(block)
    chunks: list[Chunk] = []
    for slide, members in slides.items():
        content = [b for b in members if not _is_notes(b)]
        notes = [b for b in members if _is_notes(b)]
        text = "\n".join(t for t in (_joined(content), "Notes:\n" + _joined(notes) if notes else "") if t)
        titles = [b.text.strip() for b in content if b.kind == BlockKind.TITLE]
        htmls = [b.html for b in content if b.html]
        positions = _positions(members) or ([(slide, 0.0, 0.0, 0.0, 0.0)] if slide is not None else [])
        chunks.append(Chunk(text=text, order=len(chunks), positions=positions,
                            heading_path=tuple(titles[:1]), method="presentation",
                            html="".join(htmls) if htmls else None))
    return chunks


def _headers(blocks: Sequence[Block]) -> dict[str, str]:
    found: dict[str, str] = {}
    for block in blocks:
        for key, value in block.meta.items():
            name = key.lower()
            if name in HEADER_ORDER and str(value).strip() and name not in found:
                found[name] = str(value).strip()
    return found


def email_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """Headers chunk(s), body chunks, then each attachment's chunks (naive, budget honoured).

    An attachment's chunks carry its name in their heading path (and so in their
    heading prefix): "attachment: NAME" is put first unless the name is already there.
    """
    mail = [b for b in blocks if not b.meta.get("attachment")]
    headers = _headers(mail)
    chunks: list[Chunk] = []
    if headers:
        text = "\n".join(f"{name.capitalize()}: {headers[name]}" for name in HEADER_ORDER if name in headers)
        chunks.extend(run_naive([Block(text=text)], config, count_tokens))
    body = [b for b in mail if b.meta.get("part") != "headers"]
    chunks.extend(run_naive(body, config, count_tokens))
    attachments: dict[str, list[Block]] = {}
    for block in blocks:
        if block.meta.get("attachment"):
            attachments.setdefault(block.meta["attachment"], []).append(block)
    for name, members in attachments.items():
        label = f"attachment: {name}"
        # parsers that already put the attachment's name in the heading path keep their path as it is
        chunks.extend(run_naive([b if name in b.heading_path else replace(b, heading_path=(label, *b.heading_path))
                                 for b in members], config, count_tokens))
    return chunks
