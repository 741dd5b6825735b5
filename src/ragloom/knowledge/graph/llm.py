"""Chat-model calls of the graph builders: cached, retried, bounded in concurrency, counted.

* :class:`LlmCache` is what the runner needs of a cache (``get``/``put`` of strings by key); the job
  layer may back it with its database. :class:`MemoryLlmCache` keeps replies in memory and turns
  into a JSON-able dict and back.
* :func:`llm_cache_key` is the SHA-256 of the model's name, the messages and the call's parameters,
  so a re-run of a build (same model, same prompts) is answered from the cache and costs nothing.
* :class:`LlmRunner` asks the chat model (through the project's :class:`~ragloom.models.chat.ChatModel`
  protocol) with retries and back-off on :class:`~ragloom.errors.ModelError`, counts calls, cache hits
  and rough tokens (:class:`LlmUsage`), and maps work over a small thread pool (``max_workers``) with
  results in input order.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, fields
from typing import Protocol, TypeVar, runtime_checkable

from ragloom.errors import ModelError
from ragloom.knowledge.graph.model import ProgressFn
from ragloom.knowledge.graph.text import CountTokens, rough_tokens
from ragloom.models.chat import ChatModel

T = TypeVar("T")
R = TypeVar("R")
Message = Mapping[str, str]


@runtime_checkable
class LlmCache(Protocol):
    """Replies of the chat model by :func:`llm_cache_key`. ``get`` returns None for an unknown key;
    ``put`` stores (or replaces) a reply. Both may be called from several threads at once."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


class MemoryLlmCache:
    """An in-memory :class:`LlmCache`; ``to_dict``/``from_dict`` persist it as JSON."""

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        self._items: dict[str, str] = dict(items or {})
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: str, value: str) -> None:
        with self._lock:
            self._items[key] = value

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def to_dict(self) -> dict[str, str]:
        with self._lock:
            return dict(sorted(self._items.items()))

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> MemoryLlmCache:
        return cls({str(k): str(v) for k, v in data.items()})


def llm_cache_key(model: str, messages: Sequence[Message], **params: object) -> str:
    """SHA-256 (hex) of the model's name, the messages and the parameters of a call."""
    payload = json.dumps([model, [dict(m) for m in messages], params], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class LlmUsage:
    """What the runner did: calls that reached the model, calls answered from the cache, retries after
    a failure, and rough token counts of the prompts sent and replies received."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}


class LlmRunner:
    """Calls ``chat`` for the graph builders. ``cache`` defaults to a fresh :class:`MemoryLlmCache`;
    ``max_workers`` bounds the calls in flight in :meth:`map`; a failed call is tried ``retries`` more
    times, ``backoff`` × 2ⁿ seconds apart, before its :class:`ModelError` is raised. ``model_id`` names the
    model in cache keys (default: ``chat.name``; give the endpoint too when several share a cache)."""

    def __init__(
        self,
        chat: ChatModel,
        *,
        cache: LlmCache | None = None,
        max_workers: int = 4,
        retries: int = 2,
        backoff: float = 0.5,
        temperature: float = 0.0,
        count_tokens: CountTokens = rough_tokens,
        model_id: str | None = None,
    ) -> None:
        self.chat = chat
        self.model_id = model_id
        self.cache: LlmCache = cache if cache is not None else MemoryLlmCache()
        self.max_workers = max(1, max_workers)
        self.retries = max(0, retries)
        self.backoff = backoff
        self.temperature = temperature
        self.count_tokens = count_tokens
        self.usage = LlmUsage()
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        """The model's identity in cache keys: ``model_id`` when given (e.g. endpoint + name), else its name."""
        return self.model_id or str(getattr(self.chat, "name", "") or type(self.chat).__name__)

    def ask(self, messages: Sequence[Message], *, max_tokens: int | None = None,
            tally: LlmUsage | None = None) -> str:
        """The model's reply to ``messages`` (from the cache when this call was made before). The call is
        counted in :attr:`usage` and, when given, in ``tally`` too (one extraction's own count)."""
        key = llm_cache_key(self.model_name, messages, temperature=self.temperature, max_tokens=max_tokens)
        hit = self.cache.get(key)
        if hit is not None:
            with self._lock:
                for usage in (self.usage, tally):
                    if usage is not None:
                        usage.cache_hits += 1
            return hit
        reply = self._call(messages, max_tokens, tally)
        self.cache.put(key, reply)
        return reply

    def ask_text(self, prompt: str, *, max_tokens: int | None = None, tally: LlmUsage | None = None) -> str:
        """:meth:`ask` with one user message."""
        return self.ask([{"role": "user", "content": prompt}], max_tokens=max_tokens, tally=tally)

    def _call(self, messages: Sequence[Message], max_tokens: int | None, tally: LlmUsage | None) -> str:
        attempt = 0
        while True:
            try:
                reply = str(self.chat.chat(messages, temperature=self.temperature, max_tokens=max_tokens))
            except ModelError:
                if attempt >= self.retries:
                    raise
                with self._lock:
                    for usage in (self.usage, tally):
                        if usage is not None:
                            usage.retries += 1
                time.sleep(self.backoff * 2**attempt)
                attempt += 1
                continue
            prompt_tokens = sum(self.count_tokens(m.get("content", "")) for m in messages)
            completion_tokens = self.count_tokens(reply)
            with self._lock:
                for usage in (self.usage, tally):
                    if usage is not None:
                        usage.calls += 1
                        usage.prompt_tokens += prompt_tokens
                        usage.completion_tokens += completion_tokens
            return reply

    def map(self, fn: Callable[[T], R], items: Sequence[T], progress: ProgressFn | None = None) -> list[R]:
        """``[fn(item) for item in items]`` with at most ``max_workers`` running at once, results in the
        order of ``items``. The first exception (from ``fn`` or from ``progress``) cancels the items not
        started yet and is raised."""
        total = len(items)
        if total == 0:
            return []
        if self.max_workers == 1 or total == 1:
            out: list[R] = []
            for i, item in enumerate(items):
                out.append(fn(item))
                if progress:
                    progress(i + 1, total)
            return out
        with ThreadPoolExecutor(max_workers=min(self.max_workers, total), thread_name_prefix="graph-llm") as pool:
            futures = [pool.submit(fn, item) for item in items]
            try:
                for done, _ in enumerate(_as_finished(futures), start=1):
                    if progress:
                        progress(done, total)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
            return [f.result() for f in futures]


def _as_finished(futures: list[Future[R]]) -> Iterator[Future[R]]:
    """Yields futures as they finish; raises the first exception met."""
    order = {id(f): i for i, f in enumerate(futures)}
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_EXCEPTION)
        for f in sorted(done, key=lambda f: order[id(f)]):
            f.result()  # raises the worker's exception
            yield f
