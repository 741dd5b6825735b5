"""Edge middleware (pure ASGI): request body limits and response security headers.

:class:`BodyLimitMiddleware` bounds every request body as its bytes arrive, so nothing over the
limit is ever held in memory or spooled to disk:

- the multipart upload route (``POST /api/v1/datasets/{id}/documents``) by
  ``max_upload_request_mb`` (all its files together),
- every other route by ``max_body_kb``.

A ``Content-Length`` over the limit is refused before the body is read; a chunked body (no
``Content-Length``) is counted and refused once it goes over. JSON bodies (bounded by
``max_body_kb``) are also checked for nesting deeper than :data:`MAX_JSON_DEPTH` before the
application parses them, so a ``[[[[...]]]]`` body is a clear 400 instead of a parser failure.
Refusals are the API's JSON errors (``{"error": "PayloadTooLargeError", "message": ...}``) and
close the connection, so the rest of a huge body is not read.

:class:`UploadAuthMiddleware` settles an upload's caller, its rate-limit token and its bytes in
flight (per server and per caller) before its body is read.

:class:`SecurityHeadersMiddleware` adds ``X-Content-Type-Options: nosniff`` to every response, and
to every response without its own ``Content-Security-Policy`` one that forbids framing
(``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``): ``default-src 'none'`` for anything but
HTML; for HTML (``/docs``, ``/redoc``, the status page) only this server's scripts and styles, its
inline scripts by their SHA-256 (:func:`html_policy`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragloom.api.responses import error_body
from ragloom.config import Settings
from ragloom.context import request_origin
from ragloom.errors import InvalidRequestError, PayloadTooLargeError, RagloomError, RateLimitedError, http_status

MAX_JSON_DEPTH = 64  # deepest nesting of arrays and objects in a JSON request body
UPLOAD_ROUTE = re.compile(r"^(?:/ragflow)?/api/v1/datasets/[^/]+/documents/?$")  # /ragflow: api/ragflow.py

# a JSON string; an unterminated one runs to the end, so every match is linear
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(body: bytes, *, exact: bool = True) -> int:
    """Deepest nesting of arrays and objects in a JSON text, linear and in C: brackets inside strings
    do not count (strings are cut out first) unless ``exact`` is false, which is quicker and gives an
    upper bound."""
    import numpy as np

    if exact:
        body = _JSON_STRING.sub(b"", body)
    brackets = body.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int32)
    return int(np.cumsum(steps).max())


async def too_deep(body: bytes, limit: int) -> bool:
    """Whether a JSON body nests deeper than ``limit``; the exact count (slower with many strings)
    runs in a thread, and only when the quick upper bound is over the limit."""
    if json_depth(body, exact=False) <= limit:
        return False
    return await anyio.to_thread.run_sync(json_depth, body) > limit


@dataclass(frozen=True, slots=True)
class _Limit:
    size: int
    text: str  # how the limit is named in an error message


def _is_json(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def _send_error(send: Send, exc: RagloomError) -> None:
    body = json.dumps(error_body(type(exc).__name__, exc.message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    if isinstance(exc, RateLimitedError):  # as the app's handler (api/errors.py) sends it
        headers.append((b"retry-after", str(max(1, math.ceil(exc.retry_after))).encode()))
    await send({"type": "http.response.start", "status": http_status(exc), "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.body = _Limit(settings.max_body_kb * 1024, f"{settings.max_body_kb} KiB (RAGLOOM_MAX_BODY_KB)")
        self.upload = _Limit(settings.max_upload_request_mb * 1024 * 1024,
                             f"{settings.max_upload_request_mb} MiB (RAGLOOM_MAX_UPLOAD_REQUEST_MB)")

    def limit_for(self, scope: Scope) -> _Limit:
        if scope["method"] == "POST" and UPLOAD_ROUTE.match(scope["path"]):
            return self.upload
        return self.body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        headers = Headers(scope=scope)
        too_large = PayloadTooLargeError(f"the request body is larger than the limit of {limit.text}")
        length = headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > limit.size:
            await _send_error(send, too_large)  # before reading a byte of the body
            return
        if _is_json(headers) and limit is self.body:
            await self._json(scope, receive, send, limit, too_large)
        else:
            await self._streamed(scope, receive, send, limit, too_large)

    async def _json(self, scope: Scope, receive: Receive, send: Send, limit: _Limit,
                    too_large: PayloadTooLargeError) -> None:
        """Read the whole (bounded) JSON body, check its nesting, then hand it to the app."""
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit.size:
                await _send_error(send, too_large)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if await too_deep(body, MAX_JSON_DEPTH):
            await _send_error(send, InvalidRequestError(
                f"the JSON request body is nested too deeply: at most {MAX_JSON_DEPTH} levels of arrays and "
                "objects are allowed"))
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, limit: _Limit,
                        too_large: PayloadTooLargeError) -> None:
        """Pass the body through as it arrives, counting; over the limit, 413."""
        size = 0

        def count(n: int) -> RagloomError | None:
            nonlocal size
            size += n
            return too_large if size > limit.size else None

        await _counted(self.app, scope, receive, send, count)


class _BodyRefused(Exception):
    """Raised from ``receive`` when a piece of the body is refused by its counter; answered with its error."""


async def _counted(app: ASGIApp, scope: Scope, receive: Receive, send: Send,
                   count: Callable[[int], RagloomError | None]) -> None:
    """Run ``app`` with its body passed through as it arrives, ``count`` called with the size of each
    piece; when it returns an error, the app's own answer (it sees a failed read) is dropped and that
    error sent instead (the rest of the body unread)."""
    refused: RagloomError | None = None
    started = False
    stop = _BodyRefused()  # this call's own (an outer counter's passes through)

    async def counted() -> Message:
        nonlocal refused
        if refused is not None:
            raise stop
        message = await receive()
        if message["type"] == "http.request":
            refused = count(len(message.get("body", b"")))
            if refused is not None:
                raise stop
        return message

    async def guarded(message: Message) -> None:
        nonlocal started
        if refused is not None and not started:
            return
        if message["type"] == "http.response.start":
            started = True
        await send(message)

    try:
        await app(scope, counted, guarded)
    except _BodyRefused as exc:
        if exc is not stop or started:
            raise
    except Exception:
        if refused is None or started:
            raise
    if refused is not None and not started:
        await _send_error(send, refused)


NOT_HTML_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
"""The policy of a response that is not HTML and sets none of its own (JSON, images, ...)."""
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)


def html_policy(body: bytes) -> str:
    """The policy of an HTML page that sets none of its own (Swagger UI at ``/docs``, ReDoc at ``/redoc``,
    the status page): scripts, styles, images and fonts from this server only, each inline script of the
    page allowed by its hash (never ``'unsafe-inline'`` for scripts), inline styles allowed (ReDoc and
    Swagger UI write their own), no plugins, no framing, forms to this server only."""
    hashes = sorted({"'sha256-" + base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode() + "'"
                     for m in _INLINE_SCRIPT.finditer(body)})
    scripts = " ".join(["'self'", *hashes])
    return (f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def _no_framing(headers: MutableHeaders) -> None:
    """``X-Frame-Options`` agreeing with the response's ``frame-ancestors``: SAMEORIGIN where the
    response lets this server frame it, else DENY."""
    own = headers.get("content-security-policy", "")
    headers.setdefault("x-frame-options", "SAMEORIGIN" if "frame-ancestors 'self'" in own else "DENY")


class SecurityHeadersMiddleware:
    """``X-Content-Type-Options: nosniff`` on every response (a browser never guesses a type); a
    ``Content-Security-Policy`` and ``X-Frame-Options`` on every response that sets none (see the
    module's docstring; an HTML body is held until its end to hash its inline scripts — this app's HTML
    pages are small); the caller's address becomes the request's :data:`ragloom.context.request_origin`
    (the audit log's "from where")."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        request_origin.set(str(client[0]) if client else "")
        held: Message | None = None  # an HTML response's start, sent once its body is hashed
        parts: list[bytes] = []

        async def with_headers(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("x-content-type-options", "nosniff")
                if "content-security-policy" not in headers:
                    if headers.get("content-type", "").lower().startswith("text/html"):
                        held = message
                        return
                    headers["content-security-policy"] = NOT_HTML_POLICY
                _no_framing(headers)
            elif held is not None and message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body, start, held = b"".join(parts), held, None
                headers = MutableHeaders(scope=start)
                headers["content-security-policy"] = html_policy(body)
                _no_framing(headers)
                await send(start)
                message = {"type": "http.response.body", "body": body, "more_body": False}
            await send(message)

        await self.app(scope, receive, with_headers)


class UploadAuthMiddleware:
    """Authenticate an upload, take its rate-limit token and count its bytes in flight, all before its
    body is read.

    FastAPI reads a form body (the upload route spools it to disk) before it resolves the route's
    dependencies, so without this an unknown caller could make the server receive up to
    ``max_upload_request_mb`` before hearing 401, and a caller over its rate limit before hearing
    429. The caller is checked as the route checks it (key or session, read-only keys, CSRF), and
    again by the route, which finds the upload's token taken (:func:`ragloom.api.ratelimit.charged`).

    Bytes in flight (:class:`ragloom.api.ratelimit.InflightBudget`, ``app.state.upload_budget``): an
    upload's ``Content-Length`` is counted before a byte of its body is read, one without it
    (chunked) as its bytes arrive; over the server's cap (``max_upload_inflight_mb``) or the
    caller's (``max_upload_inflight_per_principal_mb``) it is refused with 429 and ``Retry-After``
    (before its body, or at the piece that goes over, the rest unread) and its rate-limit token given
    back. Its bytes count until its response is sent.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "POST" and UPLOAD_ROUTE.match(scope["path"])
                and scope["app"].state.local_principal is None):
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request

        from ragloom.api.deps import current_caller, rate_bucket
        from ragloom.api.ratelimit import InflightBudget, charge, refund_charge

        state = scope["app"].state
        request = Request(scope)  # headers and cookies only: the body is not read here

        def gate() -> tuple[str, str]:
            caller = current_caller(request, state.ctx, None, None)
            who, per = rate_bucket(caller, request.headers.get("authorization", ""))
            charge(scope, state.rate_limiter, who, "upload", per=per)
            return who, per

        try:
            who, per = await anyio.to_thread.run_sync(gate)
        except RagloomError as exc:
            await _send_error(send, exc)
            return
        budget: InflightBudget = state.upload_budget
        length = request.headers.get("content-length", "").strip()
        counted = int(length) if length.isdigit() else 0
        try:
            budget.reserve(who, counted, per=per)
        except RagloomError as exc:
            refund_charge(scope)  # refused before any work: the token goes back
            await _send_error(send, exc)
            return

        def count(n: int) -> RagloomError | None:  # a chunked body: its bytes as they arrive
            nonlocal counted
            try:
                budget.reserve(who, n, per=per, reserved=counted)
            except RagloomError as exc:
                refund_charge(scope)
                return exc
            counted += n
            return None

        try:
            if length.isdigit():
                await self.app(scope, receive, send)
            else:
                await _counted(self.app, scope, receive, send, count)
        finally:
            budget.release(who, counted)
