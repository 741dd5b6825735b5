"""Type sniffing and the precise errors for bad input."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from ragloom.errors import ParseError, UnsupportedFormatError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.sniff import DOCX, HTML, MARKDOWN, PDF, PLAIN
from tests.ingest.docgen import make_docx, make_image_only_pdf, make_pdf


def _junk(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


@pytest.fixture
def pdf_bytes(tmp_path: Path) -> bytes:
    make_pdf(tmp_path / "a.pdf", [["Hello from a real PDF file."]])
    return (tmp_path / "a.pdf").read_bytes()


def test_mislabelled_files_are_parsed_by_what_they_are(tmp_path: Path, pdf_bytes: bytes) -> None:
    make_docx(tmp_path / "d.docx", [("p", "Word body text")])
    assert detect_type("report.txt", pdf_bytes) == PDF
    assert detect_type("notes.pdf", (tmp_path / "d.docx").read_bytes()) == DOCX
    assert detect_type("page.txt", b"<!DOCTYPE html><html><body><p>x</p></body></html>") == HTML
    assert detect_type("readme", b"# Title\n\nSome text\n\n- a\n- b\n") == MARKDOWN
    assert detect_type("notes.md", b"plain words") == MARKDOWN
    assert detect_type("notes", b"plain words only") == PLAIN
    doc = parse_document(pdf_bytes, "report.txt")
    assert doc.blocks[0].text == "Hello from a real PDF file." and doc.blocks[0].page == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "the file is empty (0 bytes)"), (b" \n\t\n", "the file is empty (only whitespace)")],
)
def test_empty_files(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_document(data, "x.txt")


def test_encrypted_pdf_says_it_needs_a_password(tmp_path: Path) -> None:
    make_pdf(tmp_path / "e.pdf", [["Top secret words."]], encrypt_password="s3cret")
    with pytest.raises(ParseError, match="encrypted and needs a password"):
        parse_document((tmp_path / "e.pdf").read_bytes(), "e.pdf")


def test_truncated_pdf_is_corrupt(pdf_bytes: bytes) -> None:
    with pytest.raises(ParseError, match="corrupt PDF"):
        parse_document(pdf_bytes[:300], "cut.pdf")


def test_pdf_name_with_junk_content(pdf_bytes: bytes) -> None:
    with pytest.raises(ParseError, match="not a valid PDF: the file has no %PDF- header"):
        parse_document(_junk(3000), "junk.pdf")


def test_pdf_without_any_text_even_by_ocr(tmp_path: Path) -> None:
    make_image_only_pdf(tmp_path / "scan.pdf", n_pages=2)
    with pytest.raises(ParseError, match="no text was found, not even by OCR"):
        parse_document((tmp_path / "scan.pdf").read_bytes(), "scan.pdf")


def test_pdf_without_text_layer_and_without_ocr(tmp_path: Path) -> None:
    from ragloom.ingest.parsers import PdfParser

    make_image_only_pdf(tmp_path / "scan.pdf", n_pages=1)
    with pytest.raises(ParseError, match="no text layer and no OCR reader is configured"):
        PdfParser(ocr=None).parse((tmp_path / "scan.pdf").read_bytes(), "scan.pdf")


def test_docx_that_is_not_a_zip() -> None:
    with pytest.raises(ParseError, match="not a valid DOCX: the file is not a zip archive"):
        parse_document(_junk(2000), "letter.docx")


def test_docx_with_damaged_zip() -> None:
    with pytest.raises(ParseError, match="not a valid DOCX file: the zip container is damaged"):
        parse_document(b"PK\x03\x04" + _junk(500), "letter.docx")


def test_binary_junk_is_a_parse_error_not_unsupported() -> None:
    with pytest.raises(ParseError, match="binary data that matches no supported format") as info:
        parse_document(_junk(4000), "blob.bin")
    assert not isinstance(info.value, UnsupportedFormatError)


def test_unknown_types_name_the_type_and_the_supported_ones() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("data/readme.bin", b"\x00\x01")
    with pytest.raises(UnsupportedFormatError, match="application/zip are not supported") as info:
        parse_document(buf.getvalue(), "archive.zip")
    assert "application/pdf" in info.value.message and "text/markdown" in info.value.message
    with pytest.raises(UnsupportedFormatError, match="image/gif"):  # PNG, JPEG, TIFF go to OCR
        parse_document(b"GIF89a" + _junk(64), "photo.gif")


def test_registry_refuses_silent_overwrite_and_accepts_extensions() -> None:
    from ragloom.ingest.blocks import Block, ParsedDocument
    from ragloom.ingest.parsers import new_registry

    class Shouty:
        def parse(self, data: bytes, filename: str) -> ParsedDocument:
            return ParsedDocument(blocks=[Block(text=data.decode().upper())])

    registry = new_registry()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(PLAIN, Shouty)
    registry.register(PLAIN, Shouty, replace=True)
    assert parse_document(b"quiet words", "a.txt", registry).blocks[0].text == "QUIET WORDS"
