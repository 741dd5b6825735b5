"""Summaries of one cluster: by the chat model, or extractive (no model: the sentences nearest the centre).

Both take the cluster's texts and vectors and return one text; :meth:`summarize_many` does a layer's
clusters at once (the chat model's calls ``workers`` at a time, the extractive one's sentences embedded
in one batch) and reports each finished cluster to ``progress`` *from the calling thread*, so a
checkpoint there (cancel, the worker stopping) can stop the layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ragloom.errors import ModelError
from ragloom.models.chat import ChatModel, Message
from ragloom.schemas.builds import PROMPT_SLOT

CountTokens = Callable[[str], int]
Progress = Callable[[int, int], None]
"""``progress(done, total)`` after each cluster; it may raise to stop."""

PROMPT_OVERHEAD = 64  # tokens kept for the chat template around the prompt
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


@dataclass(frozen=True, slots=True)
class Cluster:
    """What is summarised: the members' texts (in reading order) and their vectors (rows)."""

    texts: tuple[str, ...]
    vectors: np.ndarray


class Summarizer(Protocol):
    """Turns clusters into summary texts. ``built_by`` labels what it writes (stored on each summary)."""

    built_by: str

    def summarize_many(self, clusters: Sequence[Cluster], progress: Progress) -> list[str]: ...


def clip(text: str, count_tokens: CountTokens, budget: int) -> str:
    """``text`` cut to about ``budget`` tokens (by its share of characters)."""
    n = count_tokens(text)
    return text if n <= budget else text[: max(1, len(text) * budget // max(1, n))]


class LlmSummarizer:
    """The chat model writes each summary (REFERENCE §8): the prompt holds the cluster's texts, each cut to
    ``(context − max_token − prompt) / k`` tokens; the reply is at most ``max_token`` tokens. ``workers``
    bounds the calls in flight (the chat model may bound them further, :mod:`ragloom.service.builds.llm_cache`)."""

    def __init__(self, chat: ChatModel, *, prompt: str, max_token: int, context_tokens: int,
                 count_tokens: CountTokens, workers: int = 4) -> None:
        self.chat = chat
        self.prompt = prompt
        self.max_token = max_token
        self.count_tokens = count_tokens
        self.workers = max(1, workers)
        self.budget = budget(context_tokens, max_token, prompt, count_tokens)
        self.built_by = f"raptor:llm:{chat.name}"

    def messages(self, texts: Sequence[str]) -> list[Message]:
        """The call that summarises ``texts`` (used for the cost estimate and the cache keys too)."""
        share = max(16, self.budget // max(1, len(texts)))
        content = "\n\n".join(clip(t.strip(), self.count_tokens, share) for t in texts)
        return [{"role": "user", "content": self.prompt.replace(PROMPT_SLOT, content)}]

    def summarize(self, texts: Sequence[str]) -> str:
        reply = self.chat.chat(self.messages(texts), temperature=0.0, max_tokens=self.max_token)
        text = _THINK.sub("", reply).strip()
        if not text:
            raise ModelError(f"the chat model {self.chat.name!r} answered a summary request with nothing")
        return text

    def summarize_many(self, clusters: Sequence[Cluster], progress: Progress) -> list[str]:
        total = len(clusters)
        if total == 0:
            return []
        out: list[str | None] = [None] * total
        with ThreadPoolExecutor(max_workers=min(self.workers, total), thread_name_prefix="raptor-llm") as pool:
            futures: dict[Future[str], int] = {pool.submit(self.summarize, c.texts): i for i, c in enumerate(clusters)}
            pending = set(futures)
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        out[futures[f]] = f.result()  # raises the call's error
                    progress(total - len(pending), total)
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
        return [t or "" for t in out]


def budget(context_tokens: int, max_token: int, prompt: str, count_tokens: CountTokens) -> int:
    """Tokens of cluster text one summary call may hold."""
    instructions = count_tokens(prompt.replace(PROMPT_SLOT, ""))
    return max(256, context_tokens - max_token - instructions - PROMPT_OVERHEAD)


class ExtractiveSummarizer:
    """No chat model: a cluster's summary is its sentences nearest the cluster's centre (the mean of its
    members' vectors), by the knowledge base's own embedder, up to ``max_token`` tokens, in reading
    order. Labelled ``raptor:extractive``: nothing is written that the documents do not say."""

    built_by = "raptor:extractive"

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray], split_sentences: Callable[[str], list[str]],
                 *, max_token: int, count_tokens: CountTokens) -> None:
        self.embed = embed
        self.split_sentences = split_sentences
        self.max_token = max_token
        self.count_tokens = count_tokens

    def _sentences(self, texts: Sequence[str]) -> list[str]:
        seen: dict[str, None] = {}
        for text in texts:
            for s in self.split_sentences(text):
                s = " ".join(s.split())
                if len(s) >= 3:
                    seen.setdefault(s)
        return list(seen)

    def summarize_many(self, clusters: Sequence[Cluster], progress: Progress) -> list[str]:
        sentences = [self._sentences(c.texts) for c in clusters]
        flat = [s for group in sentences for s in group]
        vectors = self.embed(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        out, at = [], 0
        for c, group in zip(clusters, sentences, strict=True):
            rows = vectors[at : at + len(group)]
            at += len(group)
            out.append(self._pick(c, group, rows))
        progress(len(clusters), len(clusters))
        return out

    def _pick(self, cluster: Cluster, sentences: list[str], vectors: np.ndarray) -> str:
        if not sentences:
            return clip(" ".join(" ".join(t.split()) for t in cluster.texts), self.count_tokens, self.max_token)
        centre = np.asarray(cluster.vectors, dtype=np.float32).mean(axis=0)
        centre = centre / (np.linalg.norm(centre) or 1.0)
        ranked = np.argsort(-(vectors @ centre), kind="stable")
        chosen: list[int] = []
        used = 0
        for i in ranked:
            n = self.count_tokens(sentences[i])
            if chosen and used + n > self.max_token:
                continue
            chosen.append(int(i))
            used += n
            if used >= self.max_token:
                break
        while len(chosen) > 1 and self.count_tokens(" ".join(sentences[i] for i in sorted(chosen))) > self.max_token:
            chosen.pop()  # the least central one
        return clip(" ".join(sentences[i] for i in sorted(chosen)), self.count_tokens, self.max_token)
