"""Prompt assembly: numbered evidence blocks within a token budget, plus citation rules.

Evidence block format (one per chunk, joined by ``\\n\\n------\\n\\n``)::

    ID: 3
    ├── Title: handbook.pdf
    └── Content:
    <chunk text>

Unlike the reference system, the chunk that would cross the budget is *not*
kept; but at least one chunk always is, truncated to fit when necessary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragloom.dataflow import Evidence
from ragloom.errors import InvalidRequestError

CountTokens = Callable[[str], int]

BLOCK_SEPARATOR = "\n\n------\n\n"
KNOWLEDGE_PLACEHOLDER = "{knowledge}"
MESSAGE_OVERHEAD = 4  # role and framing tokens per chat message, roughly
SAFETY = 0.97  # the counting tokenizer may differ from the chat model's
MIN_EVIDENCE_TOKENS = 16

DEFAULT_SYSTEM_PROMPT = """\
You answer questions using a set of numbered documents from a knowledge base.

Rules for the answer:
- Use only what the documents below say. If they do not contain the answer, say plainly \
that the documents do not contain enough information; do not guess or fill gaps from memory.
- Answer in the language of the question, concisely, and quote facts (numbers, names, \
dates) exactly as the documents give them.

Rules for citations:
- Back every statement taken from a document with a marker [ID:n], where n is the number \
after "ID:" at the top of that document.
- Put the marker at the end of the sentence, just before its final punctuation mark, \
e.g. "The warranty lasts two years [ID:2]."
- Write one marker per source, side by side when a sentence uses several: [ID:1][ID:4]. \
Never put several numbers in one marker, and use no more than 4 markers in a sentence.
- Cite only numbers that appear below; never invent a number or cite a document that \
does not say what you wrote.
- Cite facts that need backing: figures, dates, definitions, causes and effects, \
comparisons, who said or decided what, forecasts, and anything disputed. Common \
knowledge and your own connecting words need no marker.
- Do not change what a document says to fit a citation.

Documents:
{knowledge}
"""


@dataclass(slots=True)
class Prompt:
    """The messages to send and the evidence they contain (the valid citation targets)."""

    messages: list[dict[str, str]]
    evidence: list[Evidence] = field(default_factory=list)
    knowledge_tokens: int = 0
    truncated: bool = False  # the single kept chunk was cut to fit

    @property
    def valid_ids(self) -> set[int]:
        return {ev.index for ev in self.evidence}


def format_evidence(ev: Evidence, content: str | None = None) -> str:
    """One evidence block as the model sees it."""
    text = ev.content if content is None else content
    return f"ID: {ev.index}\n├── Title: {ev.document_name}\n└── Content:\n{text}"


def join_blocks(blocks: Sequence[str]) -> str:
    return BLOCK_SEPARATOR.join(blocks)


def _truncate_to(ev: Evidence, budget: int, count_tokens: CountTokens) -> str:
    """The longest prefix of ``ev.content`` whose block fits in ``budget`` tokens."""
    lo, hi = 0, len(ev.content)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(format_evidence(ev, ev.content[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return format_evidence(ev, ev.content[:lo])


def select_evidence(
    evidence: Sequence[Evidence], budget: int, count_tokens: CountTokens
) -> tuple[list[Evidence], list[str], bool]:
    """Keep evidence in order while the joined blocks fit in ``budget`` tokens.

    Returns the kept evidence, their blocks, and whether the first block was
    truncated (only when even it alone does not fit).
    """
    kept: list[Evidence] = []
    blocks: list[str] = []
    for ev in evidence:
        candidate = format_evidence(ev)
        if count_tokens(join_blocks([*blocks, candidate])) > budget:
            break
        kept.append(ev)
        blocks.append(candidate)
    if kept or not evidence:
        return kept, blocks, False
    first = evidence[0]
    return [first], [_truncate_to(first, budget, count_tokens)], True


def build_prompt(
    question: str,
    evidence: Sequence[Evidence],
    *,
    count_tokens: CountTokens,
    max_context_tokens: int = 8192,
    answer_tokens: int = 1024,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
) -> Prompt:
    """System message with the evidence inserted at ``{knowledge}`` (appended when the
    template lacks it) and the question as the user message.

    The evidence budget is what remains of ``max_context_tokens`` after the
    template, the question, message framing and ``answer_tokens`` for the reply,
    times 0.97. Raises InvalidRequestError when the question alone leaves no room.
    """
    template = system_prompt
    if KNOWLEDGE_PLACEHOLDER not in template:
        template = f"{template.rstrip()}\n\nDocuments:\n{KNOWLEDGE_PLACEHOLDER}\n"
    fixed = count_tokens(template.replace(KNOWLEDGE_PLACEHOLDER, "")) + count_tokens(question) + 2 * MESSAGE_OVERHEAD
    budget = int((max_context_tokens - answer_tokens - fixed) * SAFETY)
    if budget < MIN_EVIDENCE_TOKENS:
        raise InvalidRequestError(
            f"the question and instructions need {fixed} tokens, too many for a context "
            f"of {max_context_tokens} with {answer_tokens} reserved for the answer"
        )
    kept, blocks, truncated = select_evidence(evidence, budget, count_tokens)
    knowledge = join_blocks(blocks)
    system = template.replace(KNOWLEDGE_PLACEHOLDER, knowledge)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return Prompt(messages, kept, count_tokens(knowledge), truncated)


def count_message_tokens(messages: Sequence[dict[str, str]], count_tokens: CountTokens) -> int:
    """Tokens of a message list, framing included (an estimate of what the model sees)."""
    return sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD for m in messages)
