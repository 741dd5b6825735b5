"""The HTTP reranker against the fake server's real ``/v1/rerank`` route (Jina/Cohere shape)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragloom.errors import ConfigError, ModelError
from ragloom.models import rerank
from ragloom.models.rerank import (
    HttpReranker,
    Reranker,
    RerankerSpec,
    make_reranker,
    rerankers,
    sigmoid,
)
from tests.fakes.openai_server import FakeOpenAIServer, rerank_score

QUERY = "solar panel battery storage"
DOCS = [
    "The cat sleeps on the sofa.",
    "Battery storage smooths solar panel output.",
    "Solar panel prices fell again.",
    "Grid battery storage for wind farms.",
    "A recipe for lemon cake.",
]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def test_scores_come_back_in_document_order_over_the_wire(server: FakeOpenAIServer) -> None:
    reranker = HttpReranker(server.base_url, "fake-rerank", api_key="sk-test", batch_size=2)
    assert isinstance(reranker, Reranker) and reranker.name == "http/fake-rerank"
    scores = reranker.score(QUERY, DOCS)
    assert scores.dtype == np.float32
    assert np.allclose(scores, [rerank_score(QUERY, d) for d in DOCS], atol=1e-6)
    assert int(np.argmax(scores)) == 1 and scores[0] == pytest.approx(0.0)
    calls = [r for r in server.requests if r.path == "/v1/rerank"]
    assert len(calls) == 3  # 5 documents, 2 per request
    assert calls[0].body == {"model": "fake-rerank", "query": QUERY, "documents": DOCS[:2], "top_n": 2}
    assert calls[2].body["documents"] == DOCS[4:]
    assert calls[0].headers["Authorization"] == "Bearer sk-test"


def test_no_documents_sends_no_request(server: FakeOpenAIServer) -> None:
    assert HttpReranker(server.base_url, "m").score(QUERY, []).shape == (0,)
    assert server.requests == []


def test_failures_raise_model_errors(server: FakeOpenAIServer) -> None:
    reranker = HttpReranker(server.base_url, "m")
    server.fail_next(503, '{"error": "overloaded"}')
    with pytest.raises(ModelError, match="503"):
        reranker.score(QUERY, DOCS)
    server.fail_next(200, "<html>proxy page</html>")
    with pytest.raises(ModelError, match="not JSON"):
        reranker.score(QUERY, DOCS)
    server.fail_next(200, json.dumps({"data": []}))
    with pytest.raises(ModelError, match="no results"):
        reranker.score(QUERY, DOCS)
    server.fail_next(200, json.dumps({"results": [{"index": 9, "relevance_score": 0.5}]}))
    with pytest.raises(ModelError, match="index 9"):
        reranker.score(QUERY, DOCS[:2])
    server.fail_next(200, json.dumps({"results": [{"index": 0}]}))
    with pytest.raises(ModelError, match="malformed"):
        reranker.score(QUERY, DOCS[:2])
    with pytest.raises(ModelError, match="unreachable"):
        HttpReranker("http://127.0.0.1:9/v1", "m", timeout=2).score(QUERY, DOCS)


def test_logits_are_squashed_and_left_out_documents_score_zero(server: FakeOpenAIServer) -> None:
    reranker = HttpReranker(server.base_url, "m")
    logits = [{"index": 2, "relevance_score": 3.0}, {"index": 0, "relevance_score": -1.5}]
    server.fail_next(200, json.dumps({"results": logits}))
    scores = reranker.score(QUERY, DOCS[:3])
    assert np.allclose(scores, [sigmoid(np.array([-1.5]))[0], 0.0, sigmoid(np.array([3.0]))[0]])
    server.fail_next(200, json.dumps([{"index": 1, "score": 0.25}]))  # TEI-style bare list with "score"
    assert np.allclose(reranker.score(QUERY, DOCS[:2]), [0.0, 0.25])


def test_registry_by_provider_name(server: FakeOpenAIServer) -> None:
    spec = RerankerSpec(provider="http", model="fake-rerank", base_url=server.base_url, batch_size=4)
    reranker = make_reranker(spec)
    assert isinstance(reranker, HttpReranker) and reranker.batch_size == 4
    assert {"http", "llm", "onnx"} <= set(rerankers.names)
    with pytest.raises(ConfigError, match="unknown reranker provider 'nope'; one of .*http"):
        make_reranker(RerankerSpec(provider="nope"))
    with pytest.raises(ConfigError, match="base URL"):
        make_reranker(RerankerSpec(provider="http", model="m"))


def test_extensions_register_like_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    class Constant:
        name = "constant"

        def score(self, query, documents):
            return np.full(len(documents), 0.5, dtype=np.float32)

    monkeypatch.setattr(rerank, "rerankers", rerankers.fresh())  # the process-wide registry stays as it was
    rerank.rerankers.register("constant", lambda spec: Constant())
    assert make_reranker(RerankerSpec(provider="constant")).score("q", ["a", "b"]).tolist() == [0.5, 0.5]
