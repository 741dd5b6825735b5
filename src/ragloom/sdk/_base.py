"""The SDK's HTTP layer: one :class:`Route` per API operation, registered by :func:`operation`; the
requests, the error mapping and the server-sent events every method of :class:`ragloom.sdk.Ragloom`
goes through."""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Protocol, Self, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from ragloom.errors import (
    AuthenticationError,
    ConfigError,
    ConflictError,
    InvalidRequestError,
    LimitExceededError,
    ModelError,
    NotFoundError,
    ParseError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RagloomError,
    RateLimitedError,
    StoreError,
    TaskCancelledError,
    TaskInterruptedError,
    UnsupportedFormatError,
)

API_PREFIX = "/api/v1"
CSRF_HEADER = "X-CSRF-Token"  # ragloom.api.deps.CSRF_HEADER: a signed-in session's state-changing requests
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
DEFAULT_TIMEOUT = 120.0  # seconds: an answer by a slow chat model takes a while

FileInput = str | os.PathLike[str] | tuple[str, bytes]
"""A file to upload: a path, or ``(name, content)``."""


# --- the operations ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Route:
    """One API operation: its method and its path under ``/api/v1``, ``{name}`` for path parameters."""

    method: str
    path: str
    accept: tuple[int, ...] = ()  # error statuses whose body is still the result (GET /health: 503)

    def url(self, **params: str | int) -> str:
        """The path with its parameters filled in, each quoted (an id or a name may hold any character)."""
        return self.path.format(**{k: quote(str(v), safe="") for k, v in params.items()})


OPERATIONS: dict[tuple[str, str], list[str]] = {}
"""Every API operation the SDK calls — ``(method, "/api/v1/...")`` — and the methods that call it
(``tests/test_sdk.py`` checks it against ``/openapi.json``)."""

C = TypeVar("C", bound="Base")
P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def operation(method: str, path: str, *, accept: tuple[int, ...] = ()
              ) -> Callable[[Callable[Concatenate[C, Route, P], R]], Callable[Concatenate[C, P], R]]:
    """Declare the API operation a method calls: the method receives its :class:`Route` after ``self``
    (positional-only, callers never pass it) and is listed in :data:`OPERATIONS`."""
    route = Route(method, path, accept)

    def register(fn: Callable[Concatenate[C, Route, P], R]) -> Callable[Concatenate[C, P], R]:
        @functools.wraps(fn)
        def call(self: C, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return fn(self, route, *args, **kwargs)

        signature = inspect.signature(fn)  # shown without the route (help(), IDEs)
        params = list(signature.parameters.values())
        call.__signature__ = signature.replace(parameters=params[:1] + params[2:])  # type: ignore[attr-defined]
        call.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != params[1].name}
        call.route = route  # type: ignore[attr-defined]
        OPERATIONS.setdefault((method, API_PREFIX + path), []).append(fn.__name__)
        return call

    return register


# --- errors -----------------------------------------------------------------------------------------

_BY_STATUS: dict[int, type[RagloomError]] = {
    400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
    409: ConflictError, 413: PayloadTooLargeError, 415: UnsupportedFormatError, 422: InvalidRequestError,
    429: RateLimitedError, 502: ModelError, 503: StoreError,
}
# The server names the error's class in the body: the classes built from a message alone are taken by name.
_BY_KIND: dict[str, type[RagloomError]] = {cls.__name__: cls for cls in (
    ConfigError, NotFoundError, PermissionDeniedError, AuthenticationError, InvalidRequestError, PayloadTooLargeError,
    RateLimitedError, ConflictError, ParseError, UnsupportedFormatError, LimitExceededError, StoreError, ModelError,
    TaskCancelledError, TaskInterruptedError)}


def api_error(kind: str | None, message: str, *, status: int | None = None,
              retry_after: float | None = None) -> RagloomError:
    """The :mod:`ragloom.errors` exception of an error body ``{"error": kind, "message": message}``: the
    class the server names, else the one of its status (``RagloomError`` for any other)."""
    cls = _BY_KIND.get(kind or "") or _BY_STATUS.get(status or 0, RagloomError)
    exc = RateLimitedError(message, retry_after or 1.0) if issubclass(cls, RateLimitedError) else cls(message)
    exc.status = status
    return exc


def invalid(exc: ValidationError) -> InvalidRequestError:
    """A request body that fails its model before it is sent, as the server would refuse it (422)."""
    parts = [f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"] for e in exc.errors()]
    return InvalidRequestError("; ".join(parts) or "invalid request")


def body(model: type[BaseModel], values: Mapping[str, object], *, keep_none: bool = False) -> dict[str, Any]:
    """A request body: the values given (None = leave it to the server's default, unless ``keep_none``),
    checked by the API's own request model; ``InvalidRequestError`` when they do not fit it."""
    given = {k: v for k, v in values.items() if keep_none or v is not None}
    try:
        return model.model_validate(given).model_dump(mode="json", exclude_unset=True)
    except ValidationError as exc:
        raise invalid(exc) from None


# --- the HTTP session -------------------------------------------------------------------------------

class Response(Protocol):
    """What the SDK reads of an HTTP response."""

    @property
    def status_code(self) -> int: ...
    @property
    def content(self) -> bytes: ...
    @property
    def text(self) -> str: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    def json(self) -> Any: ...


class StreamedResponse(Response, Protocol):
    """What the SDK reads of a streamed HTTP response: a response, read as it arrives."""

    def read(self) -> bytes: ...
    def iter_lines(self) -> Iterator[str]: ...


class HttpSession(Protocol):
    """An HTTP client whose base URL is a server's ``/api/v1``: an ``httpx.Client``, or the in-process
    ``TestClient`` of the CLI's local mode (another class with the same interface)."""

    def request(self, method: str, url: str, *, params: Mapping[str, Any] | None = None,
                json: Any = None, data: Mapping[str, Any] | None = None, files: Any = None,
                headers: Mapping[str, str] | None = None) -> Response: ...
    def stream(self, method: str, url: str, *, json: Any = None,
               headers: Mapping[str, str] | None = None) -> AbstractContextManager[StreamedResponse]: ...
    def close(self) -> None: ...


def read_files(files: FileInput | Iterable[FileInput]) -> list[tuple[str, tuple[str, bytes]]]:
    """The multipart parts (field ``file``) of one file or several: paths are read, ``(name, bytes)`` kept."""
    items: Iterable[FileInput]
    if isinstance(files, str | os.PathLike) or (isinstance(files, tuple) and len(files) == 2
                                                 and isinstance(files[1], bytes | bytearray)):
        items = [files]
    else:
        items = files  # not one file: several
    parts = []
    for item in items:
        if isinstance(item, tuple):
            name, data = item
        else:
            path = Path(item)
            try:
                name, data = path.name, path.read_bytes()
            except OSError as exc:
                raise InvalidRequestError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
        parts.append(("file", (name, bytes(data))))
    if not parts:
        raise InvalidRequestError("no files to upload")
    return parts


class Base:
    """The connection: the HTTP client, the credential (an API key, or a web session's cookie and CSRF
    token) and the one request path with its error mapping. A context manager that closes its client."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.BaseTransport | None = None, http: HttpSession | None = None) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key or None
        self.csrf_token: str | None = None  # a web session's, sent with every request that changes data
        self._owns_http = http is None
        self._http: HttpSession = http or httpx.Client(base_url=self.url + API_PREFIX, timeout=timeout,
                                                       transport=transport)

    def close(self) -> None:
        """Close the HTTP client (not one passed in as ``http``)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        how = "api key" if self.api_key else "session" if self.csrf_token else "anonymous"
        return f"{type(self).__name__}({self.url!r}, {how})"

    # --- requests ---

    def _headers(self, method: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if self.csrf_token and method not in SAFE_METHODS:
            headers[CSRF_HEADER] = self.csrf_token
        return headers

    def _send(self, route: Route, *, path: Mapping[str, str | int] | None = None,
              params: Mapping[str, object] | None = None, json: object = None,
              data: Mapping[str, str] | None = None, files: Sequence[tuple[str, tuple[str, bytes]]] | None = None
              ) -> Response:
        """The response to one request; an error status raises its :mod:`ragloom.errors` exception."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            resp = self._http.request(route.method, route.url(**(path or {})), params=query or None, json=json,
                                      data=data, files=files, headers=self._headers(route.method))
        except httpx.HTTPError as exc:
            raise RagloomError(f"cannot reach the server at {self.url}: {exc}") from exc
        if resp.status_code >= 400 and resp.status_code not in route.accept:
            raise self._error(resp)
        return resp

    def _model(self, model: type[M], route: Route, **request: Any) -> M:
        """A request whose response body is ``model``."""
        resp = self._send(route, **request)
        try:
            return model.model_validate(resp.json())
        except (ValueError, ValidationError) as exc:
            raise RagloomError(f"{route.method} {route.path}: the server's answer is not a {model.__name__}: "
                               f"{exc}") from exc

    def _empty(self, route: Route, **request: Any) -> None:
        """A request answered without a body (204)."""
        self._send(route, **request)

    def _error(self, resp: Response) -> RagloomError:
        """The exception of an error response: the server's error class and message, with its status."""
        try:
            payload = resp.json()
        except ValueError:
            payload = None
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            kind, message = payload.get("error"), payload["message"]
        else:
            kind, message = None, resp.text.strip() or f"HTTP {resp.status_code}"
        retry = resp.headers.get("retry-after")
        return api_error(kind if isinstance(kind, str) else None, message, status=resp.status_code,
                         retry_after=float(retry) if retry and retry.isdigit() else None)

    def _events(self, route: Route, *, path: Mapping[str, str | int], json: object) -> Iterator[dict[str, Any]]:
        """The JSON events of a server-sent event stream up to ``[DONE]``. An error before the stream
        starts raises by its status; one inside the stream (an ``{"error", "message"}`` event) raises
        when it arrives."""
        try:
            with self._http.stream(route.method, route.url(**path), json=json,
                                   headers=self._headers(route.method)) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise self._error(resp)
                for line in resp.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    event = json_object(data)
                    if "error" in event and "delta" not in event:
                        raise api_error(str(event["error"]), str(event.get("message") or event["error"]))
                    yield event
        except httpx.HTTPError as exc:
            raise RagloomError(f"cannot reach the server at {self.url}: {exc}") from exc


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RagloomError(f"the server sent an event that is not JSON: {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise RagloomError(f"the server sent an event that is not a JSON object: {text[:200]!r}")
    return value
