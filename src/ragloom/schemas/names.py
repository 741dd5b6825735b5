"""Upload file names, and every other name a person gives (knowledge bases, workspaces, assistants,
chat sessions, API keys, people), made safe to store, list and send back.

:func:`normalize_filename` keeps the last path component, applies Unicode NFC, turns
whitespace controls (tab, newline, ...) into spaces, removes every other control or
format character (categories Cc and Cf: NUL, bidi overrides and isolates, zero-width
characters, the BOM; also lone surrogates), collapses runs of whitespace, strips
leading and trailing dots and spaces, and bounds the length (keeping the extension).
A name with nothing left is an :class:`InvalidRequestError`.

:func:`clean_name` cleans any other name the same way (NFC; whitespace controls become spaces; NUL,
the other controls, bidi overrides and isolates, zero-width characters and the BOM are removed;
whitespace runs collapse; the ends are trimmed), without the path and dot rules of a file name; a
request body's name field is :data:`DisplayName`, cleaned while it is validated.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import AfterValidator

from ragloom.errors import InvalidRequestError

MAX_FILENAME_CHARS = 255
_MAX_EXTENSION_CHARS = 16  # a longer "extension" is just part of the name
_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_UNSAFE_ASCII = re.compile(r"[^A-Za-z0-9._()+ -]+")


def _visible(name: str) -> str:
    """NFC, whitespace controls as spaces, every other control or format character removed."""
    text = unicodedata.normalize("NFC", name)
    return "".join(" " if ch.isspace() else ch for ch in text
                   if ch.isspace() or unicodedata.category(ch) not in _REMOVED_CATEGORIES)


def clean_name(name: str) -> str:
    """A person-given name as stored and shown (see the module docstring); ``""`` when nothing is left."""
    return unicodedata.normalize("NFC", " ".join(_visible(name).split()))


def _display_name(value: str) -> str:
    cleaned = clean_name(value)
    if not cleaned:
        raise ValueError("a name needs a visible character (control and format characters are removed)")
    return cleaned


DisplayName = Annotated[str, AfterValidator(_display_name)]
"""A request's name field: cleaned by :func:`clean_name`, refused (422) when nothing visible is left."""
OptionalName = Annotated[str, AfterValidator(clean_name)]
"""A request's name field that may be empty: cleaned by :func:`clean_name`."""


def normalize_filename(name: str, max_chars: int = MAX_FILENAME_CHARS) -> str:
    """The stored form of an uploaded file's name (see the module docstring)."""
    text = _visible(name)
    base = text.replace("\\", "/").rsplit("/", 1)[-1]
    base = unicodedata.normalize("NFC", " ".join(base.split())).strip(". ")
    if len(base) > max_chars:
        base = _shorten(base, max_chars).strip(". ")
    if not base:
        raise InvalidRequestError(
            f"invalid file name {name[:300]!r}: nothing is left once control characters, path parts and "
            "leading/trailing dots and spaces are removed"
        )
    return base


def _shorten(name: str, max_chars: int) -> str:
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 0 < len(ext) <= _MAX_EXTENSION_CHARS and len(ext) + 1 < max_chars:
        return stem[: max_chars - len(ext) - 1].rstrip(". ") + "." + ext
    return name[:max_chars].rstrip(". ")


def ascii_filename(name: str) -> str:
    """A plain-ASCII stand-in for ``name``: the ``filename="..."`` fallback of a Content-Disposition
    header (the real name goes in ``filename*``). Accents are dropped, anything else outside letters,
    digits, space and ``._()+-`` becomes ``_``; a name with no letter or digit left is ``download``
    (with its extension)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    stem, dot, ext = folded.rpartition(".")
    if not dot:
        stem, ext = folded, ""
    stem = " ".join(_UNSAFE_ASCII.sub("_", stem).split()).strip(". ")
    ext = _UNSAFE_ASCII.sub("", ext)[:_MAX_EXTENSION_CHARS]
    if not any(ch.isalnum() for ch in stem):
        stem = "download"
    return f"{stem}.{ext}" if ext else stem
