"""The parser interface, the MIME-type registry and the one entry point.

A :class:`Parser` turns the bytes of one file into a :class:`ParsedDocument`.
Parsers are looked up by the MIME type :func:`detect_type` finds in the
*content*, so a mislabelled file is parsed by what it is. Built-in parsers are
registered through :meth:`ParserRegistry.register`, exactly as an extension
would register its own.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Protocol, runtime_checkable

from lxml.etree import XMLSyntaxError

from ragloom.errors import ParseError, UnsupportedFormatError
from ragloom.ingest.blocks import ParsedDocument
from ragloom.ingest.parsers.bounds import is_depth_error, too_deep, xml_too_deep
from ragloom.ingest.parsers.sniff import detect_type


@runtime_checkable
class Parser(Protocol):
    """Parses one file.

    ``parse`` returns blocks in reading order (never an empty list) and raises
    :class:`ParseError` with a precise reason when the bytes are corrupt,
    encrypted, or hold no text. It must not touch the network or the disk.
    """

    def parse(self, data: bytes, filename: str) -> ParsedDocument: ...


class ParserRegistry:
    """Parsers keyed by MIME type; a factory is called once per parse."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[[], Parser]] = {}

    def register(self, mime: str, factory: Callable[[], Parser], *, replace: bool = False) -> None:
        """Register ``factory`` for ``mime``; refuses to overwrite unless ``replace``."""
        if mime in self._factories and not replace:
            raise ValueError(f"a parser for {mime} is already registered")
        self._factories[mime] = factory

    @property
    def supported(self) -> list[str]:
        return sorted(self._factories)

    def get(self, mime: str, filename: str | None = None) -> Parser:
        """The parser for ``mime``; :class:`UnsupportedFormatError` names the supported types."""
        factory = self._factories.get(mime)
        if factory is None:
            where = f"{filename}: " if filename else ""
            raise UnsupportedFormatError(
                f"{where}files of type {mime} are not supported; supported types: {', '.join(self.supported)}"
            )
        return factory()


def _register_builtins(registry: ParserRegistry) -> None:
    from ragloom.ingest.parsers import docx, html, markdown, text
    from ragloom.ingest.parsers.sniff import DOCX, HTML, MARKDOWN, PDF, PLAIN

    registry.register(PDF, _pdf_with_ocr)
    registry.register(DOCX, docx.DocxParser)
    registry.register(HTML, html.HtmlParser)
    registry.register(MARKDOWN, markdown.MarkdownParser)
    registry.register(PLAIN, text.TextParser)
    _register_other_formats(registry)
    _register_images(registry)


def _pdf_with_ocr() -> Parser:
    """The PDF parser; pages without a usable text layer go to the built-in OCR when it is installed."""
    from ragloom.ingest.ocr import default_page_reader
    from ragloom.ingest.parsers.pdf import PdfParser

    return PdfParser(ocr=default_page_reader())


def _register_images(registry: ParserRegistry) -> None:
    """PNG, JPEG and TIFF read by OCR (``parsers/image.py``; models load on first use)."""
    from ragloom.ingest.parsers import image

    for mime in (image.PNG, image.JPEG, image.TIFF):
        registry.register(mime, image.ImageParser)


def _register_other_formats(registry: ParserRegistry) -> None:
    """Office, e-mail, e-book and data formats (``parsers/{pptx,spreadsheet,mail,jsondoc,epub,legacy}.py``)."""
    from ragloom.ingest.parsers import epub, jsondoc, legacy, mail, pptx, spreadsheet
    from ragloom.ingest.parsers import sniff as t

    for mime, factory in [
        (t.PPTX, pptx.PptxParser), (t.XLSX, spreadsheet.XlsxParser), (t.XLS, spreadsheet.XlsParser),
        (t.CSV, spreadsheet.CsvParser), (t.TSV, spreadsheet.tsv_parser),
        # mail parsers parse attachments through parse_document, handed in so mail.py need not import this module
        (t.EML, lambda: mail.EmlParser(parse_document)), (t.MSG, lambda: mail.MsgParser(parse_document)),
        (t.JSON, jsondoc.JsonParser), (t.JSONL, jsondoc.JsonLinesParser),
        (t.EPUB, epub.EpubParser), (t.DOC, legacy.DocParser), (t.PPT, legacy.PptParser),
    ]:
        registry.register(mime, factory)


def new_registry() -> ParserRegistry:
    """A fresh registry holding the built-in parsers."""
    registry = ParserRegistry()
    _register_builtins(registry)
    return registry


@cache
def default_registry() -> ParserRegistry:
    """The process-wide registry (built on first use); extensions register here."""
    return new_registry()


def parse_document(data: bytes, filename: str, registry: ParserRegistry | None = None) -> ParsedDocument:
    """Detect the type of ``data`` and parse it.

    Raises :class:`ParseError` (empty, corrupt, encrypted, no text),
    :class:`UnsupportedFormatError` (a type no parser handles) or
    :class:`~ragloom.errors.LimitExceededError` (over an ingestion limit, named);
    nesting too deep for Python's recursion or libxml2 is reported as over
    ``max_nesting``, malformed XML as a ``ParseError``.
    """
    mime = detect_type(filename, data)
    parser = (registry or default_registry()).get(mime, filename)
    try:
        doc = parser.parse(data, filename)
    except RecursionError as exc:  # a last resort: parsers check max_nesting themselves
        raise too_deep(filename) from exc
    except XMLSyntaxError as exc:
        if is_depth_error(exc):
            raise xml_too_deep(filename) from exc
        raise ParseError(f"{filename}: malformed XML ({exc})") from exc
    if not any(b.text.strip() for b in doc.blocks):
        raise ParseError(f"{filename}: the document contains no text")
    doc.metadata.setdefault("mime_type", mime)
    return doc
