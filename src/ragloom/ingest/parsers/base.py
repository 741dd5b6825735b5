"""The parser interface, the MIME-type registry and the one entry point.

A :class:`Parser` turns the bytes of one file into a :class:`ParsedDocument`.
Parsers are looked up by the MIME type :func:`detect_type` finds in the
*content*, so a mislabelled file is parsed by what it is. :data:`parsers` is a
:class:`~ragloom.registry.Registry`: the built-ins are listed in
:mod:`ragloom.plugins`, extensions come through the entry-point group
``ragloom.parsers`` (named by MIME type) or ``parsers.register(mime, factory)``.
"""

from __future__ import annotations

import zipfile
import zlib
from typing import Protocol, runtime_checkable
from xml.etree import ElementTree

from lxml.etree import XMLSyntaxError

from ragloom.errors import ParseError, UnsupportedFormatError
from ragloom.ingest.blocks import ParsedDocument
from ragloom.ingest.parsers.bounds import is_depth_error, too_deep, xml_too_deep
from ragloom.ingest.parsers.clean import clean_parsed
from ragloom.ingest.parsers.sniff import detect_type
from ragloom.registry import Registry


@runtime_checkable
class Parser(Protocol):
    """Parses one file.

    ``parse`` returns blocks in reading order (never an empty list) and raises
    :class:`ParseError` with a precise reason when the bytes are corrupt,
    encrypted, or hold no text. It must not touch the network or the disk.
    """

    def parse(self, data: bytes, filename: str) -> ParsedDocument: ...


parsers: Registry[[], Parser] = Registry("parser", "ragloom.parsers", error=UnsupportedFormatError)
"""Parser factories keyed by MIME type (built-ins: :mod:`ragloom.plugins`); a factory is called once per parse."""


def pdf_with_ocr() -> Parser:
    """The PDF parser; pages without a usable text layer go to the built-in OCR when it is installed."""
    from ragloom.ingest.ocr import default_page_reader
    from ragloom.ingest.parsers.pdf import PdfParser

    return PdfParser(ocr=default_page_reader())


def eml_parser() -> Parser:
    """The e-mail parser; attachments are parsed through :func:`parse_document`, handed in so that
    ``mail.py`` need not import this module."""
    from ragloom.ingest.parsers.mail import EmlParser

    return EmlParser(parse_document)


def msg_parser() -> Parser:
    """The Outlook message parser; attachments as in :func:`eml_parser`."""
    from ragloom.ingest.parsers.mail import MsgParser

    return MsgParser(parse_document)


def new_registry() -> Registry[[], Parser]:
    """A fresh registry holding the built-in parsers (and the plugins)."""
    return parsers.fresh()


def default_registry() -> Registry[[], Parser]:
    """The process-wide registry; extensions register here."""
    return parsers


def parse_document(data: bytes, filename: str, registry: Registry[[], Parser] | None = None) -> ParsedDocument:
    """Detect the type of ``data`` and parse it.

    Raises :class:`ParseError` (empty, corrupt, encrypted, no text),
    :class:`UnsupportedFormatError` (a type no parser handles) or
    :class:`~ragloom.errors.LimitExceededError` (over an ingestion limit, named);
    nesting too deep for Python's recursion or libxml2 is reported as over
    ``max_nesting``, malformed XML and a zip container part that does not read back (bad CRC,
    bad header, corrupt deflate data) as a ``ParseError``. Every text of the result is cleaned
    (:mod:`~ragloom.ingest.parsers.clean`: lone surrogates, control characters, stray BOMs), so any
    Unicode a file holds is kept or cleaned, never fatal later; removed characters are counted in
    ``removed["control_characters"]``.
    """
    mime = detect_type(filename, data)
    registry = registry or parsers
    if mime not in registry:
        raise UnsupportedFormatError(
            f"{filename}: files of type {mime} are not supported; supported types: {', '.join(registry.names)}"
        )
    parser = registry.create(mime)
    try:
        doc = parser.parse(data, filename)
    except RecursionError as exc:  # a last resort: parsers check max_nesting themselves
        raise too_deep(filename) from exc
    except XMLSyntaxError as exc:
        if is_depth_error(exc):
            raise xml_too_deep(filename) from exc
        raise ParseError(f"{filename}: malformed XML ({exc})") from exc
    except ElementTree.ParseError as exc:  # openpyxl streams sheets through the stdlib's parser
        raise ParseError(f"{filename}: malformed XML ({exc})") from exc
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # a part of a zip container that does not read back
        raise ParseError(f"{filename}: the zip container is damaged ({exc})") from exc
    clean_parsed(doc)
    if not any(b.text.strip() for b in doc.blocks):
        raise ParseError(f"{filename}: the document contains no text")
    doc.metadata.setdefault("mime_type", mime)
    return doc
