"""A folder on disk as the object store (the embedded default)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from ragloom.errors import InvalidRequestError, NotFoundError

_KEY = re.compile(r"^[0-9a-f]{64}$")


class LocalStore:
    """Files under ``root/ab/cd/<sha256>``, written atomically (temp file + rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise InvalidRequestError(f"not an object key: {key!r}")
        return self.root / key[:2] / key[2:4] / key

    def put(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        path = self._path(key)
        if path.exists():
            return key
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return key

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"object {key} not found") from None

    def exists(self, key: str) -> bool:
        return self._path(key).exists()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)
