"""Object keys and where an object lives, the same for every engine.

A key is ``"<namespace>/<sha256 hex>"`` (or a bare sha256 hex, stored before namespaces existed).
Every engine keeps the object of a key at the same relative path, ``<namespace>/ab/cd/<sha256>``
(``ab/cd/<sha256>`` for a bare key): a folder of the local engine and a prefix of a bucket hold
the same tree, so copying one onto the other (``aws s3 sync``) moves a store between engines.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ragloom.errors import InvalidRequestError

NAMESPACE = r"[0-9a-z][0-9a-z_-]{2,63}"
NAMESPACE_RE = re.compile(NAMESPACE)
SHA_RE = re.compile(r"[0-9a-f]{64}")
FAN_RE = re.compile(r"[0-9a-f]{2}")
KEY_RE = re.compile(rf"(?:(?P<ns>{NAMESPACE})/)?(?P<sha>[0-9a-f]{{64}})")
_PATH_RE = re.compile(rf"(?:(?P<ns>{NAMESPACE})/)?(?P<a>[0-9a-f]{{2}})/(?P<b>[0-9a-f]{{2}})/(?P<sha>[0-9a-f]{{64}})")


def content_key(data: bytes, namespace: str) -> str:
    """The key of ``data`` in ``namespace``; ``InvalidRequestError`` for a malformed namespace."""
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise InvalidRequestError(f"not an object namespace: {namespace!r}")
    return f"{namespace}/{hashlib.sha256(data).hexdigest()}"


def file_key(path: str | Path, namespace: str, sha256: str | None = None) -> str:
    """The key of the file at ``path`` in ``namespace``: ``sha256`` when the caller already knows the
    content hash (a malformed one is an ``InvalidRequestError``), else computed by reading the file in
    pieces (never whole)."""
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise InvalidRequestError(f"not an object namespace: {namespace!r}")
    if sha256 is None:
        with open(path, "rb") as f:
            sha256 = hashlib.file_digest(f, "sha256").hexdigest()
    elif not SHA_RE.fullmatch(sha256):
        raise InvalidRequestError(f"not a sha256 hex digest: {sha256!r}")
    return f"{namespace}/{sha256}"


def object_path(key: str) -> str:
    """Where the object of ``key`` lives, relative to the store's root: ``<ns>/ab/cd/<sha256>``
    (``ab/cd/<sha256>`` for a legacy key); ``InvalidRequestError`` for a malformed key."""
    m = KEY_RE.fullmatch(key) if isinstance(key, str) else None
    if m is None:
        raise InvalidRequestError(f"not an object key: {key!r}")
    sha = m["sha"]
    fanned = f"{sha[:2]}/{sha[2:4]}/{sha}"
    return f"{m['ns']}/{fanned}" if m["ns"] else fanned


def key_at(path: str) -> str | None:
    """The key whose object lives at ``path`` (relative to the store's root, ``/``-separated);
    None for anything else (leftovers, stray files, a sha in a folder that does not match it)."""
    m = _PATH_RE.fullmatch(path)
    if m is None or m["sha"][:2] != m["a"] or m["sha"][2:4] != m["b"]:
        return None
    return f"{m['ns']}/{m['sha']}" if m["ns"] else m["sha"]
