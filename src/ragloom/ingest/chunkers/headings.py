"""Heading numbering families, table-of-contents removal and heading promotion.

Plain text and PDFs without detected titles still number their headings:
"第一章 / 第一条", "1 / 1.1 / 1.1.1", "一、 / （一）", "Chapter I / Section 2 /
Article 3", Markdown "#". As in the reference (REFERENCE §3, ``BULLET_PATTERN``),
the family with the most matching lines wins and a line's level is the index of
the pattern it matches in that family. :func:`outline` then turns matching lines
into section heads with recomputed heading paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragloom.ingest.blocks import Block, BlockKind

_CN = "零一二三四五六七八九十百千两〇"
_ROMAN = "IVXLC"

# Each family lists its levels outermost first. A line takes the level of the
# *last* pattern it matches, so "1.2.3" is level 3 even though "1." also matches.
FAMILIES: dict[str, list[re.Pattern[str]]] = {
    "chinese": [re.compile(p) for p in (
        rf"第[{_CN}0-9]+(?:分?编|部分)", rf"第[{_CN}0-9]+章", rf"第[{_CN}0-9]+节", rf"第[{_CN}0-9]+条",
        rf"[(（][{_CN}]+[)）]",
    )],
    "numeric": [re.compile(p) for p in (
        r"第[0-9]+章", r"第[0-9]+节", r"[0-9]{1,2}(?:[.、．]\s*|\s+)(?=[^\d\s.])",
        r"[0-9]{1,2}\.[0-9]{1,2}\.?(?=\s|[^\d.a-zA-Z/%~-])", r"[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}\.?(?![\d.])",
        r"[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}\.?(?![\d.])",
    )],
    "chinese-numeral": [re.compile(p) for p in (
        rf"第[{_CN}0-9]+章", rf"第[{_CN}0-9]+节", rf"[{_CN}]+[、 ]", rf"[(（][{_CN}]+[)）]", r"[(（][0-9]{1,2}[)）]",
    )],
    "english": [re.compile(p, re.IGNORECASE) for p in (
        rf"PART\s+(?:ONE|TWO|THREE|FOUR|FIVE|SIX|SEVEN|EIGHT|NINE|TEN|[0-9]+|[{_ROMAN}]+)\b",
        rf"CHAPTER\s+(?:[0-9]+|[{_ROMAN}]+)\b", r"SECTION\s+[0-9]+(?:\.[0-9]+)*\b",
        rf"ARTICLE\s+(?:[0-9]+|[{_ROMAN}]+)\b",
    )],
    "markdown": [re.compile(rf"#{{{n}}}\s") for n in range(1, 7)],
}
_NOT_HEADING = re.compile(r"0|[0-9]+\s+[0-9~个只-]|[0-9]+\.{2,}|[0-9]{1,2}\.[0-9]+\s*(?:%|kg|cm|mm|m\b)")
_SENTENCE_END = tuple(".。;；,，!！:：")
TITLE_MAX_CHARS = 64
MIN_FAMILY_HITS = 2


def heading_level(text: str, family: str) -> int | None:
    """The 1-based level of ``text`` in ``family``, or None when it is no heading of that family."""
    line = text.lstrip()
    if _NOT_HEADING.match(line):
        return None
    level = None
    for i, pattern in enumerate(FAMILIES[family]):
        if pattern.match(line):
            level = i + 1
    return level


def detect_family(texts: Sequence[str]) -> str | None:
    """The family most lines match (at least :data:`MIN_FAMILY_HITS`), the first on ties; else None."""
    best, best_hits = None, MIN_FAMILY_HITS - 1
    for family in FAMILIES:
        hits = sum(1 for t in texts if heading_level(t, family) is not None)
        if hits > best_hits:
            best, best_hits = family, hits
    return best


def looks_like_title(text: str) -> bool:
    """Short and not ending like a sentence: a heading line rather than a numbered paragraph."""
    text = text.strip()
    return 0 < len(text) <= TITLE_MAX_CHARS and "\n" not in text and not text.endswith(_SENTENCE_END)


def split_lines(blocks: Sequence[Block]) -> list[Block]:
    """Multi-line text blocks cut into one block per line (same boxes); other blocks unchanged.

    Plain-text parsers give one block per paragraph, but numbered headings and
    law articles often sit on consecutive lines of one paragraph.
    """
    out: list[Block] = []
    for block in blocks:
        if block.kind not in (BlockKind.TEXT, BlockKind.LIST) or "\n" not in block.text:
            out.append(block)
            continue
        out.extend(replace(block, text=line.strip(), boxes=list(block.boxes), meta=dict(block.meta))
                   for line in block.text.split("\n") if line.strip())
    return out


_TOC_HEADINGS = {"contents", "tableofcontents", "目录", "目次", "目錄"}
_PAGE_REF = re.compile(r"(?:\.{2,}|…+|·{2,}|\s)\s*[0-9ivxlc]+\s*$", re.IGNORECASE)


def _key(text: str) -> str:
    return re.sub(r"\s+", "", _PAGE_REF.sub("", text.strip())).lower()


def drop_toc(blocks: Sequence[Block]) -> list[Block]:
    """``blocks`` without a table-of-contents section.

    The section starts at a block reading "Contents" / "Table of Contents" /
    "目录"; it runs over the entries that follow (short lines, typically ending
    with a page number) and ends where the first entry's text appears again as
    a real heading, or at the first line that cannot be an entry.
    """
    out = list(blocks)
    for i, block in enumerate(out):
        first_line = block.text.strip().split("\n", 1)[0]
        if _key(first_line) not in _TOC_HEADINGS:
            continue
        end = i + 1
        first_entry: str | None = None
        while end < len(out):
            text = out[end].text.strip()
            if first_entry is not None and re.sub(r"\s+", "", text).lower() == first_entry:
                break  # the first entry again, without its page number: the document proper
            if not all(_is_entry(line) for line in text.split("\n") if line.strip()):
                break
            if first_entry is None:
                first_entry = _key(text.split("\n", 1)[0])
            end += 1
        return out[:i] + out[end:]
    return out


def _is_entry(line: str) -> bool:
    line = line.strip()
    if len(line) > 120:
        return False
    return bool(_PAGE_REF.search(line)) or any(heading_level(line, f) for f in FAMILIES)


@dataclass(slots=True)
class Outline:
    """Blocks with recomputed heading paths and, per block, the level of the section it opens (or None)."""

    blocks: list[Block]
    levels: list[int | None]

    @property
    def ranks(self) -> list[int]:
        """The distinct heading levels present, outermost first."""
        return sorted({lv for lv in self.levels if lv is not None})


def outline_from_titles(blocks: Sequence[Block]) -> Outline:
    """Sections opened by the parser's ``title`` blocks (Markdown, DOCX, HTML, PDF headings/outline)."""
    return Outline(list(blocks), [max(b.level, 1) if b.kind == BlockKind.TITLE else None for b in blocks])


def outline_from_family(blocks: Sequence[Block], family: str, *, text_heads: bool) -> Outline:
    """Sections opened by lines numbered in ``family``.

    A short matching line becomes a ``title`` block. A long one (a law article
    whose text follows its number on the same line) opens a section only when
    ``text_heads``; it stays a text block and its number ("第三条", "Article 3")
    names it in the heading paths of any blocks nested under it.
    """
    out: list[Block] = []
    levels: list[int | None] = []
    stack: list[tuple[int, str]] = []
    for block in blocks:
        may_head = block.kind in (BlockKind.TEXT, BlockKind.LIST, BlockKind.TITLE)
        level = heading_level(block.text, family) if may_head else None
        title = level is not None and looks_like_title(block.text)
        if level is None or not (title or text_heads):
            out.append(replace(block, heading_path=tuple(t for _, t in stack)))
            levels.append(None)
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        path = tuple(t for _, t in stack)
        name = block.text.strip() if title else _label(block.text, family, level)
        kind = BlockKind.TITLE if title else block.kind
        out.append(replace(block, kind=kind, level=level if title else 0, heading_path=path))
        levels.append(level)
        stack.append((level, name))
    return Outline(out, levels)


def _label(text: str, family: str, level: int) -> str:
    m = FAMILIES[family][level - 1].match(text.lstrip())
    return m.group().strip() if m else text.strip()[:20]


def sections(outline: Outline, depth: int) -> list[Outline]:
    """The outline cut into sections opened by heads of the ``depth`` outermost levels present.

    Blocks before the first head form a leading section. Deeper heads stay inside
    their enclosing section (and keep their levels, for a further cut).
    """
    opening = set(outline.ranks[:depth])
    groups: list[Outline] = []
    for block, level in zip(outline.blocks, outline.levels, strict=True):
        if level in opening or not groups:
            groups.append(Outline([], []))
        groups[-1].blocks.append(block)
        groups[-1].levels.append(level)
    return [g for g in groups if any(b.text.strip() for b in g.blocks)]


def fold_empty_heads(groups: list[Outline]) -> list[Outline]:
    """A section holding only headings is put in front of the next section when that one is
    nested in it, so a chunk is never a bare heading."""
    out: list[Outline] = []
    carry = Outline([], [])
    for i, group in enumerate(groups):
        group = Outline(carry.blocks + group.blocks, carry.levels + group.levels)
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        only_titles = all(b.kind == BlockKind.TITLE for b in group.blocks)
        if only_titles and nxt and group.blocks[-1].text in nxt.blocks[0].heading_path:
            carry = group
            continue
        carry = Outline([], [])
        out.append(group)
    return out
