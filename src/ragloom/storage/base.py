"""The object store interface."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class StoredObject:
    """One object as the store sees it: its key, its size and when it was last written or refreshed."""

    key: str
    size: int
    mtime: float  # seconds since the epoch


@dataclass(slots=True)
class SweepResult:
    """What :meth:`ObjectStore.sweep` removed (or, in a dry run, would remove)."""

    temp_files: int = 0
    temp_bytes: int = 0
    dirs: int = 0


@runtime_checkable
class ObjectStore(Protocol):
    """Immutable blobs under per-namespace content keys.

    ``put(data, namespace=ns)`` stores bytes under ``"<ns>/<sha256 hex of data>"`` and returns
    that key. The namespace is the tenant id, so two tenants storing the same bytes get two
    objects: neither a key nor the time a put takes tells a tenant what another one stored.
    A namespace is 3 to 64 characters of ``[0-9a-z_-]`` starting with a letter or digit;
    anything else is an ``InvalidRequestError``. Keys stored before namespaces existed (a bare
    sha256 hex) stay readable and deletable.

    Putting bytes already stored under the key writes nothing but *refreshes* the object's
    modification time, and writes the object again when it vanished meanwhile: a put announces
    that a reference to the key is about to be recorded, and garbage collection spares what
    was refreshed within its grace period (:mod:`ragloom.service.documents.gc`). ``put`` and
    ``delete_stale`` are atomic with respect to each other: a put either happens before a
    deletion (which then sees the fresh modification time and keeps the object) or after it
    (and writes the object again).

    Stored objects are never modified. ``get`` raises ``NotFoundError`` for an unknown key;
    ``delete`` of an unknown key does nothing; a malformed key is an ``InvalidRequestError``.
    A store that cannot be reached or refuses its configuration raises ``ConfigError`` (naming
    the setting to fix) or ``StoreError`` (a fault worth retrying).

    Engines (``RAGLOOM_OBJECT_STORE``): ``local`` (:class:`~ragloom.storage.local.LocalStore`, a
    folder on disk) and ``s3`` (:class:`~ragloom.storage.s3.S3Store`, any S3-compatible service);
    both keep an object at the same relative path (:mod:`ragloom.storage.keys`).
    """

    def put(self, data: bytes, *, namespace: str) -> str: ...

    def put_file(self, path: Path, *, namespace: str, sha256: str | None = None, move: bool = False) -> str:
        """Store the content of the file at ``path`` exactly as :meth:`put` stores bytes (same key, same
        refresh of a stored object, same exclusion of deletions) without ever holding it whole in memory,
        and return its key. ``sha256`` is the content's hash when the caller already computed it (an
        upload hashed while it was received; a wrong one stores the content under a wrong key, so only
        pass a hash computed from these very bytes), else the file is read to compute it.

        With ``move`` the file is the caller's to give away: afterwards it is gone from ``path``, moved
        into the store where the engine can (the local engine renames it when ``path`` is on the same
        filesystem) or deleted once its content is stored. Without ``move`` the file is only read.
        ``FileNotFoundError`` when there is no file at ``path``."""
        ...

    def get(self, key: str) -> bytes: ...

    def head(self, key: str, size: int) -> bytes:
        """The first ``size`` bytes of the object (all of it when it is shorter), without reading the
        rest; ``NotFoundError`` for an unknown key."""
        ...

    def get_file(self, key: str, dest: Path) -> None:
        """Write the object to a new file at ``dest`` a piece at a time (never whole in memory);
        ``NotFoundError`` for an unknown key."""
        ...

    def stream(self, key: str, *, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """The object's bytes in pieces of at most ``chunk_size`` (a download served without holding it
        whole); ``NotFoundError`` for an unknown key, raised before the first piece."""
        ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...

    def url(self, key: str, *, expires: int = 3600, filename: str | None = None,
            media_type: str | None = None) -> str | None:
        """A URL that lets anyone holding it GET the object for ``expires`` seconds (presigned),
        served as ``media_type`` and, with ``filename``, as an attachment of that name; None when the
        engine has no such URLs (the local engine: the API serves the bytes). It does not check
        that the object exists."""
        ...

    def scan(self) -> Iterator[StoredObject]:
        """Every stored object (legacy keys included), in no particular order."""
        ...

    def delete_stale(self, keys: Iterable[str], *, older_than: float) -> list[StoredObject]:
        """Delete those of ``keys`` last written or refreshed before ``older_than`` (epoch seconds),
        re-checking each one atomically with respect to ``put``; returns the deleted objects."""
        ...

    def sweep(self, *, older_than: float, dry_run: bool = False) -> SweepResult:
        """Remove what interrupted writes leave behind (temporary files older than ``older_than``)
        and empty folders; with ``dry_run`` only count them."""
        ...
