"""Containers are sniffed by what is inside them; legacy DOC/PPT need LibreOffice."""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from ragloom.errors import ParseError, UnsupportedFormatError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.ole import entry_names
from ragloom.ingest.parsers.sniff import DOC, DOCX, EPUB, PPT, PPTX, XLS, XLSX
from tests.ingest.docgen import make_docx, make_epub, make_ole, make_pptx, make_xlsx


def test_zip_containers_by_their_inner_files(tmp_path: Path) -> None:
    make_docx(tmp_path / "a.docx", [("p", "x")])
    make_pptx(tmp_path / "a.pptx", [{"title": "x"}])
    make_xlsx(tmp_path / "a.xlsx", {"S": [["a"]]})
    make_epub(tmp_path / "a.epub", "T", [("c.xhtml", "<p>x</p>")])
    for name, mime in [("a.docx", DOCX), ("a.pptx", PPTX), ("a.xlsx", XLSX), ("a.epub", EPUB)]:
        assert detect_type("mislabelled.pdf", (tmp_path / name).read_bytes()) == mime


@pytest.mark.parametrize(("stream", "mime"), [
    ("WordDocument", DOC), ("Workbook", XLS), ("PowerPoint Document", PPT),
])
def test_ole2_files_by_their_stream_names(tmp_path: Path, stream: str, mime: str) -> None:
    raw = make_ole(tmp_path / "f.bin", {stream: b"x" * 5000, "\x05SummaryInformation": b"s" * 100})
    assert stream in entry_names(raw)
    assert detect_type("renamed.docx", raw) == mime


def test_encrypted_office_file_says_so(tmp_path: Path) -> None:
    raw = make_ole(tmp_path / "e.docx", {"EncryptionInfo": b"i" * 200, "EncryptedPackage": b"p" * 5000})
    with pytest.raises(ParseError, match="encrypted and needs a password"):
        parse_document(raw, "e.docx")


@pytest.mark.parametrize(("stream", "name", "label"), [
    ("WordDocument", "old.doc", r"Word 97-2003 \(.doc\)"),
    ("PowerPoint Document", "old.ppt", r"PowerPoint 97-2003 \(.ppt\)"),
])
def test_legacy_formats_without_libreoffice_name_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: str, name: str, label: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no soffice / libreoffice to be found
    raw = make_ole(tmp_path / name, {stream: b"x" * 5000})
    with pytest.raises(UnsupportedFormatError, match=f"{label} files need LibreOffice.*not installed"):
        parse_document(raw, name)


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("soffice") or shutil.which("libreoffice")), reason="LibreOffice is not installed")
def test_legacy_doc_is_converted_by_libreoffice(tmp_path: Path) -> None:
    make_docx(tmp_path / "src.docx", [("h1", "Legacy"), ("p", "Converted words.")])
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    subprocess.run([soffice, "--headless", f"-env:UserInstallation={(tmp_path / 'p').as_uri()}", "--convert-to", "doc",
                    "--outdir", str(tmp_path), str(tmp_path / "src.docx")], check=True, timeout=180)
    doc = parse_document((tmp_path / "src.doc").read_bytes(), "src.doc")
    assert [b.text for b in doc.blocks] == ["Legacy", "Converted words."]
    assert doc.metadata["converted_by"] == "LibreOffice"


def test_unknown_zip_is_unsupported() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("data/readme.bin", b"\x00\x01")
    with pytest.raises(UnsupportedFormatError, match="application/zip are not supported"):
        parse_document(buf.getvalue(), "archive.zip")
