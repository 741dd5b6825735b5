"""The CLI's client: the HTTP API of a server (``--url``), or the same application in-process.

:class:`LocalClient` runs the application in this process through an ASGI transport, so every
command takes one code path — the API's — with or without a server, and the CLI knows no
service internals.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypedDict, cast

import httpx

from ragloom.context import Context, Principal
from ragloom.errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RagloomError,
)

TERMINAL = ("done", "failed", "cancelled")


class Client(Protocol):
    def kb_create(self, name: str, *, language: str = "en", description: str = "", chunk_method: str = "naive",
                  parser_config: dict[str, Any] | None = None, tag_kb_ids: list[str] | None = None,
                  topn_tags: int | None = None) -> dict[str, Any]: ...
    def kb_list(self) -> list[dict[str, Any]]: ...
    def kb_tags(self, kb: str) -> dict[str, Any]: ...
    def kb_delete(self, kb: str) -> None: ...
    def upload(self, kb: str, files: Sequence[tuple[str, bytes]], *, chunk_method: str | None = None,
               parser_config: dict[str, Any] | None = None) -> list[dict[str, Any]]: ...
    def documents(self, kb: str) -> list[dict[str, Any]]: ...
    def chunks(self, kb: str, doc: str) -> dict[str, Any]: ...
    def search(self, kb: str | Sequence[str], question: str, *, top_n: int = 6, mode: str = "hybrid",
               explain: bool = False, toc_enhance: bool = False, route: bool = False,
               fusion: str | None = None) -> dict[str, Any]:
        """Retrieval over ``kb`` (one or several; with ``route``, the candidates for the router,
        ``[]`` = every readable one). With ``route`` the result has ``routing``."""
        ...
    def ask(self, kb: str | Sequence[str], question: str, *, top_n: int = 6) -> dict[str, Any]:
        """A cited answer from ``kb`` (one knowledge base or several)."""
        ...
    def assistant_create(self, body: Mapping[str, object]) -> dict[str, Any]: ...
    def assistant_list(self) -> list[dict[str, Any]]: ...
    def assistant_get(self, assistant: str) -> dict[str, Any]: ...
    def assistant_update(self, assistant: str, body: Mapping[str, object]) -> dict[str, Any]: ...
    def assistant_delete(self, assistant: str) -> None: ...
    def session_list(self, assistant: str, *, page: int = 1, page_size: int = 30) -> dict[str, Any]: ...
    def session_get(self, assistant: str, session: str) -> dict[str, Any]: ...
    def session_rename(self, assistant: str, session: str, name: str) -> dict[str, Any]: ...
    def session_delete(self, assistant: str, session: str) -> None: ...
    def message_feedback(self, assistant: str, session: str, message: str, rating: str | None,
                         comment: str = "") -> dict[str, Any]: ...
    def message_delete(self, assistant: str, session: str, message: str) -> dict[str, Any]: ...
    def chat(self, assistant: str, question: str, *, session: str | None = None,
             explain: bool = False) -> dict[str, Any]:
        """One question to an assistant (a new session when ``session`` is None): the stored reply."""
        ...
    def chat_stream(self, assistant: str, question: str, *, session: str | None = None,
                    explain: bool = False) -> Iterator[dict[str, Any]]:
        """The reply's events: ``{"delta": text}``..., then ``{"reply": ...}`` (or ``{"error", "message"}``)."""
        ...
    def key_create(self, *, name: str = "", scope: str = "read-write",
                   expires_in_days: int | None = None) -> dict[str, Any]:
        """A new API key for the caller; the secret (``key``) is in this result only."""
        ...
    def key_list(self) -> list[dict[str, Any]]: ...
    def key_revoke(self, key_id: str) -> dict[str, Any]: ...
    def audit(self, *, action: str | None = None, limit: int = 100) -> dict[str, Any]: ...
    def start_processing(self) -> None: ...
    def stop_processing(self) -> None: ...


def _kb_body(name: str, language: str, description: str, chunk_method: str, parser_config: dict[str, Any] | None,
             tag_kb_ids: list[str] | None, topn_tags: int | None) -> dict[str, Any]:
    """The create request (``POST /datasets`` body); unset tag options are left to the defaults."""
    body: dict[str, Any] = {"name": name, "language": language, "description": description,
                            "chunk_method": chunk_method, "parser_config": parser_config or {}}
    if tag_kb_ids:
        body["tag_kb_ids"] = list(tag_kb_ids)
    if topn_tags is not None:
        body["topn_tags"] = topn_tags
    return body


def _kb_list(kb: str | Sequence[str]) -> list[str]:
    return [kb] if isinstance(kb, str) else list(kb)


class _Response(Protocol):
    """What the client reads of an HTTP response."""

    @property
    def status_code(self) -> int: ...
    @property
    def content(self) -> bytes: ...
    @property
    def text(self) -> str: ...
    def json(self) -> object: ...


class _StreamedResponse(Protocol):
    """What the client reads of a streamed HTTP response."""

    @property
    def status_code(self) -> int: ...
    def read(self) -> bytes: ...
    def json(self) -> object: ...
    def iter_lines(self) -> Iterator[str]: ...


class _Session(Protocol):
    """What the client needs of an HTTP client: an ``httpx.Client``, or the in-process ``TestClient``
    (an ``httpx2.Client``, whose ``Response`` is another class with the same interface)."""

    def request(self, method: str, url: str, *, params: Mapping[str, int | str] | None = None,
                json: Mapping[str, object] | None = None, data: Mapping[str, str] | None = None,
                files: Sequence[tuple[str, tuple[str, bytes]]] | None = None) -> _Response: ...
    def stream(self, method: str, url: str, *,
               json: Mapping[str, object] | None = None) -> AbstractContextManager[_StreamedResponse]: ...


class _Datasets(TypedDict):
    """``GET /datasets``."""

    datasets: list[dict[str, Any]]


class _Uploaded(TypedDict):
    """``POST /datasets/{kb}/documents``."""

    documents: list[dict[str, Any]]


class _DocumentPage(TypedDict):
    """``GET /datasets/{kb}/documents``."""

    documents: list[dict[str, Any]]
    total: int


class _ChunkPage(TypedDict):
    """``GET /datasets/{kb}/documents/{doc}/chunks``."""

    chunks: list[dict[str, Any]]
    total: int


_BY_STATUS: dict[int, type[RagloomError]] = {
    400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
    409: ConflictError, 422: InvalidRequestError,
}


class HttpClient:
    """Talks to a ragloom server's ``/api/v1`` with an API key."""

    def __init__(self, url: str, api_key: str, *, timeout: float = 120.0,
                 transport: httpx.BaseTransport | None = None, http: _Session | None = None) -> None:
        self._http: _Session = http or httpx.Client(
            base_url=url.rstrip("/") + "/api/v1", timeout=timeout, transport=transport,
            headers={"Authorization": f"Bearer {api_key}"})

    def _call(self, method: str, path: str, *, params: Mapping[str, int | str] | None = None,
              json: Mapping[str, object] | None = None, data: Mapping[str, str] | None = None,
              files: Sequence[tuple[str, tuple[str, bytes]]] | None = None) -> object:
        """The decoded JSON body of the response (None when it is empty); an error status raises."""
        try:
            resp = self._http.request(method, path, params=params, json=json, data=data, files=files)
        except httpx.HTTPError as exc:
            raise RagloomError(f"cannot reach the server: {exc}") from exc
        if resp.status_code >= 400:
            try:
                body = resp.json()
            except ValueError:
                body = None
            message = body.get("message", resp.text) if isinstance(body, dict) else resp.text
            raise _BY_STATUS.get(resp.status_code, RagloomError)(f"{resp.status_code}: {message}")
        return resp.json() if resp.content else None

    def _object(self, method: str, path: str, *, json: Mapping[str, object] | None = None) -> dict[str, Any]:
        """A call whose response is a JSON object (as the API documents it; not checked here)."""
        return cast(dict[str, Any], self._call(method, path, json=json))

    def kb_create(self, name: str, *, language: str = "en", description: str = "", chunk_method: str = "naive",
                  parser_config: dict[str, Any] | None = None, tag_kb_ids: list[str] | None = None,
                  topn_tags: int | None = None) -> dict[str, Any]:
        body = _kb_body(name, language, description, chunk_method, parser_config, tag_kb_ids, topn_tags)
        return self._object("POST", "/datasets", json=body)

    def kb_tags(self, kb: str) -> dict[str, Any]:
        return self._object("GET", f"/datasets/{kb}/tags")

    def kb_list(self) -> list[dict[str, Any]]:
        return cast(_Datasets, self._call("GET", "/datasets"))["datasets"]

    def kb_delete(self, kb: str) -> None:
        self._call("DELETE", f"/datasets/{kb}")

    def upload(self, kb: str, files: Sequence[tuple[str, bytes]], *, chunk_method: str | None = None,
               parser_config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        parts = [("file", (name, data)) for name, data in files]
        form: dict[str, str] = {}
        if chunk_method:
            form["chunk_method"] = chunk_method
            form["parser_config"] = json.dumps(parser_config or {})
        return cast(_Uploaded, self._call("POST", f"/datasets/{kb}/documents", files=parts, data=form))["documents"]

    def chunks(self, kb: str, doc: str) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            res = cast(_ChunkPage, self._call("GET", f"/datasets/{kb}/documents/{doc}/chunks",
                                              params={"page": page, "page_size": 1000}))
            out.extend(res["chunks"])
            if len(out) >= res["total"] or not res["chunks"]:
                return {"chunks": out, "total": res["total"]}
            page += 1

    def documents(self, kb: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            res = cast(_DocumentPage, self._call("GET", f"/datasets/{kb}/documents",
                                                 params={"page": page, "page_size": 1000}))
            out.extend(res["documents"])
            if len(out) >= res["total"] or not res["documents"]:
                return out
            page += 1

    def search(self, kb: str | Sequence[str], question: str, *, top_n: int = 6, mode: str = "hybrid",
               explain: bool = False, toc_enhance: bool = False, route: bool = False,
               fusion: str | None = None) -> dict[str, Any]:
        body: dict[str, object] = {"question": question, "dataset_ids": _kb_list(kb), "page_size": top_n,
                                   "mode": mode, "explain": explain, "toc_enhance": toc_enhance, "route": route}
        if fusion is not None:
            body["fusion"] = fusion
        return self._object("POST", "/retrieval", json=body)

    def ask(self, kb: str | Sequence[str], question: str, *, top_n: int = 6) -> dict[str, Any]:
        return self._object("POST", "/answer", json={"question": question, "dataset_ids": _kb_list(kb),
                                                      "top_n": top_n})

    def assistant_create(self, body: Mapping[str, object]) -> dict[str, Any]:
        return self._object("POST", "/chats", json=body)

    def assistant_list(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._object("GET", "/chats")["assistants"])

    def assistant_get(self, assistant: str) -> dict[str, Any]:
        return self._object("GET", f"/chats/{assistant}")

    def assistant_update(self, assistant: str, body: Mapping[str, object]) -> dict[str, Any]:
        return self._object("PATCH", f"/chats/{assistant}", json=body)

    def assistant_delete(self, assistant: str) -> None:
        self._call("DELETE", f"/chats/{assistant}")

    def session_list(self, assistant: str, *, page: int = 1, page_size: int = 30) -> dict[str, Any]:
        return cast(dict[str, Any], self._call("GET", f"/chats/{assistant}/sessions",
                                               params={"page": page, "page_size": page_size}))

    def session_get(self, assistant: str, session: str) -> dict[str, Any]:
        return self._object("GET", f"/chats/{assistant}/sessions/{session}")

    def session_rename(self, assistant: str, session: str, name: str) -> dict[str, Any]:
        return self._object("PATCH", f"/chats/{assistant}/sessions/{session}", json={"name": name})

    def session_delete(self, assistant: str, session: str) -> None:
        self._call("DELETE", f"/chats/{assistant}/sessions/{session}")

    def message_feedback(self, assistant: str, session: str, message: str, rating: str | None,
                         comment: str = "") -> dict[str, Any]:
        return self._object("PUT", f"/chats/{assistant}/sessions/{session}/messages/{message}/feedback",
                            json={"rating": rating, "comment": comment})

    def message_delete(self, assistant: str, session: str, message: str) -> dict[str, Any]:
        return self._object("DELETE", f"/chats/{assistant}/sessions/{session}/messages/{message}")

    def chat(self, assistant: str, question: str, *, session: str | None = None,
             explain: bool = False) -> dict[str, Any]:
        body = {"question": question, "session_id": session, "explain": explain}
        return self._object("POST", f"/chats/{assistant}/completions", json=body)

    def chat_stream(self, assistant: str, question: str, *, session: str | None = None,
                    explain: bool = False) -> Iterator[dict[str, Any]]:
        body = {"question": question, "session_id": session, "explain": explain, "stream": True}
        try:
            with self._http.stream("POST", f"/chats/{assistant}/completions", json=body) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    try:
                        error = resp.json()
                    except ValueError:
                        error = None
                    message = error.get("message") if isinstance(error, dict) else None
                    raise _BY_STATUS.get(resp.status_code, RagloomError)(f"{resp.status_code}: {message or ''}")
                for line in resp.iter_lines():
                    if line.startswith("data: ") and line[6:] != "[DONE]":
                        yield cast(dict[str, Any], json.loads(line[6:]))
        except httpx.HTTPError as exc:
            raise RagloomError(f"cannot reach the server: {exc}") from exc

    def key_create(self, *, name: str = "", scope: str = "read-write",
                   expires_in_days: int | None = None) -> dict[str, Any]:
        body: dict[str, object] = {"name": name, "scope": scope}
        if expires_in_days is not None:
            body["expires_in_days"] = expires_in_days
        return cast(dict[str, Any], self._call("POST", "/keys", json=body))

    def key_list(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], cast(dict[str, Any], self._call("GET", "/keys"))["keys"])

    def key_revoke(self, key_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._call("DELETE", f"/keys/{key_id}"))

    def audit(self, *, action: str | None = None, limit: int = 100) -> dict[str, Any]:
        params: dict[str, int | str] = {"limit": limit, **({"action": action} if action else {})}
        return cast(dict[str, Any], self._call("GET", "/audit", params=params))

    def start_processing(self) -> None:
        """The server's workers process uploads."""

    def stop_processing(self) -> None:
        """Nothing to stop."""


class LocalClient(HttpClient):
    """The application ``ragloom serve`` runs, run in-process on ``RAGLOOM_HOME`` (no port is opened):
    each command takes exactly the code path it takes against a server with ``--url``. Requests act
    as the data directory's owner (``principal``); ingestion tasks run in a background thread.
    ``ctx`` and ``principal`` stay reachable for the commands that only work on a data directory
    (``reindex``, ``eval``)."""

    def __init__(self, ctx: Context, principal: Principal) -> None:
        from fastapi.testclient import TestClient

        from ragloom.api.app import create_app

        self.ctx = ctx
        self.principal = principal
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        app = create_app(context=ctx, local_principal=principal)
        super().__init__(LOCAL_URL, "", http=TestClient(app, base_url=LOCAL_URL + "/api/v1",
                                                      raise_server_exceptions=False, client=("cli", 0)))

    def start_processing(self) -> None:
        from ragloom.worker import run_until

        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=run_until, args=(self.ctx, self._stop.is_set), kwargs={"poll": 0.2}, daemon=True
            )
            self._thread.start()

    def stop_processing(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None


LOCAL_URL = "http://ragloom.local"
