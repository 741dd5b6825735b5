"""The naive chunker: delimiter-aware packing of blocks under a token budget.

Follows the reference ``naive_merge`` (delimiter grammar, overlap, custom mode)
and fixes its faults:

* **No chunk exceeds the budget.** The reference emits an over-long paragraph
  whole and lets a chunk overflow by one piece. Here every chunk's text —
  heading prefix, overlap and body — fits ``chunk_token_num``; only a table row
  longer than the budget is emitted alone, over it.
* **A larger budget never yields more chunks** (RAGFlow #8630, #13066). Text is
  cut into atoms (words, CJK characters) whose sizes and cut ratings do not
  depend on the budget. Pieces between delimiters are packed like the
  reference, into the fewest chunks, preferring cuts before a new section,
  then between blocks; only a piece over the budget is split — at sentence
  ends, then between words, then inside a long word — and its parts stand
  alone. A piece that starts to fit costs one chunk where it cost at least one
  before, so the count can only fall as the budget grows (``plan_cuts``).
  It never cuts right after a heading if it can avoid it.
* **Punctuation is kept**: a chunk is a slice of its blocks' own text.

Budget: with overlap ``o`` (fraction) and a heading-prefix reserve ``R`` (the
longest heading path in tokens, at most a quarter of the budget), the body of a
chunk holds ``(N − R)(1 − o)`` tokens and the overlap at most ``(N − R)·o``.

Heading prefix (``heading_prefix=True``): a chunk whose blocks sit under
headings (Markdown, DOCX, HTML, PDF with detected titles) starts with the path
``"A > B"`` on its own line, minus any title the chunk itself starts with. This
puts the section context into the embedded and indexed text of every chunk,
including continuation chunks that would otherwise lose it.

No chunk is headings alone that the next chunk repeats. The titles right before a
table that open the sections it sits in are folded into its first chunk (its
heading prefix stands for them, or a longer prefix there) instead of being emitted
alone; in custom-delimiter mode, where each segment is a chunk, titles go with the
first segment of the next block (before a table: those it sits in, as above).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from ragloom.errors import InvalidRequestError
from ragloom.ingest.blocks import Block, BlockKind, Chunk, ChunkKind, Position
from ragloom.ingest.chunkers._atoms import (
    Q_DELIM,
    Q_INNER,
    Q_SECTION,
    Q_SENTENCE,
    Q_WORD,
    Atom,
    TokenCounter,
    block_atoms,
    segment_atoms,
    segments,
)
from ragloom.ingest.chunkers.cuts import min_cuts
from ragloom.ingest.chunkers.delimiters import parse_delimiters
from ragloom.ingest.chunkers.tables import table_chunks
from ragloom.ingest.guard import checkpoint

log = logging.getLogger(__name__)
CHECK_EVERY = 1000  # blocks between two task checkpoints


_LEVELS = (Q_DELIM, Q_SENTENCE, Q_WORD, Q_INNER)


def plan_cuts(atoms: Sequence[Atom], lo: int, hi: int, capacity: float, level: int = 0) -> list[int]:
    """Chunk ends (inclusive atom indices) for ``atoms[lo:hi]``, cutting as high up as possible.

    Units are the spans between cuts of quality ≥ ``_LEVELS[level]``. Runs of
    units that fit are packed into the fewest chunks (best boundaries first);
    a unit over the capacity is planned alone one level down (sentences, then
    words, then word slices). Each unit's count can only fall as the capacity
    grows, and a unit that starts to fit costs one chunk where it cost at least
    one before — so the total is monotone in the budget.
    """
    threshold = _LEVELS[level]
    units: list[tuple[int, int, float]] = []
    start, size = lo, 0.0
    for i in range(lo, hi):
        size += atoms[i].size
        if atoms[i].quality >= threshold or i == hi - 1:
            units.append((start, i, size))
            start, size = i + 1, 0.0
    ends: list[int] = []
    run: list[tuple[int, int, float]] = []
    for unit in units + [(-1, -1, float("inf"))]:
        if unit[2] <= capacity + 1e-9 or (unit[0] == unit[1] and unit[0] >= 0 and level == len(_LEVELS) - 1):
            run.append(unit)
            continue
        if run:
            cuts = min_cuts([u[2] for u in run], [atoms[u[1]].quality for u in run], capacity)
            ends.extend(run[c][1] for c in cuts)
            run = []
        if unit[0] >= 0:
            ends.extend(plan_cuts(atoms, unit[0], unit[1] + 1, capacity, level + 1))
    return ends


class _Packer:
    def __init__(self, blocks: Sequence[Block], counter: TokenCounter, budget: int,
                 overlap: float, reserve: float, heading_prefix: bool) -> None:
        self.blocks, self.counter, self.budget = blocks, counter, budget
        self.overlap, self.reserve, self.heading_prefix = overlap, reserve, heading_prefix
        self.chunks: list[Chunk] = []

    @property
    def capacity(self) -> float:
        return (self.budget - self.reserve) * (1 - self.overlap)

    def pack(self, atoms: list[Atom], with_overlap: bool) -> None:
        if not atoms:
            return
        groups: list[tuple[int, int]] = []
        start = 0
        for end in plan_cuts(atoms, 0, len(atoms), self.capacity):
            groups.extend(self._checked(atoms, start, end, self.capacity))
            start = end + 1
        prev = 0
        for start, end in groups:
            lead = self._overlap(atoms[prev:start]) if with_overlap and self.overlap > 0 else []
            self._emit(lead, atoms[start : end + 1])
            prev = start

    def _checked(self, atoms: list[Atom], start: int, end: int, capacity: float,
                 depth: int = 0) -> list[tuple[int, int]]:
        """Re-plan a group whose real token count overshoots the estimate (non-additive tokenizers)."""
        body = atoms[start : end + 1]
        actual = self.counter.count(self._prefix(self._path(body)[1]) + "\n" + assemble(self.blocks, body))
        if actual <= self.budget or start == end or depth > 4:
            return [(start, end)]
        tighter = capacity * self.budget / actual * 0.95
        out: list[tuple[int, int]] = []
        sub_start = start
        for sub_end in plan_cuts(atoms, start, end + 1, tighter):
            out.extend(self._checked(atoms, sub_start, sub_end, tighter, depth + 1))
            sub_start = sub_end + 1
        return out

    def _path(self, body: list[Atom]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the chunk's heading path, the part of it to print as a prefix)."""
        first = self.blocks[body[0].block]
        path = first.heading_path + ((first.text,) if first.kind == BlockKind.TITLE else ())
        starts_title = first.kind == BlockKind.TITLE and body[0].start == 0
        return path, first.heading_path if starts_title else path

    def _overlap(self, prev: list[Atom]) -> list[Atom]:
        """The tail of the previous chunk's body: at most ``overlap`` of its tokens."""
        allowed = self.overlap * sum(a.size for a in prev)
        taken, used = [], 0.0
        for atom in reversed(prev):
            if used + atom.size > allowed + 1e-9:
                break
            taken.append(atom)
            used += atom.size
        return taken[::-1]

    def _emit(self, lead: list[Atom], body: list[Atom]) -> None:
        path, shown = self._path(body)
        prefix = self._prefix(shown)
        body_text = assemble(self.blocks, body)
        for lead_atoms, pre in ((lead, prefix), ([], prefix), ([], "")):
            text = "\n".join(t for t in (pre, assemble(self.blocks, lead_atoms), body_text) if t)
            if self.counter.count(text) <= self.budget:
                break
        else:
            log.warning("chunk of %d tokens exceeds the budget %d (token estimate drift)",
                        self.counter.count(text), self.budget)
        kind = ChunkKind.CODE if all(self.blocks[a.block].kind == BlockKind.CODE for a in body) else ChunkKind.TEXT
        self.chunks.append(Chunk(text=text, order=0, positions=positions(self.blocks, lead_atoms + body),
                                 heading_path=path, kind=kind))

    def _prefix(self, path: tuple[str, ...]) -> str:
        return " > ".join(self._shown(path))

    def _shown(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """The innermost part of ``path`` that fits the reserve (nothing without a heading prefix)."""
        if not self.heading_prefix:
            return ()
        while path and self.counter.path(path) > self.reserve:
            path = path[1:]
        return path

    def table(self, index: int, folded: Sequence[int], caption: int | None = None) -> None:
        """Chunks of the table ``blocks[index]``, the titles ``folded`` (block indices) leading its first
        part, then its caption (``blocks[caption]``).

        A folded title is in the table's heading path: when the prefix already shows it, the prefix
        stands for it; else the first part's prefix is the path from the outermost folded title on.
        """
        block = self.blocks[index]
        path = block.heading_path
        shown = self._shown(path)
        first: str | None = None
        if folded:
            names = [self.blocks[i].text.strip() for i in folded]
            tail = [name.strip() for name in path[len(path) - len(names) :]]
            start = len(path) - len(names) if tail == names else min(
                i for i, name in enumerate(path) if name.strip() in names)
            if len(path) - start > len(shown):
                first = " > ".join(path[start:])
        extra = self.counter.count(first) if first else 0.0
        capacity = self.budget - max(self.reserve, extra)
        firsts = [q for i in [*folded, *([caption] if caption is not None else [])] for q in self.blocks[i].positions()]
        self.chunks.extend(table_chunks(block, self.counter, capacity, " > ".join(shown), first_prefix=first,
                                        first_positions=firsts,
                                        caption=self.blocks[caption].text.strip() if caption is not None else ""))


def assemble(blocks: Sequence[Block], atoms: list[Atom]) -> str:
    """The text of consecutive atoms: slices of their blocks joined by newlines."""
    parts: list[str] = []
    i = 0
    while i < len(atoms):
        j = i
        while j + 1 < len(atoms) and atoms[j + 1].block == atoms[i].block:
            j += 1
        parts.append(blocks[atoms[i].block].text[atoms[i].start : atoms[j].end])
        i = j + 1
    return "\n".join(parts)


def positions(blocks: Sequence[Block], atoms: list[Atom]) -> list[Position]:
    """Union of the boxes of the blocks the atoms come from, in order, without repeats."""
    out: list[Position] = []
    seen: set[int] = set()
    for atom in atoms:
        if atom.block in seen:
            continue
        seen.add(atom.block)
        for pos in blocks[atom.block].positions():
            if pos not in out:
                out.append(pos)
    return out


def _validate(chunk_token_num: int, overlapped_percent: float) -> None:
    if chunk_token_num < 1:
        raise InvalidRequestError(f"chunk_token_num must be at least 1, got {chunk_token_num}")
    if not 0 <= overlapped_percent <= 90:
        raise InvalidRequestError(f"overlapped_percent must be between 0 and 90, got {overlapped_percent}")


def naive_chunk(
    blocks: Sequence[Block],
    *,
    count_tokens: Callable[[str], int],
    chunk_token_num: int = 512,
    delimiter: str = "\n!?。；！？",
    overlapped_percent: float = 0,
    heading_prefix: bool = True,
) -> list[Chunk]:
    """Chunks of ``blocks`` in reading order (see the module docstring for the rules).

    Tables become their own chunks (split by rows when too big, each part with
    its HTML). Raises :class:`InvalidRequestError` for a bad parameter.
    """
    _validate(chunk_token_num, overlapped_percent)
    try:
        delims = parse_delimiters(delimiter)
    except ValueError as exc:
        raise InvalidRequestError(str(exc)) from exc
    counter = TokenCounter(count_tokens)
    reserve = _prefix_reserve(blocks, counter, chunk_token_num) if heading_prefix else 0.0
    packer = _Packer(blocks, counter, chunk_token_num, overlapped_percent / 100, reserve, heading_prefix)
    run: list[Atom] = []
    pending: list[int] = []  # custom mode: titles waiting for the block they head
    taken: set[int] = set()  # captions read with the table above them
    for idx, block in enumerate(blocks):
        if idx % CHECK_EVERY == CHECK_EVERY - 1:
            checkpoint()
        if not block.text.strip() or idx in taken:
            continue
        if delims.custom and block.kind == BlockKind.TITLE:
            pending.append(idx)
            continue
        if block.kind == BlockKind.TABLE or delims.custom:
            if delims.custom:  # titles go with the next block's first segment; before a table, those it sits in
                table = block.kind == BlockKind.TABLE
                cut = len(pending) - _heads_of(blocks, pending, block.heading_path) if table else 0
                packer.pack(_title_atoms(blocks, pending[:cut], counter), with_overlap=False)
                folded, pending = pending[cut:], []
            else:
                caption = _caption_before(blocks, idx, run)
                run = [a for a in run if a.block != caption]
                in_run = list(dict.fromkeys(a.block for a in run))
                folded = in_run[len(in_run) - _heads_of(blocks, in_run, block.heading_path) :]
                run = [a for a in run if a.block not in folded]
                packer.pack(run, with_overlap=True)
                run = []
            if block.kind == BlockKind.TABLE:
                if not delims.custom and caption is None and (caption := _caption_after(blocks, idx)) is not None:
                    taken.add(caption)
                packer.table(idx, folded, None if delims.custom else caption)
            else:
                _pack_segments(packer, blocks, idx, delims.pattern, counter, _title_atoms(blocks, folded, counter))
        else:
            atoms = block_atoms(idx, block, delims.pattern, counter)
            if block.kind == BlockKind.TITLE and run and blocks[run[-1].block].kind != BlockKind.TITLE:
                run[-1].quality = max(run[-1].quality, Q_SECTION)
            run.extend(atoms)
    packer.pack(_title_atoms(blocks, pending, counter), with_overlap=False)
    packer.pack(run, with_overlap=True)
    for order, chunk in enumerate(packer.chunks):
        chunk.order = order
    return packer.chunks


def _is_table_caption(block: Block) -> bool:
    return block.meta.get("caption_of") == "table" and block.kind != BlockKind.TABLE


def _caption_before(blocks: Sequence[Block], idx: int, run: Sequence[Atom]) -> int | None:
    """The caption block right before the table ``blocks[idx]`` when it ends ``run`` (not yet packed)."""
    if idx > 0 and _is_table_caption(blocks[idx - 1]) and run and run[-1].block == idx - 1:
        return idx - 1
    return None


def _caption_after(blocks: Sequence[Block], idx: int) -> int | None:
    """The caption block right below the table ``blocks[idx]`` — unless it heads the next table."""
    below = idx + 1
    if below < len(blocks) and _is_table_caption(blocks[below]) and blocks[below].text.strip() and not (
            below + 1 < len(blocks) and blocks[below + 1].kind == BlockKind.TABLE):
        return below
    return None


def _heads_of(blocks: Sequence[Block], order: Sequence[int], path: tuple[str, ...]) -> int:
    """How many of the blocks ``order`` (indices, in reading order) at its end are titles named in
    ``path``: the headings of the sections the next block opens into, to fold into its chunk."""
    names = {name.strip() for name in path}
    n = 0
    while n < len(order) and blocks[order[-1 - n]].kind == BlockKind.TITLE \
            and blocks[order[-1 - n]].text.strip() in names:
        n += 1
    return n


def _title_atoms(blocks: Sequence[Block], titles: Sequence[int], counter: TokenCounter) -> list[Atom]:
    return [a for t in titles for a in block_atoms(t, blocks[t], None, counter)]


def _pack_segments(packer: _Packer, blocks: Sequence[Block], idx: int, pattern: re.Pattern[str] | None,
                   counter: TokenCounter, head: list[Atom] | None = None) -> None:
    """Custom mode: each segment of ``blocks[idx]`` packed apart, ``head`` (the titles before it) with the first."""
    text = blocks[idx].text
    spans = segments(text, pattern, keep_delims=False)
    for k, span in enumerate(spans):
        packer.pack([*(head or [] if k == 0 else []), *segment_atoms(idx, text, span, counter, 1)],
                    with_overlap=False)
    if not spans and head:
        packer.pack(head, with_overlap=False)


def _prefix_reserve(blocks: Sequence[Block], counter: TokenCounter, budget: int) -> float:
    """Tokens kept for the heading prefix: the longest path, at most a quarter of the budget."""
    longest = 0
    for block in blocks:
        path = block.heading_path + ((block.text,) if block.kind == BlockKind.TITLE else ())
        if path:
            longest = max(longest, counter.path(path))
    return min(float(longest), budget / 4)
