"""A folder on disk as the object store (the embedded default).

Layout: ``root/<namespace>/ab/cd/<sha256>`` for a key ``<namespace>/<sha256>``, and
``root/ab/cd/<sha256>`` for a legacy bare-sha256 key. Objects are written atomically
(temporary ``.tmp-*`` file in the target folder, fsync, rename) and made read-only. A file
given away with ``put_file(..., move=True)`` on the same filesystem is renamed into place
(fsync'ed first, no copy); from another filesystem it is copied in pieces like a write.

``put`` and the deletions (``delete``, ``delete_stale``, ``sweep``) exclude each other
through an advisory lock on ``root/.lock``: a put holds it *shared* around its
write-or-refresh (several puts run at once), a deletion holds it *exclusive* around its
re-check and unlink. So a put that finds the object refreshes its modification time
before any deletion can look at it again, and a put that comes after a deletion finds
the file gone and writes it again; a folder is never removed between a put's mkdir
and its rename.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from ragloom.errors import NotFoundError
from ragloom.filemodes import PRIVATE_DIR, make_private_dir
from ragloom.storage.base import StoredObject, SweepResult
from ragloom.storage.keys import FAN_RE as _FAN_RE
from ragloom.storage.keys import NAMESPACE_RE as _NAMESPACE_RE
from ragloom.storage.keys import SHA_RE as _SHA_RE
from ragloom.storage.keys import content_key, file_key, object_path

try:
    import fcntl
except ImportError:  # Windows: an exclusive lock for puts too (correct, less concurrent)
    fcntl = None  # type: ignore[assignment]

TEMP_PREFIX = ".tmp-"
LOCK_NAME = ".lock"
DELETE_BATCH = 256  # objects deleted per hold of the exclusive lock
COPY_CHUNK = 1 << 20  # bytes read and written at a time when a file is copied into the store


def _entries(path: str | Path) -> list[os.DirEntry[str]]:
    """A folder's entries; none when it vanished meanwhile."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


class LocalStore:
    """Files under ``root/<namespace>/ab/cd/<sha256>`` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        make_private_dir(self.root)
        self._lock_path = self.root / LOCK_NAME

    # ------------------------------------------------------------------ keys and locking

    def _path(self, key: str) -> Path:
        return self.root / object_path(key)

    @contextmanager
    def _locked(self, *, shared: bool) -> Iterator[None]:
        """Hold the store's lock (shared: puts; exclusive: deletions). A new descriptor per hold,
        so threads of one process exclude each other like processes do."""
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            else:  # pragma: no cover - Windows
                import filelock

                filelock.lock_descriptor(fd)
            yield
        finally:
            os.close(fd)  # releases the lock

    # ------------------------------------------------------------------ the object API

    def put(self, data: bytes, *, namespace: str) -> str:
        key = content_key(data, namespace)
        path = self._path(key)
        with self._locked(shared=True):
            try:
                os.utime(path)  # already stored: refresh, so garbage collection spares it
                return key
            except FileNotFoundError:  # not stored, or collected: write it
                pass
            except PermissionError:  # another user's file we may not touch: replace it (fresh mtime)
                pass
            self._write(path, data)
        return key

    def put_file(self, path: Path, *, namespace: str, sha256: str | None = None, move: bool = False) -> str:
        key = file_key(path, namespace, sha256)
        target = self._path(key)
        with self._locked(shared=True):
            try:
                os.utime(target)  # already stored: refresh, as put does
                stored = True
            except (FileNotFoundError, PermissionError):
                stored = False
            if not stored and not (move and self._adopt(Path(path), target)):
                with open(path, "rb") as src:
                    self._write(target, src)
        if move:
            Path(path).unlink(missing_ok=True)
        return key

    def _adopt(self, source: Path, target: Path) -> bool:
        """Rename ``source`` (made durable and read-only first) to ``target``; False when they are on
        different filesystems (the caller copies instead)."""
        self._make_dirs(target)
        with open(source, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(source, 0o444)
        try:
            os.replace(source, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            return False
        os.utime(target)  # its modification time is now, as a write's would be
        return True

    @staticmethod
    def _make_dirs(path: Path) -> None:
        for d in (path.parent.parent.parent, path.parent.parent, path.parent):
            with suppress(FileExistsError):
                d.mkdir(mode=PRIVATE_DIR)

    def _write(self, path: Path, data: bytes | BinaryIO) -> None:
        """Write ``data`` (bytes, or a file read in pieces) to a temporary file beside ``path``, fsync, rename."""
        self._make_dirs(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                if isinstance(data, bytes):
                    f.write(data)
                else:
                    shutil.copyfileobj(data, f, COPY_CHUNK)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"object {key} not found") from None

    def head(self, key: str, size: int) -> bytes:
        try:
            with self._path(key).open("rb") as f:
                return f.read(size)
        except FileNotFoundError:
            raise NotFoundError(f"object {key} not found") from None

    def stream(self, key: str, *, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        try:
            f = self._path(key).open("rb")
        except FileNotFoundError:
            raise NotFoundError(f"object {key} not found") from None
        return _pieces(f, chunk_size)

    def get_file(self, key: str, dest: Path) -> None:
        try:
            shutil.copyfile(self._path(key), dest)  # copy_file_range/sendfile: in the kernel
        except FileNotFoundError:
            raise NotFoundError(f"object {key} not found") from None

    def exists(self, key: str) -> bool:
        return self._path(key).exists()

    def delete(self, key: str) -> None:
        path = self._path(key)
        with self._locked(shared=False):
            path.unlink(missing_ok=True)

    def url(self, key: str, *, expires: int = 3600, filename: str | None = None,
            media_type: str | None = None) -> str | None:
        """None: files on this machine's disk have no address of their own (the API serves them)."""
        self._path(key)  # a malformed key is an error here too
        return None

    # ------------------------------------------------------------------ garbage collection

    def scan(self) -> Iterator[StoredObject]:
        for top in _entries(self.root):
            if not top.is_dir(follow_symlinks=False):
                continue
            if _FAN_RE.fullmatch(top.name):  # legacy: root/ab/cd/<sha>
                yield from self._scan_fan(Path(top.path), "")
            elif _NAMESPACE_RE.fullmatch(top.name):
                for fan in _entries(top.path):
                    if fan.is_dir(follow_symlinks=False) and _FAN_RE.fullmatch(fan.name):
                        yield from self._scan_fan(Path(fan.path), f"{top.name}/")

    def _scan_fan(self, first: Path, prefix: str) -> Iterator[StoredObject]:
        for second in _entries(first):
            if not (second.is_dir(follow_symlinks=False) and _FAN_RE.fullmatch(second.name)):
                continue
            for f in _entries(second.path):
                name = f.name
                if not (_SHA_RE.fullmatch(name) and name[:2] == first.name and name[2:4] == second.name):
                    continue
                try:
                    st = f.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if f.is_file(follow_symlinks=False):
                    yield StoredObject(prefix + name, st.st_size, st.st_mtime)

    def delete_stale(self, keys: Iterable[str], *, older_than: float) -> list[StoredObject]:
        paths = [(key, self._path(key)) for key in keys]
        deleted: list[StoredObject] = []
        for start in range(0, len(paths), DELETE_BATCH):
            with self._locked(shared=False):
                for key, path in paths[start : start + DELETE_BATCH]:
                    try:
                        st = path.stat()
                    except FileNotFoundError:
                        continue
                    if st.st_mtime >= older_than:  # refreshed by a put since it was scanned
                        continue
                    path.unlink(missing_ok=True)
                    deleted.append(StoredObject(key, st.st_size, st.st_mtime))
        return deleted

    def sweep(self, *, older_than: float, dry_run: bool = False) -> SweepResult:
        temps, dirs = self._sweep_candidates(older_than)
        result = SweepResult()
        if dry_run:
            result.temp_files, result.temp_bytes, result.dirs = len(temps), sum(s for _, s in temps), len(dirs)
            return result
        with self._locked(shared=False):
            for path, _ in temps:
                try:
                    st = path.stat()
                except FileNotFoundError:
                    continue
                if st.st_mtime < older_than:
                    path.unlink(missing_ok=True)
                    result.temp_files += 1
                    result.temp_bytes += st.st_size
            for d in dirs:  # deepest first; a folder that got an entry meanwhile stays
                try:
                    d.rmdir()
                    result.dirs += 1
                except OSError:
                    pass
        return result

    def _sweep_candidates(self, older_than: float) -> tuple[list[tuple[Path, int]], list[Path]]:
        """Temporary files older than ``older_than`` and the folders that would be empty without
        them (deepest first), found without the lock; the caller re-checks under it."""
        temps: list[tuple[Path, int]] = []
        dirs: list[Path] = []

        def visit(folder: Path) -> bool:  # True when the folder would end up empty
            empty = True
            for e in _entries(folder):
                if e.is_dir(follow_symlinks=False):
                    if visit(Path(e.path)):
                        dirs.append(Path(e.path))
                    else:
                        empty = False
                    continue
                if e.name.startswith(TEMP_PREFIX) and e.is_file(follow_symlinks=False):
                    try:
                        st = e.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    if st.st_mtime < older_than:
                        temps.append((Path(e.path), st.st_size))
                        continue
                empty = False
            return empty

        visit(self.root)  # the root itself always stays
        return temps, dirs


def _pieces(f: BinaryIO, chunk_size: int) -> Iterator[bytes]:
    with f:
        while piece := f.read(chunk_size):
            yield piece
