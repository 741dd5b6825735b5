"""Legacy Word ``.doc`` and PowerPoint ``.ppt`` through LibreOffice headless.

When ``soffice`` (or ``libreoffice``) is on ``PATH`` the file is converted to
DOCX/PPTX in a private temporary directory (its own LibreOffice profile, a
timeout) and parsed by the DOCX/PPTX parser. Without LibreOffice the parse
fails with :class:`UnsupportedFormatError` saying LibreOffice is needed. This
is the one parser that touches the disk: only its temporary directory.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from ragloom.errors import ParseError, UnsupportedFormatError
from ragloom.ingest.blocks import ParsedDocument

log = logging.getLogger(__name__)
TIMEOUT_S = 120.0


def find_soffice() -> str | None:
    """The LibreOffice command on PATH, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(data: bytes, filename: str, suffix: str, target: str, timeout: float = TIMEOUT_S) -> bytes:
    """``data`` (a ``suffix`` file) converted by LibreOffice to ``target`` (``docx``/``pptx``)."""
    soffice = find_soffice()
    label = {"doc": "Word 97-2003 (.doc)", "ppt": "PowerPoint 97-2003 (.ppt)"}.get(suffix, suffix)
    if soffice is None:
        raise UnsupportedFormatError(
            f"{filename}: {label} files need LibreOffice to be converted, and it is not installed "
            f"(no 'soffice' or 'libreoffice' on PATH); install LibreOffice or save the file as .{target}"
        )
    with tempfile.TemporaryDirectory(prefix="ragloom-soffice-") as tmp:
        source = Path(tmp) / f"input.{suffix}"
        source.write_bytes(data)
        profile = f"-env:UserInstallation={Path(tmp).as_uri()}/profile"
        command = [soffice, "--headless", "--norestore", "--nologo", profile,
                   "--convert-to", target, "--outdir", str(Path(tmp) / "out"), str(source)]
        try:
            result = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ParseError(f"{filename}: LibreOffice did not convert the file within {timeout:.0f} s") from exc
        output = Path(tmp) / "out" / f"input.{target}"
        if result.returncode != 0 or not output.exists():
            detail = (result.stderr or result.stdout).decode("utf-8", errors="replace").strip()[-300:]
            raise ParseError(f"{filename}: LibreOffice could not convert the {label} file ({detail or 'no output'})")
        log.info("%s: converted to %s by LibreOffice", filename, target)
        return output.read_bytes()


class DocParser:
    """Word 97-2003 ``.doc``: converted to DOCX by LibreOffice, then parsed as DOCX."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        from ragloom.ingest.parsers.docx import DocxParser

        doc = DocxParser().parse(convert(data, filename, "doc", "docx"), filename)
        doc.metadata["converted_by"] = "LibreOffice"
        return doc


class PptParser:
    """PowerPoint 97-2003 ``.ppt``: converted to PPTX by LibreOffice, then parsed as PPTX."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        from ragloom.ingest.parsers.pptx import PptxParser

        doc = PptxParser().parse(convert(data, filename, "ppt", "pptx"), filename)
        doc.metadata["converted_by"] = "LibreOffice"
        return doc
