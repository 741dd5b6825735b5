"""An LLM reranker over the configured chat model.

The model sees the query and a numbered batch of passages and is asked for one
line per passage, ``[n] score`` with a score from 0 to 10. Replies are parsed
leniently — ``[2] 7``, ``2: 7``, ``Passage 2 - 7/10``, ``{"2": 7}`` and a bare list
of exactly as many numbers as passages are all understood, and a ``<think>``
block is ignored — and each score is divided by 10.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import numpy as np

from ragloom.errors import ConfigError, ModelError
from ragloom.models.chat import ChatModel, Message

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You judge how relevant passages are to a search query. "
    "Rate every passage from 0 (unrelated) to 10 (directly and completely answers the query). "
    "Reply with exactly one line per passage, in the form [n] score — for example [1] 7 — "
    "in passage order, and nothing else."
)

_NUM = r"(\d{1,3}(?:\.\d+)?)"
_SCORE = r"\s*(?:score\s*[:=]?\s*)?" + _NUM
_PAIR_PATTERNS = (
    re.compile(r"\[\s*(\d{1,3})\s*\]\s*[:=\-–]?" + _SCORE, re.IGNORECASE),
    re.compile(r"(?:\b(?:passage|document|doc|id)\s*#?|#)\s*(\d{1,3})\s*[:=\-–)]" + _SCORE, re.IGNORECASE),
    re.compile(r"^\s*(\d{1,3})\s*(?:[:)=\-–]|\.(?=\s))" + _SCORE, re.MULTILINE | re.IGNORECASE),
    re.compile(r"[\"'](\d{1,3})[\"']\s*:\s*" + _NUM),
)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\w.])" + _NUM + r"(?!\w|\.\d)")


def build_messages(query: str, passages: Sequence[str], max_chars: int) -> list[Message]:
    """The system prompt and one user message listing the passages as ``[1] ...``, ``[2] ...``."""
    lines = [f"Query: {' '.join(query.split())}", "", "Passages:"]
    for i, text in enumerate(passages, start=1):
        flat = " ".join(text.split())
        if len(flat) > max_chars:
            flat = flat[:max_chars] + " ..."
        lines.append(f"[{i}] {flat}")
    lines += ["", f"Rate all {len(passages)} passages, one line each: [n] score (0-10)."]
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


def parse_scores(reply: str, n: int) -> dict[int, float]:
    """``{passage index (0-based): score in [0, 10]}`` for the passages the reply rated.

    Indices outside 1..n are ignored; the first rating of a passage wins; scores
    above 10 are clipped to 10. When no ``index: score`` pair is found but the
    reply holds exactly ``n`` numbers, they are taken in passage order.
    """
    text = _THINK.sub(" ", reply)
    found: dict[int, float] = {}
    paired = False
    for pattern in _PAIR_PATTERNS:
        for m in pattern.finditer(text):
            paired = True
            idx = int(m.group(1))
            if 1 <= idx <= n and idx - 1 not in found:
                found[idx - 1] = min(float(m.group(2)), 10.0)
    if paired:
        return found
    numbers = [float(m.group(1)) for m in _BARE_NUMBER.finditer(text)]
    if len(numbers) == n:
        return {i: min(v, 10.0) for i, v in enumerate(numbers)}
    return {}


class LLMReranker:
    """Asks ``chat`` for a 0–10 relevance per passage, ``batch_size`` passages per request.

    Passages longer than ``max_chars`` characters are cut. A reply in which no
    score can be found raises :class:`ModelError`; passages a reply leaves
    unrated score 0 (logged as a warning). Scores are ``rating / 10``.
    """

    def __init__(self, chat: ChatModel, *, batch_size: int = 8, max_chars: int = 1500) -> None:
        if batch_size < 1:
            raise ConfigError("the llm reranker batch size must be at least 1")
        self.chat = chat
        self.name = f"llm/{chat.name}"
        self.batch_size = batch_size
        self.max_chars = max_chars

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        docs = list(documents)
        out = np.zeros(len(docs), dtype=np.float32)
        for start in range(0, len(docs), self.batch_size):
            batch = docs[start : start + self.batch_size]
            out[start : start + len(batch)] = self._score_batch(query, batch)
        return out

    def _score_batch(self, query: str, batch: list[str]) -> np.ndarray:
        reply = self.chat.chat(build_messages(query, batch, self.max_chars), temperature=0.0)
        found = parse_scores(reply, len(batch))
        if not found:
            raise ModelError(f"the llm reranker {self.name} sent no scores: {' '.join(reply.split())[:200]!r}")
        if len(found) < len(batch):
            log.warning("llm reranker rated %d of %d passages; the rest score 0", len(found), len(batch))
        scores = np.zeros(len(batch), dtype=np.float32)
        for i, value in found.items():
            scores[i] = value / 10.0
        return scores
