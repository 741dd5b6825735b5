"""Chat-model calls of the knowledge builds (RAPTOR, and the graph and chunk enrichment next): cached in
the metadata DB, retried, bounded in concurrency, counted.

* :class:`LlmCache` keeps a workspace's replies in the ``llm_cache`` table by :func:`cache_key`, the
  SHA-256 of the model's identity (its endpoint and name), the messages and the call's parameters. A
  re-run of a build that stopped, or a rebuild with the same model and prompts, is answered from it and
  costs nothing. It has ``get``/``put`` by key, so any runner that wants a cache can use it (the graph
  builder's ``LlmCache`` protocol is the same two methods).
* :class:`CachedChat` is a :class:`~ragloom.models.chat.ChatModel` that looks each call up first, else
  calls the model with at most ``max_concurrency`` calls in flight, retrying a
  :class:`~ragloom.errors.ModelError` ``retries`` times with back-off, stores the reply and counts what it
  did (:class:`LlmUsage`). Streams are passed through uncached.

The cache is never pruned by age: its rows go with their workspace. A build's cost report
(``stats``) says how many calls it answered from here.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ragloom.context import Context
from ragloom.db.models import LlmCacheEntry
from ragloom.db.session import Database
from ragloom.errors import ModelError
from ragloom.models.chat import ChatModel, Message, Sampling
from ragloom.service.accounts import workspace_models


def cache_key(model: str, messages: Sequence[Message], **params: object) -> str:
    """SHA-256 (hex) of the model identity, the messages and the call's parameters."""
    payload = json.dumps([model, [dict(m) for m in messages], params], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LlmCache:
    """A workspace's chat replies by key, in the metadata DB (safe from several threads and processes)."""

    def __init__(self, db: Database, tenant_id: str, *, model: str = "") -> None:
        self.db = db
        self.tenant_id = tenant_id
        self.model = model

    def get(self, key: str) -> str | None:
        with self.db.session() as s:
            return s.scalar(select(LlmCacheEntry.reply).where(LlmCacheEntry.tenant_id == self.tenant_id,
                                                              LlmCacheEntry.key == key))

    def get_many(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        found: set[str] = set()
        with self.db.session() as s:
            for i in range(0, len(keys), 500):
                found.update(s.scalars(select(LlmCacheEntry.key).where(
                    LlmCacheEntry.tenant_id == self.tenant_id, LlmCacheEntry.key.in_(keys[i : i + 500]))))
        return found

    def put(self, key: str, value: str) -> None:
        """Store a reply; a key stored meanwhile by another thread or process keeps its reply."""
        try:
            with self.db.session() as s:
                if s.get(LlmCacheEntry, (self.tenant_id, key)) is None:
                    s.add(LlmCacheEntry(tenant_id=self.tenant_id, key=key, model=self.model[:200], reply=value))
        except IntegrityError:
            pass


@dataclass(slots=True)
class LlmUsage:
    """What a :class:`CachedChat` did: calls that reached the model, calls answered from the cache,
    retries after a failure, and the prompt and reply tokens of the calls that reached the model."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class CachedChat:
    """A chat model behind the cache, a concurrency bound and retries (see the module docstring)."""

    def __init__(self, inner: ChatModel, cache: LlmCache, *, identity: str, max_concurrency: int = 4,
                 retries: int = 2, backoff: float = 1.0, count_tokens: Callable[[str], int] = rough_tokens) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache = cache
        self.identity = identity
        self.retries = max(0, retries)
        self.backoff = backoff
        self.count_tokens = count_tokens
        self.usage = LlmUsage()
        self._slots = threading.BoundedSemaphore(max(1, max_concurrency))
        self._lock = threading.Lock()

    def key(self, messages: Sequence[Message], *, temperature: float = 0.1, max_tokens: int | None = None,
            sampling: Sampling | None = None) -> str:
        """The cache key of a call."""
        return cache_key(self.identity, messages, temperature=temperature, max_tokens=max_tokens,
                         sampling=asdict(sampling) if sampling is not None else None)

    def chat(self, messages: Sequence[Message], *, temperature: float = 0.1, max_tokens: int | None = None,
             sampling: Sampling | None = None) -> str:
        key = self.key(messages, temperature=temperature, max_tokens=max_tokens, sampling=sampling)
        hit = self.cache.get(key)
        if hit is not None:
            with self._lock:
                self.usage.cache_hits += 1
            return hit
        with self._slots:
            reply = self._call(messages, temperature, max_tokens, sampling)
        self.cache.put(key, reply)
        return reply

    def _call(self, messages: Sequence[Message], temperature: float, max_tokens: int | None,
              sampling: Sampling | None) -> str:
        attempt = 0
        while True:
            try:
                reply = str(self.inner.chat(messages, temperature=temperature, max_tokens=max_tokens,
                                            sampling=sampling))
            except ModelError:
                if attempt >= self.retries:
                    raise
                with self._lock:
                    self.usage.retries += 1
                time.sleep(self.backoff * 2**attempt)
                attempt += 1
                continue
            with self._lock:
                self.usage.calls += 1
                self.usage.prompt_tokens += sum(self.count_tokens(m.get("content", "")) for m in messages)
                self.usage.completion_tokens += self.count_tokens(reply)
            return reply

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.1, max_tokens: int | None = None,
               sampling: Sampling | None = None) -> Iterator[str]:
        return self.inner.stream(messages, temperature=temperature, max_tokens=max_tokens, sampling=sampling)


def model_identity(ctx: Context, tenant_id: str) -> str:
    """What identifies a workspace's chat model in cache keys: its endpoint and its name."""
    with ctx.db.session() as s:
        row = workspace_models.find(s, tenant_id, workspace_models.ProviderKind.CHAT)
        if row is not None:
            return f"{row.base_url}|{row.model}"
    settings = ctx.settings
    return f"{settings.chat_provider}|{settings.chat_base_url or ''}|{settings.chat_model or ''}"


def cached_chat(ctx: Context, tenant_id: str, *, count_tokens: Callable[[str], int] = rough_tokens,
                max_concurrency: int | None = None, backoff: float = 1.0) -> CachedChat | None:
    """The workspace's chat model behind its cache (None when it has no chat model); at most
    ``max_concurrency`` calls in flight (default: ``settings.llm_concurrency``)."""
    chat = workspace_models.chat_model(ctx, tenant_id)
    if chat is None:
        return None
    identity = model_identity(ctx, tenant_id)
    return CachedChat(chat, LlmCache(ctx.db, tenant_id, model=chat.name), identity=identity,
                      max_concurrency=max_concurrency or ctx.settings.llm_concurrency, backoff=backoff,
                      count_tokens=count_tokens)
