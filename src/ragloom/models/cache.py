"""Models built from stored settings, kept while those settings stay the same.

A workspace's own model providers (:mod:`ragloom.service.accounts.providers`) are rows of the database, read
for each use; the model built from a row is kept under a key (``chat:<tenant>``, an embedding model's
name, ...) with a *fingerprint* of the settings it was built from, and rebuilt when the fingerprint
changes (a new base URL, model or API key). One :class:`ModelCache` per process (``Context.workspace_models``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


class ModelCache:
    """Thread-safe; a model is built outside the lock (building one may call its endpoint), so two
    threads may both build it once — the second one's is kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, tuple[str, object]] = {}

    def get(self, key: str, fingerprint: str, build: Callable[[], T]) -> T:
        """The model kept under ``key`` when it was built with ``fingerprint``, else ``build()`` (kept)."""
        with self._lock:
            hit = self._items.get(key)
        if hit is not None and hit[0] == fingerprint:
            return cast(T, hit[1])
        model = build()
        with self._lock:
            self._items[key] = (fingerprint, model)
        return model

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
