"""Per-API-key rate limits on the expensive routes: one token bucket per (key, route group).

Each bucket holds up to ``per_minute`` tokens (the burst) and refills at ``per_minute`` tokens
a minute; a call takes one token, and a call that finds none is refused with
:class:`RateLimitedError` carrying the seconds until the next token (sent as ``Retry-After``).
``per_minute = 0`` turns limiting off.

The buckets live in this process's memory: each server process limits on its own, and a
restart starts every bucket full.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ragloom.errors import RateLimitedError

MAX_BUCKETS = 100_000  # beyond this many, full (idle) buckets are forgotten


class RateLimiter:
    """Token buckets keyed by (API key, route group)."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic,
                 max_buckets: int = MAX_BUCKETS) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / 60.0  # tokens per second
        self._clock = clock
        self._max_buckets = max_buckets
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # -> (tokens, at)
        self._lock = threading.Lock()

    def check(self, key: str, group: str) -> None:
        """Take one token from the bucket of (``key``, ``group``) or raise :class:`RateLimitedError`."""
        if self.per_minute <= 0:
            return
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get((key, group), (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - at) * self._rate)
            if tokens < 1.0:
                self._buckets[(key, group)] = (tokens, now)
                wait = (1.0 - tokens) / self._rate
                raise RateLimitedError(
                    f"rate limit reached: at most {self.per_minute} {group} calls per minute per API key "
                    f"(RAGLOOM_RATE_LIMIT_PER_MINUTE); retry in {wait:.1f} s", retry_after=wait)
            self._buckets[(key, group)] = (tokens - 1.0, now)
            if len(self._buckets) > self._max_buckets:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled completely (forgetting them changes nothing)."""
        full = [k for k, (tokens, at) in self._buckets.items()
                if tokens + (now - at) * self._rate >= self.per_minute]
        for k in full:
            del self._buckets[k]
