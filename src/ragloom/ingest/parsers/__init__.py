"""Format parsers: bytes → :class:`~ragloom.ingest.blocks.ParsedDocument`."""

from ragloom.ingest.parsers.base import (
    Parser,
    default_registry,
    new_registry,
    parse_document,
    parsers,
)
from ragloom.ingest.parsers.pdf import PdfParser, pdf_page_count
from ragloom.ingest.parsers.sniff import decode_text, detect_type

__all__ = [
    "Parser",
    "PdfParser",
    "decode_text",
    "default_registry",
    "detect_type",
    "new_registry",
    "parse_document",
    "parsers",
    "pdf_page_count",
]
