"""Coverage: how much of a parsed document's text its chunks keep.

The invariant ingestion holds to is that every word of a document's text ends up in a chunk, or was
removed on purpose by the parser and counted (a running header or footer, a page number:
:attr:`~ragloom.dataflow.ParsedDocument.removed`). :func:`measure` checks the chunk stage against
the parse: it counts the words of the parsed blocks and how many of them the chunks hold (as a
multiset, so overlapping chunks do not count a word twice and a word lost in one place is not
covered by the same word elsewhere being repeated). Words are runs of letters and digits after
NFKC and case folding; each Han, kana or hangul character counts as a word of its own (Chinese has
no spaces, and a chunk boundary may fall between any two characters).

Chunk methods that leave text out on purpose count it too (:func:`read_by`): ``book`` and ``laws``
drop a table of contents (``table_of_contents``), ``table`` reads tables only (``outside_tables``).
``qa`` and ``tag`` read a document as data (question/answer pairs, tagged rows): what they do not
read counts as lost, so their coverage says how much of a document they used.

Each ingestion task records its :class:`Coverage` and a published version sums its tasks'; the
document's API view and ``ragloom parse`` show it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.dataflow import Block, BlockKind, Chunk

_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
_WORD = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W_])+")
MISSING_SHOWN = 20  # words not found that a report lists


def words(text: str) -> Counter[str]:
    """The words of ``text`` as a multiset (NFKC, case-folded; each CJK character alone)."""
    return Counter(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@dataclass(frozen=True, slots=True)
class Coverage:
    """Of the parsed text's ``words``, ``kept`` are in the chunks; ``removed`` counts the characters
    the parser left out on purpose, by reason; ``missing`` lists some of the words not kept."""

    words: int
    kept: int
    removed: Mapping[str, int] = field(default_factory=dict)
    missing: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        """kept / words (1.0 for a document without words)."""
        return self.kept / self.words if self.words else 1.0

    def __add__(self, other: Coverage) -> Coverage:
        removed = Counter(self.removed)
        removed.update(other.removed)
        missing = (self.missing + other.missing)[:MISSING_SHOWN]
        return Coverage(self.words + other.words, self.kept + other.kept, dict(removed), missing)

    def as_dict(self) -> dict[str, Any]:
        """The stored and shown form: ``{"words", "kept", "ratio", "removed", "missing"}``."""
        return {"words": self.words, "kept": self.kept, "ratio": round(self.ratio, 4),
                "removed": dict(self.removed), "missing": list(self.missing)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Coverage:
        return cls(int(data.get("words", 0)), int(data.get("kept", 0)), dict(data.get("removed") or {}),
                   tuple(data.get("missing") or ()))


def read_by(method: str, blocks: Sequence[Block]) -> tuple[list[Block], dict[str, int]]:
    """The blocks the chunk method ``method`` reads, and the characters it leaves out on purpose."""
    from ragloom.ingest.chunkers.headings import drop_toc, split_lines

    if method in ("book", "laws"):
        lines = split_lines(blocks)
        read = drop_toc(lines)
        skipped = sum(len(b.text) for b in lines) - sum(len(b.text) for b in read)
        return (read, {"table_of_contents": skipped}) if skipped else (list(blocks), {})
    if method == "table":
        read = [b for b in blocks if b.kind == BlockKind.TABLE]
        skipped = sum(len(b.text) for b in blocks if b.kind != BlockKind.TABLE)
        return read, ({"outside_tables": skipped} if skipped else {})
    return list(blocks), {}


def measure(blocks: Iterable[Block], chunks: Iterable[Chunk], removed: Mapping[str, int] | None = None, *,
            method: str | None = None) -> Coverage:
    """How many words of ``blocks`` the ``chunks`` keep (their text, a parent's text and tags);
    ``removed`` are the parser's deliberate removals; ``method`` (the chunk method) adds its own."""
    removed = Counter(removed or {})
    if method is not None:
        blocks, skipped = read_by(method, list(blocks))
        removed.update(skipped)
    source: Counter[str] = Counter()
    for block in blocks:
        source.update(words(block.text))
    held: Counter[str] = Counter()
    for chunk in chunks:
        held.update(words(chunk.text))
        if chunk.parent_text:  # parent-child: the parent holds the text its children were cut from
            held.update(words(chunk.parent_text))
        for tag in chunk.tag_keywords or ():  # the tag method: a row's tags
            held.update(words(tag))
    lost = source - held
    total = sum(source.values())
    missing = tuple(sorted(lost, key=lambda w: (-lost[w], w))[:MISSING_SHOWN])
    return Coverage(total, total - sum(lost.values()), dict(removed), missing)
