"""The ``folder`` connector: the files under a folder of the server's disk.

The folder must lie inside one of the folders the administrator allows (``RAGLOOM_SOURCE_ROOTS``),
symbolic links resolved: a source can never read ``/etc`` by naming it, nor through a link inside an
allowed folder that points out of it (such a file is left out of the listing and refused when read).
Linked folders are not followed (no loops). An item's id is its path relative to the folder (so a
renamed file is a deleted one and a new one), its change token its modification time and size: a
listing reads no file.

**Permissions.** With ``owner_email_domain`` (e.g. ``example.com``) a file's Unix permissions become its
principals, for knowledge bases with source permissions: a file anyone on the machine may read (``o+r``)
has none (everyone reads it); another is read by its owner (``user:<owner>@<domain>``, when ``u+r``) and
its group (``group:<group name>``, when ``g+r``). A ``chmod`` reaches the next sync without the file
being read again (the sync compares the principals too).
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    READ_CHUNK,
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    group_principal,
    setting,
    unknown_settings,
    user_principal,
)

ROOTS_SETTING = "RAGLOOM_SOURCE_ROOTS"


DOMAIN = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")


def _name(lookup: Any, ident: int) -> str:
    """A user's or group's name by id (the number when the system has no name for it)."""
    try:
        return str(lookup(ident)[0])
    except KeyError:
        return str(ident)


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


class FolderConnector:
    """See the module docstring. Settings: ``path`` (required), ``hidden`` (also files and folders whose
    name starts with a dot; default false), ``owner_email_domain`` (the files' Unix permissions as their
    principals; default: none)."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"path", "hidden", "owner_email_domain"})
        raw = setting(spec.settings, "path", str, required=True).strip()
        self.hidden = bool(setting(spec.settings, "hidden", bool, False))
        domain = (setting(spec.settings, "owner_email_domain", str) or "").strip().lower().lstrip("@")
        if domain and not DOMAIN.fullmatch(domain):
            raise InvalidRequestError(f"settings.owner_email_domain {domain!r} is not a mail domain")
        self.domain = domain
        self.max_bytes = spec.max_bytes
        if not spec.roots:
            raise InvalidRequestError(f"no folder may be a source on this server: an administrator allows folders "
                                      f"with {ROOTS_SETTING}")
        self.roots = tuple(os.path.realpath(r) for r in spec.roots)
        if not raw or not os.path.isabs(raw):
            raise InvalidRequestError(f"settings.path must be an absolute path, not {raw!r}")
        real = os.path.realpath(raw)
        if not _inside(real, self.roots):
            raise InvalidRequestError(f"settings.path {raw!r} is outside the folders sources may read "
                                      f"({ROOTS_SETTING})")
        if not os.path.isdir(real):
            raise InvalidRequestError(f"settings.path {raw!r} is not a folder")
        self.path = raw
        self.real = real

    def settings(self) -> dict[str, Any]:
        return {"path": self.path, "hidden": self.hidden,
                **({"owner_email_domain": self.domain} if self.domain else {})}

    def _principals(self, st: os.stat_result) -> tuple[str, ...]:
        """A file's readers by its Unix permissions (module docstring); () without ``owner_email_domain``."""
        if not self.domain or st.st_mode & stat.S_IROTH:
            return ()
        found = []
        if st.st_mode & stat.S_IRUSR:
            found.append(user_principal(f"{_name(pwd.getpwuid, st.st_uid)}@{self.domain}"))
        if st.st_mode & stat.S_IRGRP:
            found.append(group_principal(_name(grp.getgrgid, st.st_gid)))
        return tuple(found) or (user_principal(f"{_name(pwd.getpwuid, st.st_uid)}@{self.domain}"),)

    def check(self) -> str:
        if not os.path.isdir(self.real):
            raise SourceError(f"{self.path} is not a folder any more")
        try:
            with os.scandir(self.real) as entries:
                count = sum(1 for _ in entries)
        except OSError as exc:
            raise SourceError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        return f"{self.path}: {count} entries at the top"

    def list_items(self) -> Iterator[Item]:
        if not os.path.isdir(self.real):
            raise SourceError(f"{self.path} is not a folder any more")

        def walk_error(exc: OSError) -> None:
            if exc.filename == self.real:
                raise SourceError(f"cannot read {self.path}: {exc.strerror or exc}") from None

        for folder, dirs, files in os.walk(self.real, onerror=walk_error, followlinks=False):
            dirs[:] = sorted(d for d in dirs if self.hidden or not d.startswith("."))
            for name in sorted(files):
                if not self.hidden and name.startswith("."):
                    continue
                item = self._item(os.path.join(folder, name))
                if item is not None:
                    yield item

    def _item(self, full: str) -> Item | None:
        real = os.path.realpath(full)
        if not _inside(real, self.roots):
            return None  # a link out of the allowed folders
        try:
            st = os.stat(real)
        except OSError:
            return None  # gone meanwhile, or a dangling link
        if not stat.S_ISREG(st.st_mode):
            return None
        rel = Path(os.path.relpath(full, self.real)).as_posix()
        modified = datetime.fromtimestamp(st.st_mtime, UTC).isoformat()
        return Item(id=rel, token=f"{st.st_mtime_ns}-{st.st_size}", name=os.path.basename(full),
                    title=os.path.basename(full), path=rel, url=Path(full).as_uri(), size=st.st_size,
                    metadata={"path": rel, "modified": modified}, principals=self._principals(st))

    def problems(self) -> list[str]:
        """A folder is listed whole or not at all."""
        return []

    def read(self, item: Item) -> Iterator[bytes]:
        full = os.path.normpath(os.path.join(self.real, item.id))
        real = os.path.realpath(full)
        if not _inside(full, (self.real,)) or not _inside(real, self.roots):
            raise SourceError(f"{item.id}: outside the folders sources may read")
        try:  # non-blocking: a FIFO put in the file's place must not hang the sync
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise SourceError(f"cannot read {item.id}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise SourceError(f"{item.id} is not a regular file any more")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            yield from bounded(iter(lambda: f.read(READ_CHUNK), b""), self.max_bytes, item.id)

    def close(self) -> None:
        """Nothing held."""
