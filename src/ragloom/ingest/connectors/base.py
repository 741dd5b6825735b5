"""The :class:`Connector` protocol, what it lists (:class:`Item`), what it is made from
(:class:`ConnectorSpec`), and the registry of connector types (:data:`connectors`).

A connector lists the items of its source — each with an id that stays the same while the item lives
(a path, a URL, a page id), a *change token* that changes when its content does (an ETag, mtime and
size, a revision), a title, a URL back to the source, metadata and the principals allowed to read it —
and reads an item's bytes on demand. Listing must be cheap for an unchanged item: a sync compares the
token with the one it kept and reads nothing when they are equal.

A type's factory takes a :class:`ConnectorSpec` and raises ``InvalidRequestError`` naming the setting
when its settings are wrong; errors met while listing or reading are :class:`SourceError` (``transient``
when trying again later may help: a timeout, a 503).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from ragloom.errors import InvalidRequestError, RagloomError
from ragloom.registry import Registry

if TYPE_CHECKING:
    from ragloom.models.http import OutboundPolicy

READ_CHUNK = 1 << 20
_UNSAFE_NAME = re.compile(r"[^\w.\- ()]+")


class SourceError(RagloomError):
    """A source could not be listed or an item not read; ``transient`` when a retry may succeed."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True, slots=True)
class Item:
    """One item of a source, as listed."""

    id: str  # stable while the item lives at the source (a renamed file keeps it only where the source has ids)
    token: str  # changes when the content changes: equal token, nothing to read
    name: str  # a file name for its document (the extension tells the format)
    title: str = ""
    path: str = ""  # where it is at the source (a relative path, a URL's path)
    url: str = ""  # back to the source
    size: int | None = None  # bytes, when the listing knows it
    content_type: str = ""
    metadata: Mapping[str, str | int | float | bool] = field(default_factory=dict)
    # who may read it at the source, () = unknown: ``user:<lower-cased e-mail>`` (:func:`user_principal`; a
    # source's own user id where it shows no e-mail) and ``group:<name>`` (:func:`group_principal`)
    principals: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ConnectorSpec:
    """What a connector is made from: the source's settings and credentials, and the server's limits."""

    settings: Mapping[str, Any]
    credentials: Mapping[str, str] = field(default_factory=dict)
    roots: tuple[Path, ...] = ()  # folders of the server's disk a folder source may read (RAGLOOM_SOURCE_ROOTS)
    outbound_allow: tuple[str, ...] = ()  # non-public address ranges a network source may reach
    timeout: float = 30.0  # seconds per request of a network source
    max_bytes: int = 128 * 1024 * 1024  # largest item read


class Connector(Protocol):
    """A source's connector (see the module docstring)."""

    def settings(self) -> dict[str, Any]:
        """The settings as validated and normalised (what is stored)."""
        ...

    def check(self) -> str:
        """Test the connection (reach the source, list a little); a short message, or :class:`SourceError`."""
        ...

    def list_items(self) -> Iterator[Item]:
        """Every item of the source, each once."""
        ...

    def problems(self) -> list[str]:
        """What the last listing could not reach (a page that timed out...): while there is any, the listing
        may have missed items that still exist, so a sync deletes nothing."""
        ...

    def read(self, item: Item) -> Iterator[bytes]:
        """The item's content, a piece at a time (at most ``max_bytes``: more is a :class:`SourceError`)."""
        ...

    def close(self) -> None:
        """Release what it holds (connections, temporary files)."""
        ...


@runtime_checkable
class GroupSource(Protocol):
    """A connector that also knows the members of the groups its items name as principals (Confluence):
    a sync keeps those groups of the workspace in step (``ragloom.service.sources.sync``)."""

    def groups(self) -> Iterator[tuple[str, list[str]]]:
        """Each group the last listing's principals named, with its members' e-mail addresses (members
        whose e-mail the source does not show are left out)."""
        ...


connectors: Registry[[ConnectorSpec], Connector] = Registry("source type", "ragloom.connectors")
"""Connector types by name: ``folder``, ``web``, ``s3``, ``git``, ``webdav``, ``imap``, ``confluence``,
``notion`` and the plugins' (``ragloom.connectors``)."""


def open_connector(kind: str, spec: ConnectorSpec) -> Connector:
    """A connector of type ``kind``; ``InvalidRequestError`` for an unknown type (naming the known ones)
    or wrong settings."""
    return connectors.create(kind, spec)


def setting(settings: Mapping[str, Any], name: str, kind: type, default: Any = None, *, required: bool = False) -> Any:
    """One setting, checked: missing and required, or of the wrong type, is an ``InvalidRequestError``."""
    value = settings.get(name, default)
    if value is None:
        if required:
            raise InvalidRequestError(f"settings.{name} is required")
        return None
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidRequestError(f"settings.{name} must be {kind.__name__}, not {type(value).__name__}")
    return value


def unknown_settings(settings: Mapping[str, Any], known: set[str]) -> None:
    """``InvalidRequestError`` naming a setting the type does not have."""
    extra = sorted(set(settings) - known)
    if extra:
        raise InvalidRequestError(f"unknown setting(s) {', '.join(extra)}; this type takes {', '.join(sorted(known))}")


def screen_url(policy: OutboundPolicy, url: str, setting: str) -> None:
    """``url``'s host resolves to addresses this server may reach (the outbound guard): else an
    ``InvalidRequestError`` naming ``setting``, or a transient :class:`SourceError` when it does not resolve."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        _, refused = policy.screen(host, parts.port or (443 if parts.scheme == "https" else 80),
                                   f"{setting}'s host {host}")
    except OSError as exc:
        raise SourceError(f"{setting}: {host} does not resolve: {exc}", transient=True) from None
    if refused:
        raise InvalidRequestError(f"{setting}: {refused}")


def user_principal(email: str) -> str:
    """A user as an item's principal: ``user:`` and the e-mail address, stripped and lower-cased (the
    convention source permissions match on)."""
    return "user:" + email.strip().lower()


def group_principal(name: str) -> str:
    """A group as an item's principal: ``group:`` and its name, stripped (a group name's case is kept)."""
    return "group:" + name.strip()


def safe_file_name(title: str, fallback: str, ext: str) -> str:
    """A file name made of a title (a page's, a message's subject): characters other than letters, digits
    and ``.-_ ()`` become ``_``, at most 150 of them, then ``ext``; ``fallback`` when nothing is left."""
    stem = _UNSAFE_NAME.sub("_", title).strip(" ._-")[:150].strip(" ._-")
    return f"{stem or fallback}{ext}"


def bounded(chunks: Iterable[bytes], max_bytes: int, name: str) -> Iterator[bytes]:
    """``chunks`` passed on as they come, until more than ``max_bytes`` have come: then a
    :class:`SourceError` (an item is refused as it arrives, never read whole first)."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise SourceError(f"{name} is larger than {max_bytes} bytes")
        yield chunk
