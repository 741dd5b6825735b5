"""Rerankers behind one Protocol, chosen by provider name.

No Python package ships cross-encoder weights, so the providers are:

* ``http`` — any service speaking the Jina/Cohere rerank request shape
  (``POST {base_url}/rerank`` with ``{model, query, documents, top_n}``, answered
  with ``{"results": [{"index", "relevance_score"}]}``): Jina, Cohere, vLLM,
  Xinference, TEI's Jina-compatible route;
* ``onnx`` — a local cross-encoder exported to ONNX, loaded from a directory the
  user gives (:mod:`ragloom.models.rerank_onnx`);
* ``llm`` — the configured chat model asked for a 0–10 relevance per passage
  (:mod:`ragloom.models.rerank_llm`).

:data:`rerankers` is a :class:`~ragloom.registry.Registry` of factories taking a
:class:`RerankerSpec`: the built-ins are listed in :mod:`ragloom.plugins`, extensions come
through the entry-point group ``ragloom.rerankers``; :func:`make_reranker` builds the one a
spec names (an unknown provider is a ``ConfigError``: it comes from ``RAGLOOM_RERANK_PROVIDER``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx
import numpy as np

from ragloom.errors import ConfigError, ModelError
from ragloom.models.chat import ChatModel
from ragloom.models.http import api_client, reply_problem
from ragloom.models.scores import sigmoid
from ragloom.registry import Registry

log = logging.getLogger(__name__)

__all__ = [
    "HttpReranker",
    "Reranker",
    "RerankerSpec",
    "make_reranker",
    "rerankers",
]


@runtime_checkable
class Reranker(Protocol):
    """Scores how relevant each document is to a query.

    ``score(query, documents)`` returns a float array with one entry per
    document, in the order given, each in ``[0, 1]`` (higher = more relevant).
    Scores are absolute — a document's score does not depend on the other
    documents of the call — so callers may batch freely. An empty ``documents``
    returns an empty array without calling the model. Raises
    :class:`ragloom.errors.ModelError` when the model fails or cannot be reached.
    ``name`` identifies the model in explanations and evaluations.
    """

    name: str

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray: ...


class HttpReranker:
    """A Jina/Cohere-shaped ``POST {base_url}/rerank`` endpoint.

    Every document of a batch is requested back (``top_n`` = batch size). A
    returned ``relevance_score`` (or ``score``) already in ``[0, 1]`` is kept as
    is; when any score of a response lies outside ``[0, 1]`` the service is
    returning raw logits, and the whole response goes through a sigmoid.
    Documents the service leaves out of its answer score 0. Transport errors,
    non-200 statuses, malformed bodies and out-of-range indices raise
    :class:`ModelError`.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        batch_size: int = 128,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ConfigError("the http reranker needs a base URL and a model name")
        if batch_size < 1:
            raise ConfigError("the http reranker batch size must be at least 1")
        self.model = model
        self.name = f"http/{model}"
        self.batch_size = batch_size
        self._client = api_client(base_url, api_key, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """Relevance in [0, 1] per document; one request per ``batch_size`` documents."""
        docs = list(documents)
        if not docs:
            return np.zeros(0, dtype=np.float32)
        parts = [self._call(query, docs[i : i + self.batch_size]) for i in range(0, len(docs), self.batch_size)]
        return np.concatenate(parts)

    def _call(self, query: str, docs: list[str]) -> np.ndarray:
        body = {"model": self.model, "query": query, "documents": docs, "top_n": len(docs)}
        try:
            resp = self._client.post("/rerank", json=body)
        except httpx.HTTPError as exc:
            raise ModelError(f"rerank endpoint unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ModelError(f"rerank endpoint returned {resp.status_code}: {reply_problem(resp)}")
        try:
            payload = resp.json()
        except ValueError as exc:
            raise ModelError(f"rerank endpoint sent a body that is not JSON: {reply_problem(resp)}") from exc
        return _scores_from_results(payload, len(docs))


def _scores_from_results(payload: Any, n: int) -> np.ndarray:
    """``{"results": [{"index", "relevance_score"}]}`` (or a bare list, or ``score``) -> n scores."""
    results = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(results, list):
        raise ModelError("rerank endpoint sent no results list: not a Jina/Cohere-shaped rerank reply")
    raw = np.zeros(n, dtype=np.float64)
    seen = np.zeros(n, dtype=bool)
    for item in results:
        try:
            idx = int(item["index"])
            value = float(item["relevance_score"] if "relevance_score" in item else item["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError("rerank endpoint sent a malformed result (no index or relevance_score): not a "
                             "Jina/Cohere-shaped rerank reply") from exc
        if not 0 <= idx < n:
            raise ModelError(f"rerank endpoint returned index {idx} for {n} documents")
        raw[idx], seen[idx] = value, True
    if not seen.all():
        log.warning("rerank endpoint scored %d of %d documents; the rest score 0", int(seen.sum()), n)
    if np.any(raw[seen] < 0) or np.any(raw[seen] > 1):
        out = sigmoid(raw)
        out[~seen] = 0.0
        return out
    return raw.astype(np.float32)


# -- registry ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RerankerSpec:
    """What a reranker is built from; each provider reads the fields it needs.

    ``http``: ``base_url``, ``model``, optional ``api_key``. ``onnx``: ``path``
    (the model directory), optional ``threads``. ``llm``: ``chat`` (the
    configured chat model). ``batch_size`` overrides the provider's default.
    """

    provider: str
    model: str = ""
    base_url: str | None = None
    api_key: str | None = None
    path: str | None = None
    chat: ChatModel | None = None
    batch_size: int | None = None
    threads: int | None = None


rerankers: Registry[[RerankerSpec], Reranker] = Registry("reranker provider", "ragloom.rerankers", error=ConfigError)


def make_reranker(spec: RerankerSpec) -> Reranker:
    """Build the reranker ``spec.provider`` names; unknown names raise ConfigError."""
    return rerankers.create(spec.provider, spec)


def _batch(spec: RerankerSpec) -> dict[str, int]:
    return {"batch_size": spec.batch_size} if spec.batch_size else {}


def http_reranker(spec: RerankerSpec) -> Reranker:
    """``http``: a Jina/Cohere-shaped rerank API (``base_url``, ``model``, ``api_key``)."""
    if spec.batch_size:
        return HttpReranker(spec.base_url or "", spec.model, spec.api_key, batch_size=spec.batch_size)
    return HttpReranker(spec.base_url or "", spec.model, spec.api_key)


def onnx_reranker(spec: RerankerSpec) -> Reranker:
    """``onnx``: a local cross-encoder from the directory ``path``."""
    from ragloom.models.rerank_onnx import OnnxCrossEncoder

    if not spec.path:
        raise ConfigError("the onnx reranker needs the path of a model directory")
    return OnnxCrossEncoder(spec.path, threads=spec.threads, **_batch(spec))


def llm_reranker(spec: RerankerSpec) -> Reranker:
    """``llm``: the configured chat model asked for a relevance per passage."""
    from ragloom.models.rerank_llm import LLMReranker

    if spec.chat is None:
        raise ConfigError("the llm reranker needs a configured chat model")
    return LLMReranker(spec.chat, **_batch(spec))
