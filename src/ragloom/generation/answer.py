"""Answer a question from evidence: with a chat model (cited, verified) or extractively.

LLM path: prompt (evidence within the token budget) → chat → strip
``<think>…</think>`` → repair marker formats → check numbers → insert markers
by similarity when the model cited nothing → verify every citation.
Without a chat model the answer is extractive (:mod:`ragloom.generation.extractive`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ragloom.dataflow import Answer, Evidence
from ragloom.generation.citations import (
    check_citations,
    insert_citations,
    repair_citation_formats,
    verify_citations,
)
from ragloom.generation.extractive import (
    DEFAULT_EMPTY_RESPONSE,
    EXTRACTIVE_MODE,
    EXTRACTIVE_MODEL,
    extractive_answer,
    refusal,
)
from ragloom.generation.prompt import DEFAULT_SYSTEM_PROMPT, CountTokens, Prompt, build_prompt
from ragloom.generation.scoring import SimilarityScorer, TermSimilarity
from ragloom.generation.sentences import MARKER
from ragloom.generation.thresholds import INSERT_MIN_SCORE
from ragloom.models.chat import ChatModel, Sampling, finish_reason
from ragloom.models.embedding import Embedder
from ragloom.nlp import Analyzer

UNSUPPORTED_NOTE = (
    "Note: the cited documents do not appear to support this answer; check the sources before relying on it."
)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_OPEN, _CLOSE = "<think>", "</think>"


def strip_think(text: str) -> str:
    """``text`` without reasoning sections (``<think>…</think>``, also unclosed or
    with the opening tag missing)."""
    if _CLOSE in text and _OPEN not in text.split(_CLOSE, 1)[0]:
        text = text.rsplit(_CLOSE, 1)[1]
    return _THINK.sub("", text).strip()


def finish_answer(raw: str, prompt: Prompt, scorer: SimilarityScorer, model: str, *,
                  truncated: bool = False) -> Answer:
    """Turn a model's raw reply into an :class:`Answer` (repair, check, insert, verify);
    ``truncated``: the model stopped at its token limit."""
    text = check_citations(repair_citation_formats(strip_think(raw)), prompt.valid_ids)
    model_cited = bool(MARKER.search(text))
    if not model_cited:
        text = insert_citations(text, prompt.evidence, scorer=scorer, min_score=INSERT_MIN_SCORE)
    result = verify_citations(text, prompt.evidence, scorer=scorer, inserted=not model_cited)
    text = result.text
    if result.insufficient and model_cited:
        text = f"{text.rstrip()}\n\n{UNSUPPORTED_NOTE}"
    cited = {int(n) for n in MARKER.findall(text)}
    references = sorted((ev for ev in prompt.evidence if ev.index in cited), key=lambda e: e.index)
    return Answer(
        text=text,
        model=model,
        references=references,
        citations=result.citations,
        sentences=result.sentences,
        insufficient=result.insufficient,
        mode="model",
        truncated=truncated,
    )


def _prepare(
    question: str,
    evidence: Sequence[Evidence],
    count_tokens: CountTokens,
    max_context_tokens: int,
    answer_tokens: int,
    system_prompt: str,
) -> Prompt:
    return build_prompt(
        question,
        evidence,
        count_tokens=count_tokens,
        max_context_tokens=max_context_tokens,
        answer_tokens=answer_tokens,
        system_prompt=system_prompt,
    )


def generate_answer(
    question: str,
    evidence: Sequence[Evidence],
    *,
    embedder: Embedder | None,
    chat_model: ChatModel | None,
    count_tokens: CountTokens,
    max_context_tokens: int = 8192,
    answer_tokens: int = 1024,
    term_similarity: TermSimilarity | None = None,
    temperature: float = 0.1,
    sampling: Sampling | None = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    empty_response: str = DEFAULT_EMPTY_RESPONSE,
    analyzer: Analyzer | None = None,
) -> Answer:
    """Answer ``question`` from ``evidence`` (ordered best first).

    ``analyzer``: the searched knowledge bases' (:meth:`ragloom.nlp.languages.Analyzers.for_query`); an
    extractive answer reads the evidence with it, and a language with its own analyser gets the default
    ``empty_response`` in that language (None: the Chinese and English analysis, English words).
    No evidence → ``empty_response`` with ``insufficient=True``. No chat model →
    an extractive answer. Otherwise the chat model answers from the evidence that
    fits the budget (``max_context_tokens`` minus ``answer_tokens`` for the
    reply) and its citations are repaired, checked, inserted and verified.
    Raises ModelError when the chat model fails, InvalidRequestError when the
    question alone does not fit the context.
    """
    if not evidence:  # in the knowledge bases' language when it has its own analyser (and the text is the default)
        empty_response = refusal(analyzer.language if analyzer is not None else "", empty_response)
        return Answer(empty_response, chat_model.name if chat_model else EXTRACTIVE_MODEL, insufficient=True,
                      mode="model" if chat_model else EXTRACTIVE_MODE)
    scorer = SimilarityScorer(embedder, term_similarity)
    if chat_model is None:
        return extractive_answer(question, evidence, scorer, empty_response=empty_response, analyzer=analyzer)
    prompt = _prepare(question, evidence, count_tokens, max_context_tokens, answer_tokens, system_prompt)
    raw = chat_model.chat(prompt.messages, temperature=temperature, max_tokens=answer_tokens, sampling=sampling)
    return finish_answer(raw, prompt, scorer, chat_model.name, truncated=finish_reason(raw) == "length")


class _ThinkFilter:
    """Drops a leading ``<think>…</think>`` section from a stream of deltas."""

    def __init__(self) -> None:
        self.state = "start"  # start -> think -> after -> pass, or start -> pass
        self.buffer = ""

    def feed(self, delta: str) -> str:
        if self.state == "pass":
            return delta
        self.buffer += delta
        if self.state == "start":
            head = self.buffer.lstrip()
            if head.startswith(_OPEN):
                self.state = "think"
            elif _OPEN.startswith(head):
                return ""
            else:
                self.state, out, self.buffer = "pass", self.buffer, ""
                return out
        if self.state == "think":
            if _CLOSE not in self.buffer:
                return ""
            self.buffer = self.buffer.split(_CLOSE, 1)[1]
            self.state = "after"
        out = self.buffer.lstrip()
        self.buffer = ""
        if out:
            self.state = "pass"
        return out

    def flush(self) -> str:
        return self.buffer if self.state == "start" else ""


def stream_answer(
    question: str,
    evidence: Sequence[Evidence],
    *,
    embedder: Embedder | None,
    chat_model: ChatModel | None,
    count_tokens: CountTokens,
    max_context_tokens: int = 8192,
    answer_tokens: int = 1024,
    term_similarity: TermSimilarity | None = None,
    temperature: float = 0.1,
    sampling: Sampling | None = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    empty_response: str = DEFAULT_EMPTY_RESPONSE,
    analyzer: Analyzer | None = None,
) -> Iterator[str | Answer]:
    """Like :func:`generate_answer`, but yields the reply's text deltas as they arrive
    (reasoning sections left out), then the final :class:`Answer` as the last item.

    The final answer's text replaces the streamed text: markers may have been
    repaired, dropped, inserted or removed by verification.
    """
    if chat_model is None or not evidence:
        answer = generate_answer(
            question,
            evidence,
            embedder=embedder,
            chat_model=chat_model,
            count_tokens=count_tokens,
            term_similarity=term_similarity,
            empty_response=empty_response,
            analyzer=analyzer,
        )
        yield answer.text
        yield answer
        return
    scorer = SimilarityScorer(embedder, term_similarity)
    prompt = _prepare(question, evidence, count_tokens, max_context_tokens, answer_tokens, system_prompt)
    parts: list[str] = []
    visible = _ThinkFilter()
    reason: str | None = None
    for delta in chat_model.stream(prompt.messages, temperature=temperature, max_tokens=answer_tokens,
                                   sampling=sampling):
        reason = finish_reason(delta) or reason
        parts.append(delta)
        out = visible.feed(delta)
        if out:
            yield out
    tail = visible.flush()
    if tail:
        yield tail
    yield finish_answer("".join(parts), prompt, scorer, chat_model.name, truncated=reason == "length")
