"""Rate limits per caller on the expensive and the public routes, and the cap on upload bytes in flight.

:class:`RateLimiter` keeps one token bucket per (bucket key, route group). The bucket key names one
caller, never a group of them (:mod:`ragloom.api.deps` makes it):

- an API key: ``key:<hash of the key>``;
- a signed-in browser session: ``user:<user id>:<workspace id>`` (the user in the workspace they act
  in, so one workspace's burst never limits another's, nor one user another's);
- a visitor of a public route (sign-up, sign-in): ``address:<client address>`` (an IPv6 address by
  its /64, what one subscriber usually holds).

Each bucket holds up to ``per_minute`` tokens (the burst) and refills at ``per_minute`` tokens a
minute; a call takes one token, and a call that finds none is refused with :class:`RateLimitedError`
carrying the seconds until the next token (sent as ``Retry-After``) and naming the setting and what
the limit is per. A call refused as malformed before any work was done (a 422 validation error)
gives its token back (:meth:`RateLimiter.refund`). ``per_minute = 0`` turns limiting off.

:class:`InflightBudget` caps the upload bytes being received and stored at once, for the whole
server and per caller: an upload is counted from its ``Content-Length`` before its body is read (or
byte by byte when it has none) and refused with 429 and ``Retry-After`` when it would go over.

:class:`LinkLimiter` counts a share link's questions per minute and per day, all its visitors
together (sliding windows: each link has its own limits).

All three live in this process's memory: each server process limits on its own, and a restart starts
every bucket full and nothing in flight.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from ragloom.errors import PayloadTooLargeError, RateLimitedError

MAX_BUCKETS = 100_000  # beyond this many, full (idle) buckets are forgotten
MIB = 1024 * 1024


class RateLimiter:
    """Token buckets keyed by (bucket key, route group); ``setting`` and ``per`` name the limit in the
    refusal's message (``per`` may be given per call: "API key", "user in a workspace", "address")."""

    def __init__(self, per_minute: int, *, setting: str = "RAGLOOM_RATE_LIMIT_PER_MINUTE", per: str = "API key",
                 clock: Callable[[], float] = time.monotonic, max_buckets: int = MAX_BUCKETS) -> None:
        self.per_minute = per_minute
        self.setting = setting
        self.per = per
        self._rate = per_minute / 60.0  # tokens per second
        self._clock = clock
        self._max_buckets = max_buckets
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # -> (tokens, at)
        self._lock = threading.Lock()

    def _tokens(self, bucket: tuple[str, str], now: float) -> float:
        tokens, at = self._buckets.get(bucket, (float(self.per_minute), now))
        return min(float(self.per_minute), tokens + (now - at) * self._rate)

    def check(self, key: str, group: str, *, per: str | None = None) -> None:
        """Take one token from the bucket of (``key``, ``group``) or raise :class:`RateLimitedError`."""
        if self.per_minute <= 0:
            return
        with self._lock:
            now = self._clock()
            tokens = self._tokens((key, group), now)
            if tokens < 1.0:
                self._buckets[(key, group)] = (tokens, now)
                wait = (1.0 - tokens) / self._rate
                raise RateLimitedError(
                    f"rate limit reached: at most {self.per_minute} {group} calls per minute per {per or self.per} "
                    f"({self.setting}); retry in {wait:.1f} s", retry_after=wait)
            self._buckets[(key, group)] = (tokens - 1.0, now)
            if len(self._buckets) > self._max_buckets:
                self._forget_full(now)

    def refund(self, key: str, group: str) -> None:
        """Give back the token a call took (it was refused before any work was done)."""
        if self.per_minute <= 0:
            return
        with self._lock:
            now = self._clock()
            self._buckets[(key, group)] = (min(float(self.per_minute), self._tokens((key, group), now) + 1.0), now)

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled completely (forgetting them changes nothing)."""
        full = [k for k, (tokens, at) in self._buckets.items()
                if tokens + (now - at) * self._rate >= self.per_minute]
        for k in full:
            del self._buckets[k]


def address_key(host: str) -> str:
    """The bucket key of a client address: an IPv4 address itself, an IPv6 one by its /64 (one
    subscriber's usual share, so hopping addresses inside it gains nothing), anything else as given."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return f"address:{host}"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 address a.b.c.d
            return f"address:{ip.ipv4_mapped}"
        return f"address:{ipaddress.IPv6Network((ip, 64), strict=False)}"
    return f"address:{ip}"


@dataclass(frozen=True, slots=True)
class Charge:
    """A token a request took from a bucket, kept in its ASGI scope (:func:`charge`)."""

    limiter: RateLimiter
    key: str
    group: str


CHARGE_SCOPE_KEY = "ragloom.rate_charge"


def charge(scope: MutableMapping[str, Any], limiter: RateLimiter, key: str, group: str, *, per: str) -> None:
    """Take a token of (``key``, ``group``) for this request (or raise :class:`RateLimitedError`) and
    keep it in the request's scope, where :func:`refund_charge` finds it."""
    limiter.check(key, group, per=per)
    scope[CHARGE_SCOPE_KEY] = Charge(limiter, key, group)


def charged(scope: Mapping[str, Any], group: str) -> bool:
    """Whether this request took a token of ``group`` already (the upload middleware takes it before
    the body is read; the route's own check then takes none)."""
    taken = scope.get(CHARGE_SCOPE_KEY)
    return isinstance(taken, Charge) and taken.group == group


def refund_charge(scope: MutableMapping[str, Any]) -> None:
    """Give back the token of a request refused before any work was done: as malformed (a 422 validation
    error; called where such an error becomes a response: the app's handler, the Dify and OpenAI
    routes'), or an upload refused for the bytes in flight."""
    taken = scope.pop(CHARGE_SCOPE_KEY, None)
    if isinstance(taken, Charge):
        taken.limiter.refund(taken.key, taken.group)
INFLIGHT_RETRY_SECONDS = 5.0  # what a refused upload is told to wait: uploads in flight end within seconds


class InflightBudget:
    """Upload bytes in flight, for the server (``total`` bytes) and per caller (``share`` bytes); 0 = no
    cap. :meth:`reserve` counts bytes or refuses: 429 (:class:`RateLimitedError`, retry after
    :data:`INFLIGHT_RETRY_SECONDS`) when the bytes already in flight leave no room, 413 when the upload
    is larger than a cap by itself (it could never fit); :meth:`release` gives them back."""

    def __init__(self, *, total_mb: int, share_mb: int) -> None:
        self.total, self.share = total_mb * MIB, share_mb * MIB
        self._total_mb, self._share_mb = total_mb, share_mb
        self._used = 0
        self._by_caller: dict[str, int] = {}
        self._lock = threading.Lock()

    def reserve(self, who: str, n: int, *, per: str, reserved: int = 0) -> None:
        """Count ``n`` more bytes of ``who``'s upload (which has ``reserved`` counted already)."""
        if n <= 0:
            return
        whole = reserved + n
        with self._lock:
            server = (self.total, self._total_mb, self._used, "this server", "RAGLOOM_MAX_UPLOAD_INFLIGHT_MB")
            caller = (self.share, self._share_mb, self._by_caller.get(who, 0), f"this {per}",
                      "RAGLOOM_MAX_UPLOAD_INFLIGHT_PER_PRINCIPAL_MB")
            caps = [c for c in (server, caller) if c[0] > 0]
            for cap, mb, _, what, setting in caps:
                if whole > cap:
                    raise PayloadTooLargeError(
                        f"this upload ({whole / MIB:.0f} MiB) is larger than the {mb} MiB of uploads {what} may have "
                        f"in flight at once ({setting})")
            for cap, mb, used, what, setting in caps:
                if used + n > cap:
                    raise RateLimitedError(
                        f"too many uploads in flight: {what} has {used / MIB:.0f} MiB being received, at most {mb} "
                        f"MiB at once ({setting}); retry in {INFLIGHT_RETRY_SECONDS:.0f} s",
                        retry_after=INFLIGHT_RETRY_SECONDS)
            self._used += n
            self._by_caller[who] = self._by_caller.get(who, 0) + n

    def release(self, who: str, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            self._used -= n
            left = self._by_caller.get(who, 0) - n
            if left > 0:
                self._by_caller[who] = left
            else:
                self._by_caller.pop(who, None)

    @property
    def in_flight(self) -> int:
        """Bytes counted now (all callers)."""
        return self._used


@dataclass
class _Window:
    minute: deque[float]
    day: deque[float]


class LinkLimiter:
    """Questions per minute and per day of each link, all its visitors together (this process's memory)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()

    def take(self, link_id: str, per_minute: int, per_day: int) -> None:
        """Count one question, or raise :class:`RateLimitedError` with the wait."""
        with self._lock:
            now = self._clock()
            w = self._windows.setdefault(link_id, _Window(deque(), deque()))
            for q, span in ((w.minute, 60.0), (w.day, 86400.0)):
                while q and q[0] <= now - span:
                    q.popleft()
            if len(w.day) >= per_day:
                wait = w.day[0] + 86400.0 - now
                raise RateLimitedError(f"this share link answers at most {per_day} questions a day; retry in "
                                       f"{wait / 3600:.1f} h", retry_after=wait)
            if len(w.minute) >= per_minute:
                wait = w.minute[0] + 60.0 - now
                raise RateLimitedError(f"this share link answers at most {per_minute} questions a minute; retry in "
                                       f"{wait:.0f} s", retry_after=wait)
            w.minute.append(now)
            w.day.append(now)
