"""One interface for the three extraction methods, a factory by name, and a cost estimate.

=========  ===========================================================  ==============================
method     what                                                         module
=========  ===========================================================  ==============================
offline    no chat model: capitalised noun phrases (English), nouns by  :mod:`.offline`
           jieba's dictionary tags (Chinese), co-occurrence relations
light      chat model, one pass, any entity type, relation keywords     :mod:`.llm_extract`
general    chat model, gleaning rounds, a fixed list of entity types    :mod:`.llm_extract`
=========  ===========================================================  ==============================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ragloom.knowledge.graph.llm import LlmCache, LlmRunner
from ragloom.knowledge.graph.llm_extract import BATCH_TOKENS, MAX_GLEANINGS, LlmExtractor
from ragloom.knowledge.graph.model import ChunkText, ProgressFn, Subgraph
from ragloom.knowledge.graph.offline import OfflineExtractor
from ragloom.knowledge.graph.prompts import CONTINUE_PROMPT, LOOP_PROMPT, extraction_prompt
from ragloom.knowledge.graph.text import CountTokens, rough_tokens
from ragloom.knowledge.toc_llm import make_batches
from ragloom.models.chat import ChatModel
from ragloom.nlp import Analyzer

EXTRACTION_METHODS = ("offline", "light", "general")


@runtime_checkable
class Extractor(Protocol):
    """Turns one document's chunks into its :class:`~ragloom.knowledge.graph.model.Subgraph`.

    ``chunks`` are ``(chunk_id, doc_id, text)`` of one document in reading order (ValueError when they
    span several documents; no chunks give an empty subgraph with ``doc_id`` ``""``). The result is
    deterministic for the same chunks (and, for the chat-model methods, the same replies).
    ``progress(done, total)`` is called as parts finish; an exception it raises (a cancellation) stops
    the extraction and is raised. The chat-model methods raise
    :class:`~ragloom.errors.ModelError` when the model keeps failing.
    """

    method: str

    def extract(self, chunks: Sequence[ChunkText], *, progress: ProgressFn | None = None) -> Subgraph: ...


def make_extractor(
    method: str,
    *,
    chat: ChatModel | None = None,
    runner: LlmRunner | None = None,
    cache: LlmCache | None = None,
    analyzer: Analyzer | None = None,
    max_workers: int = 4,
    **options: object,
) -> Extractor:
    """The extractor of ``method`` (one of :data:`EXTRACTION_METHODS`). ``light``/``general`` need
    ``chat`` or ``runner``; ``offline`` uses ``analyzer``. ``options`` go to the extractor's constructor."""
    if method == "offline":
        return OfflineExtractor(analyzer, **options)  # type: ignore[arg-type]
    if method in ("light", "general"):
        return LlmExtractor(chat, method=method, runner=runner, cache=cache, max_workers=max_workers,
                            **options)  # type: ignore[arg-type]
    raise ValueError(f"unknown knowledge-graph method {method!r}; choose one of {EXTRACTION_METHODS}")


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """What extracting some documents with a chat model may cost, before it starts: batches, the
    fewest and the most calls (gleaning stops early when the model says nothing is missing), and an
    upper bound of the prompt tokens sent (every round re-sends the conversation). Description
    summaries are not counted (they depend on the replies)."""

    batches: int = 0
    min_calls: int = 0
    max_calls: int = 0
    max_prompt_tokens: int = 0

    def __add__(self, other: CostEstimate) -> CostEstimate:
        return CostEstimate(self.batches + other.batches, self.min_calls + other.min_calls,
                            self.max_calls + other.max_calls, self.max_prompt_tokens + other.max_prompt_tokens)


def estimate_cost(
    chunks: Sequence[ChunkText],
    *,
    method: str,
    max_gleanings: int = MAX_GLEANINGS,
    batch_tokens: int = BATCH_TOKENS,
    count_tokens: CountTokens = rough_tokens,
    reply_tokens: int = 500,
) -> CostEstimate:
    """The :class:`CostEstimate` of extracting one document's ``chunks`` with ``method`` (``offline``
    costs nothing). ``reply_tokens``: the assumed length of a reply, re-sent in the next round."""
    if method == "offline" or not chunks:
        return CostEstimate()
    texts = [t for _, _, t in chunks]
    gleanings = max_gleanings if method == "general" else 0
    per_batch_max = 1 + gleanings + max(0, gleanings - 1)
    per_batch_min = 1 + min(gleanings, 1) + (1 if gleanings > 1 else 0)
    overhead = count_tokens(extraction_prompt("", method=method, entity_types=None, language="English"))
    follow = max(count_tokens(CONTINUE_PROMPT), count_tokens(LOOP_PROMPT)) + reply_tokens
    batches = make_batches(texts, count_tokens, batch_tokens)
    tokens = 0
    for batch in batches:
        first = overhead + sum(count_tokens(texts[i]) for i in batch)
        tokens += sum(first + k * follow for k in range(per_batch_max))
    return CostEstimate(len(batches), len(batches) * per_batch_min, len(batches) * per_batch_max, tokens)
