"""Size checks the parsers make before a library gets to work on hostile bytes.

The limits come from :func:`ragloom.ingest.guard.limits` (the running task's
settings); an excess raises :class:`~ragloom.errors.LimitExceededError`, whose
message names the ``RAGLOOM_*`` setting.

* :func:`check_zip` — a zip-based file (DOCX, XLSX, PPTX, EPUB) is refused
  from its central directory when its entries would expand past
  ``max_unzipped_mb``, or are encrypted, or need a zip version or method
  that is not read, or are not where the directory says (a damaged
  container). The stdlib ``zipfile`` (which python-docx, python-pptx
  and openpyxl read through) never returns more bytes for an entry than the
  directory declares, so the declared sum also bounds what is actually read;
  entries compressed with anything but deflate (bzip2, lzma: one read may
  inflate without bound) are refused.
* :func:`render_scale` — the scale a page is rendered at so that its bitmap
  holds at most ``max_page_pixels``.
* :func:`check_json_depth` and :func:`too_deep` — nesting over ``max_nesting``
  (HTML counts it while walking the tree; XML parts of office files are
  bounded by libxml2, which refuses XML deeper than ``XML_MAX_DEPTH``:
  :func:`xml_too_deep`).
"""

from __future__ import annotations

import io
import math
import re
import zipfile

import numpy as np
from lxml import etree

from ragloom.errors import LimitExceededError, ParseError
from ragloom.ingest.guard import exceeded, limits

__all__ = [
    "MAX_ZIP_ENTRIES", "XML_MAX_DEPTH", "check_json_depth", "check_zip", "is_depth_error", "malformed_part", "named",
    "render_scale", "too_deep", "xml_too_deep",
]

XML_MAX_DEPTH = 256  # libxml2 refuses deeper XML ("Excessive depth") unless told huge_tree, which no reader here is
MAX_ZIP_ENTRIES = 100_000  # files in one zip container; an Office file holds a few dozen
_READABLE = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
_MIB = 1024 * 1024


def check_zip(data: bytes, filename: str, kind: str) -> None:
    """Refuse a ``kind`` zip container (``"DOCX"``...) that would unzip past ``max_unzipped_mb``.

    Reads only the central directory. A damaged container is left to the
    format's parser, which says what is wrong with it.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            entries = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ParseError(f"{filename}: the {kind} zip container holds {len(entries):,} files; "
                         f"more than {MAX_ZIP_ENTRIES:,} are not opened")
    odd = next((e for e in entries if e.compress_type not in _READABLE), None)
    if odd is not None:
        raise ParseError(f"{filename}: not a valid {kind}: {odd.filename} is compressed with method "
                         f"{odd.compress_type} (only stored and deflated entries are read)")
    locked = next((e for e in entries if e.flag_bits & 0x41), None)  # encrypted, or strongly encrypted
    if locked is not None:
        raise ParseError(f"{filename}: the {kind} is encrypted ({locked.filename} needs a password)")
    newer = next((e for e in entries if e.extract_version > zipfile.MAX_EXTRACT_VERSION), None)
    if newer is not None:
        raise ParseError(f"{filename}: not a valid {kind}: {newer.filename} needs zip version "
                         f"{newer.extract_version / 10:.1f} (damaged, or not a document)")
    for e in entries:  # where the directory says each entry is: inside the file, at a local header
        end = e.header_offset + e.compress_size
        if not 0 <= e.header_offset <= len(data) - 30 or end > len(data) \
                or data[e.header_offset : e.header_offset + 4] != b"PK\x03\x04":
            raise ParseError(f"{filename}: not a valid {kind}: the zip container is damaged ({e.filename} is not "
                             "where its directory says)")
    total = sum(e.file_size for e in entries)
    limit = limits().max_unzipped_bytes
    if total > limit:
        raise named(filename, exceeded("max_unzipped_mb", f"MiB unzipped ({kind})", limits().max_unzipped_mb,
                                        math.ceil(total / _MIB)))


def render_scale(width: float, height: float, scale: float, max_pixels: int | None = None) -> float:
    """``scale`` (pixels per unit), lowered so that a ``width`` x ``height`` page renders to at most
    ``max_pixels`` (default: the ``max_page_pixels`` limit), counting the renderer's rounding up."""
    limit = max_pixels if max_pixels is not None else limits().max_page_pixels
    width, height = max(abs(width), 1e-6), max(abs(height), 1e-6)
    if math.ceil(width * scale) * math.ceil(height * scale) <= limit:
        return scale
    fitted = math.sqrt(limit / (width * height))
    while fitted > 0 and math.ceil(width * fitted) * math.ceil(height * fitted) > limit:
        fitted *= 0.995
    return fitted


def too_deep(filename: str, found: int | None = None) -> LimitExceededError:
    """The error for a document nested deeper than ``max_nesting``."""
    return named(filename, exceeded("max_nesting", "levels of nesting", limits().max_nesting, found))


def xml_too_deep(filename: str) -> LimitExceededError:
    """The error for an XML part that libxml2 refused as nested deeper than it reads (``XML_MAX_DEPTH``)."""
    limit = min(limits().max_nesting, XML_MAX_DEPTH)
    return named(filename, exceeded("max_nesting", "levels of nesting (XML)", limit))


# a string, or an unterminated one up to the end: each quote starts at most one match, so the scan is
# linear (a pattern that needs the closing quote is tried again from every quote of an unterminated one)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def check_json_depth(text: str, filename: str) -> None:
    """Refuse JSON nested deeper than ``max_nesting`` before ``json.loads`` recurses into it.

    Counted without recursion: strings are removed, then the running sum of
    opening (+1) and closing (-1) brackets is taken with numpy.
    """
    limit = limits().max_nesting
    if text.count("[") + text.count("{") <= limit:
        return
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    depth = int(np.cumsum(steps).max()) if len(steps) else 0
    if depth > limit:
        raise too_deep(filename, depth)


def malformed_part(exc: AttributeError) -> bool:
    """Whether python-docx or python-pptx met a plain XML element where a part of the format was expected
    (a root element of the wrong name: ``'lxml.etree._Element' object has no attribute 'relationship_lst'``)
    or a generic package part where a typed one was (a content type changed in ``[Content_Types].xml``:
    ``'Part' object has no attribute 'notes_slide'``) — a damaged file, not a fault of the parser."""
    obj = getattr(exc, "obj", None)
    return isinstance(obj, etree._Element) or type(obj).__module__.startswith(("pptx.opc.", "docx.opc."))


def is_depth_error(exc: BaseException) -> bool:
    """Whether an lxml error is libxml2 refusing XML nested too deeply."""
    return "Excessive depth" in str(exc)


def named(filename: str, error: LimitExceededError) -> LimitExceededError:
    """``error`` with its message led by the file's name."""
    return LimitExceededError(f"{filename}: {error.message}")
