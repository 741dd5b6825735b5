"""The qa method: question/answer pairs, one pair per chunk, only the question indexed as terms.

Pairs come from, in document order:

* tables — the columns named like question/answer (Q, 问题, ...), or any
  two-column table (a header row that is itself a question, ending with "?",
  counts as a pair: Q/A sheets often have no header);
* text with labels — "Q: ... A: ..." / "Question: ... Answer: ..." /
  "问：... 答：..." (labels at line starts; an answer runs until the next question);
* headings — when no labelled text exists, a heading with a body under it
  (Markdown, DOCX) is the question and the body the answer.

Leading labels are stripped from questions and answers. A chunk's ``text`` is
``"Question: q\\tAnswer: a"``, or ``"问题：q\\t回答：a"`` when the pair is Chinese (CJK
ideographs make up at least a fifth of its non-space characters, see :func:`is_chinese`),
and ``questions == [q]``. A pair over the budget keeps its question and splits the
answer into parts (each its own chunk with the same question). A question so long that less than 8 tokens of answer
fit beside it is indivisible: its parts hold 8 answer tokens each and go over
the budget (the count of parts still falls as the budget grows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, Chunk, Position
from ragloom.ingest.chunkers.config import ChunkerConfig
from ragloom.ingest.chunkers.naive import naive_chunk
from ragloom.ingest.chunkers.tabular import block_table

_Q_LABEL = re.compile(r"^\s*(?:Q(?:uestion)?\s*\d*|问题?\s*\d*)\s*[:：]\s*", re.IGNORECASE)
_A_LABEL = re.compile(r"^\s*(?:A(?:nswer)?\s*\d*|答案?|回答)\s*[:：]\s*", re.IGNORECASE)
_Q_NAMES = {"q", "question", "questions", "问题", "问", "提问", "query", "prompt"}
_A_NAMES = {"a", "answer", "answers", "答案", "答", "回答", "reply", "response"}
_MIN_ANSWER_BUDGET = 8


@dataclass(slots=True)
class Pair:
    question: str
    answer: str
    positions: list[Position] = field(default_factory=list)
    heading_path: tuple[str, ...] = ()


def strip_label(text: str, label: re.Pattern[str]) -> str:
    return label.sub("", text.strip(), count=1).strip()


_CJK_SHARE = 0.2


def is_chinese(text: str) -> bool:
    """True when CJK ideographs are at least a fifth of the non-space characters."""
    chars = [ch for ch in text if not ch.isspace()]
    cjk = sum(1 for ch in chars if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")
    return bool(chars) and cjk / len(chars) >= _CJK_SHARE


def pair_text(question: str, answer: str, *, chinese: bool | None = None) -> str:
    """``Question: q<TAB>Answer: a``; Chinese labels (问题：/回答：) when ``chinese``, which is
    detected from the question and answer when not given."""
    if chinese is None:
        chinese = is_chinese(question + answer)
    if chinese:
        return f"问题：{question}\t回答：{answer}"
    return f"Question: {question}\tAnswer: {answer}"


def _add_positions(target: list[Position], block: Block) -> None:
    target.extend(p for p in block.positions() if p not in target)


def table_pairs(block: Block) -> list[Pair]:
    """Pairs from a table block; [] when it has no question and answer columns."""
    table = block_table(block)
    if table is None:
        return []
    names = [h.strip().lower().rstrip(":：") for h in table.header]
    q_col = next((i for i, n in enumerate(names) if n in _Q_NAMES), None)
    a_col = next((i for i, n in enumerate(names) if n in _A_NAMES), None)
    rows = table.rows
    width = max([len(names), *(len(r) for r in rows)]) if rows or names else 0
    if q_col is None or a_col is None:
        if width != 2:
            return []
        q_col, a_col = 0, 1
        if len(table.header) == 2 and table.header[0].strip().endswith(("?", "？")):
            rows = [table.header, *rows]
    pairs = []
    for row in rows:
        if max(q_col, a_col) >= len(row):
            continue
        q, a = strip_label(row[q_col], _Q_LABEL), strip_label(row[a_col], _A_LABEL)
        if q and a:
            pairs.append(Pair(q, a, block.positions(), block.heading_path))
    return pairs


def labelled_pairs(blocks: Sequence[Block]) -> list[Pair]:
    """Pairs from "Q:/A:" labelled lines; text before the first question is ignored."""
    pairs: list[Pair] = []
    current: Pair | None = None
    in_answer = False
    for block in blocks:
        for line in block.text.split("\n"):
            if _Q_LABEL.match(line):
                current = Pair(strip_label(line, _Q_LABEL), "", heading_path=block.heading_path)
                pairs.append(current)
                in_answer = False
            elif current is None:
                continue
            elif _A_LABEL.match(line):
                current.answer = strip_label(line, _A_LABEL)
                in_answer = True
            elif line.strip():
                if in_answer:
                    current.answer = f"{current.answer}\n{line.strip()}".strip()
                else:
                    current.question = f"{current.question} {line.strip()}".strip()
            if current is not None:
                _add_positions(current.positions, block)
    return [p for p in pairs if p.question and p.answer]


def heading_pairs(blocks: Sequence[Block]) -> list[Pair]:
    """Pairs from headings followed by a body (the body runs to the next heading)."""
    pairs: list[Pair] = []
    current: Pair | None = None
    for block in blocks:
        if block.kind == BlockKind.TITLE:
            current = Pair(strip_label(block.text, _Q_LABEL), "", block.positions(), block.heading_path)
            pairs.append(current)
        elif current is not None and block.kind != BlockKind.TABLE:
            current.answer = f"{current.answer}\n{strip_label(block.text, _A_LABEL)}".strip()
            _add_positions(current.positions, block)
    return [p for p in pairs if p.question and p.answer]


def extract_pairs(blocks: Sequence[Block]) -> list[Pair]:
    """Every pair of the document, in document order (see the module docstring)."""
    labelled = any(_Q_LABEL.match(line) for b in blocks if b.kind != BlockKind.TABLE for line in b.text.split("\n"))
    pairs: list[Pair] = []
    run: list[Block] = []

    def flush() -> None:
        pairs.extend(labelled_pairs(run) if labelled else heading_pairs(run))
        run.clear()

    for block in blocks:
        if block.kind == BlockKind.TABLE:
            flush()
            pairs.extend(table_pairs(block))
        else:
            run.append(block)
    flush()
    return pairs


def qa_chunk(blocks: Sequence[Block], config: ChunkerConfig, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """One chunk per pair (an over-budget answer split into parts); ParseError when there is no pair."""
    pairs = extract_pairs(blocks)
    if not pairs:
        raise ParseError(
            "qa: no question/answer pairs found; expected a table with question and answer columns "
            "(or two columns), 'Q:'/'A:' (问：/答：) labelled text, or headings followed by their answers"
        )
    chunks: list[Chunk] = []
    budget = config.chunk_token_num
    for pair in pairs:
        chinese = is_chinese(pair.question + pair.answer)
        for answer in _answer_parts(pair, budget, count_tokens, chinese):
            chunks.append(Chunk(text=pair_text(pair.question, answer, chinese=chinese), order=len(chunks),
                                positions=list(pair.positions), heading_path=pair.heading_path,
                                method="qa", questions=[pair.question]))
    return chunks


def _answer_parts(pair: Pair, budget: int, count_tokens: Callable[[str], int], chinese: bool) -> list[str]:
    if count_tokens(pair_text(pair.question, pair.answer, chinese=chinese)) <= budget:
        return [pair.answer]
    # A question leaving less than _MIN_ANSWER_BUDGET tokens is indivisible: its parts go over the budget.
    room = max(budget - count_tokens(pair_text(pair.question, "", chinese=chinese)), _MIN_ANSWER_BUDGET)
    parts = naive_chunk([Block(text=pair.answer)], count_tokens=count_tokens, chunk_token_num=room,
                        heading_prefix=False)
    return [p.text for p in parts] or [pair.answer]
