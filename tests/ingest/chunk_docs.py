"""Generated block documents with known structure, shared by the chunk-method tests."""

from __future__ import annotations

import random
import re

from ragloom.ingest.blocks import BBox, Block, Table
from tests.ingest.docgen import WORDS, paragraph, sentence

_TOKEN = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+|[^\sA-Za-z0-9\u4e00-\u9fff]")
CJK_NUMS = "一二三四五六七八九十"


def count(text: str) -> int:
    """A cheap tokenizer: a word, a CJK character or a punctuation mark is one token."""
    return len(_TOKEN.findall(text))


def cn(n: int) -> str:
    """1..99 as Chinese numerals."""
    if n <= 10:
        return "十" if n == 10 else CJK_NUMS[n - 1]
    tens, ones = divmod(n, 10)
    return (CJK_NUMS[tens - 1] if tens > 1 else "") + "十" + (CJK_NUMS[ones - 1] if ones else "")


class Headings:
    """The open section titles while a document is generated (what a parser's tracker does)."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.stack)

    def title_block(self, text: str, level: int, **extra: object) -> Block:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        block = Block(text=text, kind="title", level=level, heading_path=self.path, **extra)  # type: ignore[arg-type]
        self.stack.append((level, text))
        return block


def box(i: int, page: int = 1) -> list[tuple[int, BBox]]:
    return [(page, BBox(50, 20 * i, 500, 20 * i + 15))]


def structured_blocks(seed: int) -> list[Block]:
    """Titles of levels 1–3 with paragraphs (some far over small budgets) and the odd table."""
    rng = random.Random(seed)
    tracker = Headings()
    blocks: list[Block] = []
    for i in range(rng.randint(4, 30)):
        roll = rng.random()
        if roll < 0.3:
            level = rng.randint(1, 3)
            blocks.append(tracker.title_block(sentence(rng, rng.randint(1, 4)).rstrip("."), level, boxes=box(i)))
        elif roll < 0.36:
            rows = [[rng.choice(WORDS), sentence(rng)] for _ in range(rng.randint(1, 8))]
            text = "\n".join(f"Key: {k}; Value: {v}" for k, v in rows)
            blocks.append(Block(text=text, kind="table", heading_path=tracker.path,
                                table=Table(header=["Key", "Value"], rows=[list(r) for r in rows])))
        else:
            n = rng.choice([1, 2, 4, 12])
            blocks.append(Block(text=paragraph(rng, n), heading_path=tracker.path, page=1, boxes=box(i)))
    return blocks


def numbered_text(seed: int) -> list[Block]:
    """A plain-text book: numbered headings "1 Title" / "1.2 Title" on their own lines, paragraphs between."""
    rng = random.Random(seed)
    lines: list[str] = []
    for ch in range(1, rng.randint(2, 5)):
        lines.append(f"{ch} {sentence(rng, 2).rstrip('.')}")
        for sec in range(1, rng.randint(1, 4)):
            lines.append(f"{ch}.{sec} {sentence(rng, 3).rstrip('.')}")
            lines.extend(paragraph(rng, rng.choice([1, 3, 8])) for _ in range(rng.randint(1, 3)))
    return [Block(text="\n".join(lines))]


def chinese_law(seed: int, articles_per_chapter: int = 3) -> tuple[list[Block], list[tuple[str, str]]]:
    """A law as one text block with a table of contents; returns (blocks, [(chapter, article line)])."""
    rng = random.Random(seed)
    chapters = [f"第{cn(i)}章 {''.join(rng.choice('数据安全管理责任义务权利') for _ in range(4))}"
                for i in range(1, rng.randint(3, 5))]
    lines = ["目录", *(f"{c} {i * 3 + 1}" for i, c in enumerate(chapters))]
    truth: list[tuple[str, str]] = []
    n = 0
    for chapter in chapters:
        lines.append(chapter)
        for _ in range(articles_per_chapter):
            n += 1
            body = "".join(rng.choice("国家建立数据分类分级保护制度对数据实行保护") for _ in range(rng.randint(10, 60)))
            article = f"第{cn(n)}条 {body}。"
            lines.append(article)
            truth.append((chapter, article))
    return [Block(text="\n".join(lines))], truth
