"""Whether a file name names something (a title) or is only an identifier (issue 26).

A name such as ``orion-manual.pdf`` or ``年度报告.docx`` says what the document is about, and is
blended into its vectors and indexed as its title (REFERENCE §6). A name that is an identifier says
nothing, and blending it in only adds the same noise to every chunk: numbers (``1.txt``), camera and
scanner names (``IMG_0042.jpg``, ``scan_000123.pdf``), hex digests (``e3b0c442…98fc.txt``), UUIDs,
random ids (``kq8ZxP2mT9vLw3Rb.pdf``) and dataset ids (``DEV_0``).
"""

from __future__ import annotations

import re

__all__ = ["is_identifier_token", "telling_name"]

_NAME_WORD = re.compile(r"[^\W\d_]{3,}|[\u3400-\u9fff]{2,}")
_CAMERA_NAME = re.compile(r"^(img|dsc|dscn|scan|pxl|image|file|doc|document|untitled|page|dev|test|train|"
                          r"id|uuid|hash|sha|md5|tmp|temp|copy|new|screenshot|photo|vid|mov|rec|wa)$", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+")
_HEX = re.compile(r"[0-9a-f]+", re.IGNORECASE)


def is_identifier_token(token: str) -> bool:
    """A run of letters and digits that identifies rather than names: a number, a hex string of 6 or
    more with a digit (or of 16 or more), or a long mix of letters and digits (a random id)."""
    if token.isdigit():
        return True
    if _HEX.fullmatch(token) and (len(token) >= 16 or (len(token) >= 6 and any(c.isdigit() for c in token))):
        return True
    digits = sum(c.isdigit() for c in token)
    return len(token) >= 10 and digits >= 2 and token.isascii()


def telling_name(filename: str) -> str | None:
    """The file name as the title text it is blended in as, or None when it names nothing: no word of
    three letters or two CJK characters outside its extension, its identifier tokens and camera,
    scanner or dataset prefixes (``1.txt``, ``IMG_0042.jpg``, ``scan-003.pdf``, a hex digest, a UUID)."""
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    tokens = [t for t in _TOKEN.findall(stem) if not is_identifier_token(t)]
    words = [w for t in tokens for w in _NAME_WORD.findall(t) if not _CAMERA_NAME.match(w)]
    return filename if words else None
