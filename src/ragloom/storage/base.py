"""The object store interface."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class ObjectStore(Protocol):
    """Content-addressed blob storage.

    ``put`` stores bytes under the sha256 hex of their content and returns that
    key; storing the same bytes twice is a no-op returning the same key. Stored
    objects are never modified. ``get`` raises ``NotFoundError`` for an unknown
    key. ``delete`` of an unknown key does nothing.
    """

    def put(self, data: bytes) -> str: ...

    def get(self, key: str) -> bytes: ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...
