"""A small, real OpenAI-compatible HTTP server for tests.

Serves ``POST /v1/chat/completions`` (scripted replies, plain or SSE stream),
``POST /v1/embeddings`` (deterministic hashed bag-of-words vectors),
``POST /v1/rerank`` (Jina/Cohere shape, scored by :func:`rerank_score`) and
``GET /v1/models``, on 127.0.0.1 with a free port, in a background thread.
Every request is recorded.

    with FakeOpenAIServer(replies=["Paris [ID:0]."]) as server:
        model = OpenAIChatModel(server.base_url, "fake-chat")
        ...
        assert server.requests[-1].body["messages"][0]["role"] == "system"

Replies are taken from the queue (``queue_reply``) first, then from
``responder(body) -> str`` when set, else ``default_reply``. ``fail_next``
makes the next chat or embedding request fail with a given status (``clear_failures`` forgets those
not met yet). A reply longer than the
request's ``max_tokens`` (counted in words) is cut there with ``finish_reason: "length"``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+")


def hashed_embedding(text: str, dim: int = 64) -> list[float]:
    """L2-normalised bag of lower-cased words, each hashed to one of ``dim`` slots."""
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % dim
        vec[slot] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def rerank_score(query: str, document: str) -> float:
    """The fake rerank endpoint's relevance: cosine of the hashed bag-of-words vectors, in [0, 1]."""
    q, d = hashed_embedding(query, 256), hashed_embedding(document, 256)
    return round(sum(a * b for a, b in zip(q, d, strict=True)), 6)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAIServer:
    """See the module docstring. Thread-safe; start/stop or use as a context manager."""

    def __init__(
        self,
        replies: Iterable[str] = (),
        *,
        responder: Callable[[dict[str, Any]], str] | None = None,
        default_reply: str = "I could not find that in the documents.",
        embedding_dim: int = 64,
        host: str = "127.0.0.1",
    ) -> None:
        self.host = host  # any loopback address (all of 127/8 is loopback on Linux)
        self._replies: deque[str] = deque(replies)
        self.responder = responder
        self.default_reply = default_reply
        self.embedding_dim = embedding_dim
        self.requests: list[RecordedRequest] = []
        self._failures: deque[tuple[int, str]] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------
    def queue_reply(self, *replies: str) -> None:
        with self._lock:
            self._replies.extend(replies)

    def fail_next(self, status: int = 500, body: str = '{"error": "internal failure"}') -> None:
        with self._lock:
            self._failures.append((status, body))

    def clear_failures(self) -> None:
        """Forget the failures queued by ``fail_next`` that no request has met yet."""
        with self._lock:
            self._failures.clear()

    def _next_reply(self, body: dict[str, Any]) -> str:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return self.responder(body) if self.responder else self.default_reply

    def _next_failure(self) -> tuple[int, str] | None:
        with self._lock:
            return self._failures.popleft() if self._failures else None

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    # -- lifecycle -------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://<host>:<port>/v1`` (the OpenAI-style base URL)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        server = self
        handler = type("Handler", (_Handler,), {"fake": server})
        self._httpd = ThreadingHTTPServer((self.host, 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _limited(reply: str, body: dict[str, Any]) -> tuple[str, str]:
    """The reply cut to the request's ``max_tokens`` (a token is a word here) and its finish reason."""
    limit = body.get("max_tokens")
    words = reply.split(" ")
    if isinstance(limit, int) and len(words) > limit:
        return " ".join(words[:limit]), "length"
    return reply, "stop"


def _stream_pieces(text: str) -> list[str]:
    """Word-sized pieces (with their trailing space) whose concatenation is ``text``."""
    return re.findall(r"\S+\s*|\s+", text)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output clean

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self.fake._record(RecordedRequest("GET", self.path, dict(self.headers), None))
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": "fake-chat"}]})
        else:
            self._send_json(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = self._read_json()
        self.fake._record(RecordedRequest("POST", self.path, dict(self.headers), body))
        path = self.path.rstrip("/")
        if path not in ("/v1/chat/completions", "/v1/embeddings", "/v1/rerank"):
            self._send_json(404, {"error": "not found"})
            return
        failure = self.fake._next_failure()
        if failure:
            self._send_json(failure[0], failure[1].encode())
        elif path == "/v1/embeddings":
            self._embeddings(body)
        elif path == "/v1/rerank":
            self._rerank(body)
        elif isinstance(body, dict) and body.get("stream"):
            self._chat_stream(body)
        else:
            self._chat(body)

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(t, self.fake.embedding_dim)}
            for i, t in enumerate(texts)
        ]
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model")})

    def _rerank(self, body: dict[str, Any]) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str) or "documents" not in body:
            self._send_json(422, {"error": "query and documents are required"})
            return
        docs = [d if isinstance(d, str) else str(d.get("text", "")) for d in body["documents"]]
        scored = sorted(enumerate(docs), key=lambda p: (-rerank_score(body["query"], p[1]), p[0]))
        top_n = body.get("top_n") or len(docs)
        results = []
        for index, doc in scored[:top_n]:
            item: dict[str, Any] = {"index": index, "relevance_score": rerank_score(body["query"], doc)}
            if body.get("return_documents"):
                item["document"] = {"text": doc}
            results.append(item)
        self._send_json(200, {"model": body.get("model"), "results": results, "usage": {"total_tokens": 0}})

    def _chat(self, body: dict[str, Any]) -> None:
        reply, finish = _limited(self.fake._next_reply(body), body)
        self._send_json(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": finish,
                    }
                ],
            },
        )

    def _chat_stream(self, body: dict[str, Any]) -> None:
        reply, finish = _limited(self.fake._next_reply(body), body)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        event({"role": "assistant", "content": ""})
        for piece in _stream_pieces(reply):
            event({"content": piece})
        event({}, finish=finish)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
