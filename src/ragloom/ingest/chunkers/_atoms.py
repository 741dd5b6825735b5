"""Atoms: the smallest pieces of text the naive chunker places, with cut qualities.

An atom is a word (or one CJK character, or a 16-character slice of a very long
word) inside one block. Its ``size`` is its share of the token count of the
delimiter segment it belongs to, so whole segments cost exactly what the
tokenizer says. ``quality`` rates a cut right after the atom: the chunker
always uses the fewest chunks the budget allows and, among the cuts that keep
that minimum, takes the best-rated one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ragloom.ingest.blocks import Block, BlockKind

Q_INNER = 0      # inside a title or a split long word: avoid
Q_WORD = 1       # between words / CJK characters
Q_SENTENCE = 2   # after sentence punctuation
Q_DELIM = 3      # at a delimiter (or a line end in code)
Q_BLOCK = 4      # between blocks
Q_SECTION = 5    # right before a title: a new section starts

_CJK_CLASS = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_ATOM = re.compile(f"[{_CJK_CLASS}]|[^\\s{_CJK_CLASS}]+")
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_SENTENCE_END = re.compile(r"[.!?;:。！？；：…]['\"”’)\]]?$")
_MAX_ATOM_CHARS = 16


@dataclass(slots=True)
class Atom:
    block: int
    start: int
    end: int
    size: float = 0.0
    quality: int = Q_WORD


class TokenCounter:
    """``count_tokens`` with a cache (words repeat; a chunk's text is counted more than once)."""

    def __init__(self, count_tokens: Callable[[str], int]) -> None:
        self._count = count_tokens
        self._cache: dict[str, int] = {}
        self._paths: dict[tuple[str, ...], int] = {}

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = self._count(text)
        return n

    word = count

    def path(self, path: tuple[str, ...]) -> int:
        """Tokens of a heading path shown as ``"A > B"``, cached by the path: every block and chunk of a
        section has its path, and joining a long heading for each of them would cost its length each time
        (a tuple of strings hashes by the strings' cached hashes)."""
        n = self._paths.get(path)
        if n is None:
            n = self._paths[path] = self.count(" > ".join(path))
        return n


def segments(text: str, pattern: re.Pattern[str] | None, keep_delims: bool) -> list[tuple[int, int]]:
    """Spans of ``text`` between delimiter matches (non-whitespace single delimiters kept)."""
    if pattern is None:
        return [(0, len(text))]
    spans, start = [], 0
    for m in pattern.finditer(text):
        keep = keep_delims and len(m.group()) == 1 and not m.group().isspace()
        spans.append((start, m.end() if keep else m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def segment_atoms(block_idx: int, text: str, span: tuple[int, int], counter: TokenCounter,
                  inner_quality: int) -> list[Atom]:
    """Atoms of one segment, sized so that they sum to the segment's token count."""
    atoms: list[Atom] = []
    for m in _ATOM.finditer(text, span[0], span[1]):
        for a in range(m.start(), m.end(), _MAX_ATOM_CHARS):
            b = min(a + _MAX_ATOM_CHARS, m.end())
            atoms.append(Atom(block_idx, a, b, quality=Q_INNER if b < m.end() else inner_quality))
    if not atoms:
        return atoms
    raw = [counter.word(text[a.start : a.end]) for a in atoms]
    total = counter.count(text[span[0] : span[1]])
    denom = sum(raw)
    for atom, r in zip(atoms, raw, strict=True):
        atom.size = total * r / denom if denom else total / len(atoms)
    for atom in atoms:
        if atom.quality == Q_INNER:
            continue
        piece = text[atom.start : atom.end]
        if _SENTENCE_END.search(piece) or (_CJK.match(piece) and piece in "。！？；…"):
            atom.quality = max(atom.quality, Q_SENTENCE) if inner_quality else Q_INNER
    return atoms


def block_atoms(idx: int, block: Block, pattern: re.Pattern[str] | None,
                counter: TokenCounter) -> list[Atom]:
    """Atoms of a whole block; the block's last atom gets quality ``Q_BLOCK``."""
    text = block.text
    if block.kind == BlockKind.TITLE:
        spans, inner = [(0, len(text))], Q_INNER
    elif block.kind == BlockKind.CODE:
        spans, inner = segments(text, re.compile("\n"), keep_delims=False), Q_WORD
    else:
        spans, inner = segments(text, pattern, keep_delims=True), Q_WORD
    atoms: list[Atom] = []
    for span in spans:
        seg = segment_atoms(idx, text, span, counter, inner)
        if seg:
            seg[-1].quality = Q_DELIM
            atoms.extend(seg)
    if atoms:
        atoms[-1].quality = Q_INNER if block.kind == BlockKind.TITLE else Q_BLOCK
    return atoms
