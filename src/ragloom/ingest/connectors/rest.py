"""What the connectors of HTTP services share (``webdav``, ``confluence``, ``notion``): a client whose every
connection goes through the outbound guard, requests that wait out a rate limit, and errors that say what
failed without ever carrying the credentials.

A service that answers HTTP 429 (or 503) with ``Retry-After`` is asked again after that many seconds (at
most :data:`MAX_WAIT`), up to :data:`RETRIES` times; beyond that the request is a transient
:class:`SourceError` (the next sync tries again). A 401 or 403 says the credentials were refused or lack
a permission — not transient: trying again with the same ones will not help.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import READ_CHUNK, SourceError, bounded, screen_url
from ragloom.models.http import GuardedTransport, OutboundPolicy

RETRIES = 4  # times a rate-limited request is asked again
MAX_WAIT = 30.0  # seconds waited at most for one Retry-After
USER_AGENT = "ragloom"
MAX_REPLY = 64 * 1024 * 1024  # bytes of a reply read whole (a listing's page, a multistatus) at most
ERROR_BYTES = 64 * 1024  # bytes of an error reply read (for its message)


def http_url(value: str, name: str) -> str:
    """``value`` as an http(s) URL without a trailing slash, credentials or fragment; else an
    ``InvalidRequestError`` naming the setting ``name``."""
    url = value.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port out of range raises here
    except ValueError:
        raise InvalidRequestError(f"settings.{name} {value!r} is not an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequestError(f"settings.{name} {value!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise InvalidRequestError(f"settings.{name}: put the credentials in the credentials, not in the URL")
    if parts.fragment:
        raise InvalidRequestError(f"settings.{name} {value!r} has a fragment")
    return url


def retry_after(resp: httpx.Response) -> float:
    """The seconds a 429 or 503 asks to wait (``Retry-After``: seconds or an HTTP date; default 1), at most
    :data:`MAX_WAIT`."""
    value = resp.headers.get("retry-after", "").strip()
    wait = 1.0
    if value:
        try:
            wait = float(value)
        except ValueError:
            try:
                wait = parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                wait = 1.0
    return min(max(wait, 0.0), MAX_WAIT)


def _message(resp: httpx.Response) -> str:
    """A JSON error's own message (``{"message"}``, ``{"error": {"message"}}``...), short; else ''."""
    if "json" not in resp.headers.get("content-type", ""):
        return ""
    try:
        payload = json.loads(resp.content)
    except ValueError:
        return ""
    if not isinstance(payload, dict):
        return ""
    error = payload.get("error")
    for value in (payload.get("message"), error.get("message") if isinstance(error, dict) else error):
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:200]
    return ""


def status_error(resp: httpx.Response, what: str) -> SourceError:
    """The :class:`SourceError` of a reply with an error status: 401/403 say the credentials were refused or
    lack a permission; 5xx and 429 are transient."""
    code = resp.status_code
    detail = _message(resp)
    if code == 401:
        text = f"{what}: HTTP 401: the source refused the credentials (check the user name and password or token)"
    elif code == 403:
        text = f"{what}: HTTP 403: the credentials may not read this (check their permissions)"
    elif code == 404:
        text = f"{what}: HTTP 404: not found"
    else:
        text = f"{what}: HTTP {code}"
    return SourceError(text + (f" ({detail})" if detail else ""), transient=code >= 500 or code == 429)


def _whole(resp: httpx.Response, limit: int, what: str, *, cut: bool = False) -> httpx.Response:
    """A streamed response read into one with its content: more than ``limit`` bytes is a
    :class:`SourceError`, or with ``cut`` the first ``limit`` bytes are kept."""
    body = bytearray()
    for chunk in resp.iter_bytes(READ_CHUNK):
        body += chunk
        if len(body) > limit:
            if not cut:
                raise SourceError(f"{what}: the reply is larger than {limit} bytes")
            del body[limit:]
            break
    headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() not in ("content-encoding",
                                                                                  "content-length",
                                                                                  "transfer-encoding")]
    return httpx.Response(resp.status_code, headers=headers, content=bytes(body), request=resp.request)


class Rest:
    """An httpx client for one service, through the outbound guard (see the module docstring)."""

    def __init__(self, base_url: str, *, setting: str, policy: OutboundPolicy, timeout: float,
                 headers: Mapping[str, str] | None = None, auth: tuple[str, str] | None = None,
                 max_reply: int = MAX_REPLY, sleep: Any = time.sleep) -> None:
        self.base_url, self.setting, self.policy = base_url, setting, policy
        self.max_reply, self.sleep = max_reply, sleep
        self.client = httpx.Client(transport=GuardedTransport(policy), timeout=timeout, follow_redirects=False,
                                   trust_env=False, headers={"User-Agent": USER_AGENT, **(headers or {})},
                                   auth=httpx.BasicAuth(*auth) if auth else None)

    def screen(self) -> None:
        """The base URL's host resolves to addresses this server may reach (a clear error before any request)."""
        screen_url(self.policy, self.base_url, self.setting)

    def request(self, method: str, url: str, what: str, **kwargs: Any) -> httpx.Response:
        """A request read whole (at most ``max_reply`` bytes: a larger reply is refused as it arrives), asked
        again while the service rate-limits it; an error status is the caller's to judge."""
        for attempt in range(RETRIES + 1):
            try:
                resp = self.client.send(self.client.build_request(method, url, **kwargs), stream=True)
                try:
                    resp = _whole(resp, self.max_reply, what)
                finally:
                    resp.close()
            except httpx.HTTPError as exc:
                raise SourceError(f"{what}: {type(exc).__name__}: {exc}", transient=True) from None
            if resp.status_code in (429, 503) and attempt < RETRIES and (
                    resp.status_code == 429 or "retry-after" in resp.headers):
                self.sleep(retry_after(resp))
                continue
            if resp.status_code == 429:
                raise SourceError(f"{what}: still rate limited (HTTP 429) after {RETRIES} retries", transient=True)
            return resp
        raise AssertionError("unreachable")

    def json(self, method: str, url: str, what: str, **kwargs: Any) -> Any:
        """A request's JSON reply; an error status or a reply that is not JSON is a :class:`SourceError`."""
        resp = self.request(method, url, what, **kwargs)
        if resp.status_code >= 300:
            raise status_error(resp, what)
        try:
            return resp.json()
        except ValueError:
            raise SourceError(f"{what}: the reply is not JSON "
                              f"({resp.headers.get('content-type', 'no content type')})") from None

    def stream(self, url: str, what: str, max_bytes: int, **kwargs: Any) -> Iterator[bytes]:
        """A GET's body, a piece at a time, at most ``max_bytes`` (redirects followed, each one guarded)."""
        for attempt in range(RETRIES + 1):
            try:
                with self.client.stream("GET", url, follow_redirects=True, **kwargs) as resp:
                    if resp.status_code == 429 and attempt < RETRIES:
                        wait = retry_after(resp)
                    elif resp.status_code >= 300:
                        raise status_error(_whole(resp, ERROR_BYTES, what, cut=True), what)
                    else:
                        yield from bounded(resp.iter_bytes(READ_CHUNK), max_bytes, what)
                        return
            except httpx.HTTPError as exc:
                raise SourceError(f"{what}: {type(exc).__name__}: {exc}", transient=True) from None
            self.sleep(wait)
        raise SourceError(f"{what}: still rate limited (HTTP 429) after {RETRIES} retries", transient=True)

    def close(self) -> None:
        self.client.close()
