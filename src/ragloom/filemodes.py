"""Folders and files private to the user who runs ragloom.

What ragloom creates in its data directory (the folder itself, ``files``, ``index``,
``cache``, the SQLite database) holds every tenant's documents, so it is created
readable by its owner only: folders 0700, the database file 0600 (SQLite gives its
``-wal`` and ``-shm`` files the database file's mode). A folder or file that already
exists is left as it is: ragloom tightens only what it creates.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def make_private_dir(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and its missing parents with mode 0700; existing folders keep their mode."""
    path = Path(path)
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # made meanwhile by someone else: not ours to change
            continue
        os.chmod(d, PRIVATE_DIR)  # exactly 0700, whatever the umask
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a directory")


def create_private_file(path: str | os.PathLike[str]) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists; True when it was created here."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return False
    try:
        if hasattr(os, "fchmod"):  # exactly 0600, whatever the umask
            os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return True
