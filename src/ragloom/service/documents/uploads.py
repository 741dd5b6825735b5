"""Uploaded files on their way to the object store: spooled to disk, hashed and counted as they arrive.

A :class:`SpoolFile` is a private file in the data directory's ``uploads`` folder (:func:`spool_dir`)
that an upload's bytes are written to as they arrive: each write also feeds the sha256 the object
store keys the file by and counts its size, so a file over its limit is refused at the write that
crosses it, not after it was received whole. :meth:`SpoolFile.finish` gives the :class:`Spooled` file
(path, size, hash) that :func:`ragloom.service.documents.catalog.add_documents` moves into the object store
(``ObjectStore.put_file``: a rename on the local engine, an upload from the file on S3). Nothing of
an upload is ever held whole in memory.

A spool file is deleted when it is closed (unless it was moved into the store before); what a
killed server leaves behind is removed by :func:`sweep_spool` at the next start.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from ragloom.config import Settings
from ragloom.errors import PayloadTooLargeError
from ragloom.filemodes import make_private_dir

log = logging.getLogger(__name__)

SPOOL_PREFIX = ".upload-"
COPY_CHUNK = 1 << 20


def spool_dir(settings: Settings) -> Path:
    """The folder uploads are spooled to: ``<home>/uploads``, on the data directory's filesystem, so
    the local object store (``<home>/files``) takes a spooled file by renaming it."""
    folder = settings.home / "uploads"
    make_private_dir(folder)
    return folder


@dataclass(frozen=True, slots=True)
class Spooled:
    """A received file on disk: where it is, its size in bytes and its sha256 (hex)."""

    path: Path
    size: int
    sha256: str


class SpoolFile:
    """A file being received (see the module docstring): ``write`` hashes and counts; a write that takes
    it over ``limit`` bytes raises :class:`PayloadTooLargeError` with ``too_large`` as its message.

    It reads and seeks like a file too (Starlette's ``UploadFile`` wraps it), and is deleted on close.
    """

    def __init__(self, folder: Path, *, limit: int, too_large: str) -> None:
        fd, name = tempfile.mkstemp(dir=folder, prefix=SPOOL_PREFIX)
        self.path = Path(name)
        self._file: BinaryIO = os.fdopen(fd, "w+b")
        self._sha = hashlib.sha256()
        self.size = 0
        self.limit = limit
        self._too_large = too_large

    def write(self, data: bytes) -> int:
        if self.size + len(data) > self.limit:
            raise PayloadTooLargeError(self._too_large)
        self._file.write(data)
        self._sha.update(data)
        self.size += len(data)
        return len(data)

    def finish(self) -> Spooled:
        """The file as received (flushed to the operating system; the store makes it durable)."""
        self._file.flush()
        return Spooled(self.path, self.size, self._sha.hexdigest())

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        """Close and delete the file, unless it is gone from its path already (moved into the object
        store; a new spool file that got its name meanwhile is not this one and stays)."""
        if self._file.closed:
            return
        try:
            mine, there = os.fstat(self._file.fileno()), os.stat(self.path)
            if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
                self.path.unlink()
        except FileNotFoundError:
            pass
        finally:
            self._file.close()

    def __enter__(self) -> SpoolFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def spool_copy(source: BinaryIO, folder: Path, *, limit: int, too_large: str) -> SpoolFile:
    """Spool what is left to read of ``source`` (a file object), a piece at a time."""
    spool = SpoolFile(folder, limit=limit, too_large=too_large)
    try:
        while chunk := source.read(COPY_CHUNK):
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    return spool


@contextmanager
def scratch_file(settings: Settings) -> Iterator[Path]:
    """A new empty file in the spool folder, for a copy of a stored object (counted as a spool file by
    :func:`sweep_spool`), deleted afterwards."""
    fd, name = tempfile.mkstemp(dir=spool_dir(settings), prefix=SPOOL_PREFIX)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def sweep_spool(folder: Path, *, older_than_seconds: float = 24 * 3600.0) -> int:
    """Delete spool files older than ``older_than_seconds`` (left by a server that was killed while
    receiving); returns how many were deleted. Younger ones may belong to a server receiving now."""
    cutoff = time.time() - older_than_seconds
    removed = 0
    for entry in os.scandir(folder):
        if not entry.name.startswith(SPOOL_PREFIX):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            continue
    if removed:
        log.info("removed %d upload spool files left by an interrupted server in %s", removed, folder)
    return removed


__all__ = ["SpoolFile", "Spooled", "scratch_file", "spool_copy", "spool_dir", "sweep_spool"]
