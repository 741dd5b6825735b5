"""Content sniffing: what a file *is*, whatever its name says.

``detect_type`` looks at magic bytes (``%PDF-``, zip containers, OLE2, images),
then tries to decode the bytes as text (BOMs, UTF-8, UTF-16 without BOM,
GB18030, Windows-1252) and looks for HTML markers. The file name only decides
between text flavours (``.md`` → Markdown) and shapes error messages.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
import zipfile
from pathlib import PurePath

from ragloom.errors import ParseError

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
HTML = "text/html"
MARKDOWN = "text/markdown"
PLAIN = "text/plain"
# other formats (office, e-mail, data): see ``_OLE_STREAMS``, ``_zip_type`` and ``_text_flavour``
DOC = "application/msword"
XLS = "application/vnd.ms-excel"
PPT = "application/vnd.ms-powerpoint"
MSG = "application/vnd.ms-outlook"
EPUB = "application/epub+zip"
EML = "message/rfc822"
CSV = "text/csv"
TSV = "text/tab-separated-values"
JSON = "application/json"
JSONL = "application/jsonl"
OLE_OTHER = "application/x-ole-storage (legacy .doc/.xls/.ppt)"

EXTENSION_TYPES: dict[str, str] = {
    ".pdf": PDF, ".docx": DOCX, ".xlsx": XLSX, ".pptx": PPTX,
    ".html": HTML, ".htm": HTML, ".xhtml": HTML,
    ".md": MARKDOWN, ".markdown": MARKDOWN, ".mdx": MARKDOWN,
    ".txt": PLAIN, ".text": PLAIN, ".log": PLAIN,
    ".doc": DOC, ".xls": XLS, ".ppt": PPT, ".msg": MSG, ".epub": EPUB, ".eml": EML,
    ".csv": CSV, ".tsv": TSV, ".tab": TSV, ".json": JSON, ".jsonl": JSONL, ".ndjson": JSONL,
}
# OLE2 container → the stream that names its format (first match wins)
_OLE_STREAMS: list[tuple[str, str]] = [
    ("__properties_version1.0", MSG), ("WordDocument", DOC), ("Workbook", XLS), ("Book", XLS),
    ("PowerPoint Document", PPT),
]
_TEXT_TYPES = {CSV, TSV, JSON, JSONL, EML}
_EML_MARKER = re.compile(
    rb"^(?:(?:Return-Path|Received|From|To|Cc|Subject|Date|Message-ID|MIME-Version|Delivered-To|X-[\w-]+):"
    rb"[^\n]*\r?\n(?:[ \t][^\n]*\r?\n)*){2,}",
    re.IGNORECASE,
)

_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!", "application/vnd.rar"),
    (b"{\\rtf", "application/rtf"),
]

_HTML_MARKER = re.compile(rb"<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])", re.IGNORECASE)
_MD_MARKER = re.compile(r"^(#{1,6}\s|```|\|.*\|\s*$|[-*]\s|\d+\.\s)", re.MULTILINE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
# a CJK character glued between Latin letters: accented Western text mis-decoded as GB18030
_LATIN_MOJIBAKE = re.compile(r"[A-Za-z][\u3400-\u9fff][a-z]")
_BOMS = [
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
]


def extension_type(filename: str) -> str | None:
    """The MIME type a file name claims, or None."""
    return EXTENSION_TYPES.get(PurePath(filename).suffix.lower())


def _looks_like_text(text: str) -> bool:
    if not text:
        return True
    bad = 0
    for ch in text[:20000]:
        cat = unicodedata.category(ch)
        if (cat == "Cc" and ch not in "\t\n\r\f\v") or cat in ("Co", "Cn", "Cs"):
            bad += 1
    return bad <= max(1, len(text[:20000]) // 200)


def _utf16_without_bom(data: bytes) -> str | None:
    sample = data[:4096]
    if len(sample) < 4 or len(data) % 2:
        return None
    even = sample[0::2].count(0) / (len(sample) / 2)
    odd = sample[1::2].count(0) / (len(sample) / 2)
    encoding = "utf-16-be" if even > 0.3 > odd else "utf-16-le" if odd > 0.3 > even else None
    if encoding is None:
        return None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def decode_text(data: bytes) -> tuple[str, str] | None:
    """Decode bytes as text; returns ``(text, encoding)`` or None for binary data.

    Order: BOM, UTF-16 without BOM (NUL pattern), UTF-8, GB18030 (kept only
    when most non-ASCII characters come out as CJK), Windows-1252.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                return None
            return (text, encoding) if _looks_like_text(text) else None
    if b"\x00" in data[:4096]:
        utf16 = _utf16_without_bom(data)
        return (utf16, "utf-16") if utf16 is not None and _looks_like_text(utf16) else None
    candidates = ["utf-8", "gb18030", "cp1252"]
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "gb18030":
            non_ascii = [ch for ch in text if ord(ch) > 127]
            if non_ascii and sum(bool(_CJK.match(c)) for c in non_ascii) < 0.8 * len(non_ascii):
                continue
            if _LATIN_MOJIBAKE.search(text) and len(_LATIN_MOJIBAKE.findall(text)) * 3 > len(non_ascii):
                continue  # "M黮ler": Latin-1 accents read as CJK inside Latin words
        if _looks_like_text(text):
            return text, encoding
        return None
    return None


def _zip_type(data: bytes, filename: str) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
    except zipfile.BadZipFile as exc:
        claimed = extension_type(filename)
        kind = "DOCX" if claimed == DOCX else "zip"
        raise ParseError(f"{filename}: not a valid {kind} file: the zip container is damaged ({exc})") from exc
    if "META-INF/container.xml" in names and ("mimetype" not in names or _zip_mimetype(data) == EPUB):
        return EPUB
    if "word/document.xml" in names:
        return DOCX
    if any(n.startswith("xl/") for n in names):
        return XLSX
    if any(n.startswith("ppt/") for n in names):
        return PPTX
    return "application/zip"


def _zip_mimetype(data: bytes) -> str:
    """The ``mimetype`` entry of an OCF (EPUB) zip, stripped."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.read("mimetype").decode("ascii", errors="replace").strip()


def _ole_type(data: bytes, filename: str) -> str:
    from ragloom.ingest.parsers.ole import entry_names

    names = entry_names(data)
    if "EncryptedPackage" in names:
        raise ParseError(f"{filename}: the Office document is encrypted and needs a password")
    for stream, mime in _OLE_STREAMS:
        if stream in names:
            return mime
    return OLE_OTHER


def _text_flavour(claimed: str | None, data: bytes) -> str | None:
    """CSV/TSV/JSON/JSONL/EML when the name says so, or JSON/e-mail by content."""
    if claimed in _TEXT_TYPES:
        return claimed
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if claimed not in (HTML, MARKDOWN) and _EML_MARKER.match(head) and re.search(
        rb"^(From|Subject):", head, re.IGNORECASE | re.MULTILINE
    ):
        return EML
    if head[:1] in (b"{", b"[") and claimed is None:
        return _json_flavour(data)
    return None


def _json_flavour(data: bytes) -> str | None:
    """JSON when the whole text parses, JSON Lines when each of the first lines does."""
    decoded = decode_text(data)
    if decoded is None:
        return None
    try:
        json.loads(decoded[0])
        return JSON
    except ValueError:
        pass
    lines = [line for line in decoded[0].splitlines()[:20] if line.strip()]
    try:
        for line in lines:
            json.loads(line)
    except ValueError:
        return None
    return JSONL if len(lines) > 1 else None


def detect_type(filename: str, data: bytes) -> str:
    """The MIME type of ``data`` by its content; the name only picks a text flavour.

    Raises :class:`ParseError` for an empty file, a damaged zip container, or
    binary data that is no known format (naming what the name claimed).
    """
    if not data:
        raise ParseError(f"{filename}: the file is empty (0 bytes)")
    if not data.strip(b" \t\r\n\x00\x0b\x0c"):
        raise ParseError(f"{filename}: the file is empty (only whitespace)")
    if b"%PDF-" in data[:1024]:
        return PDF
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _zip_type(data, filename)
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return _ole_type(data, filename)
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    claimed = extension_type(filename)
    decoded = decode_text(data)
    if decoded is None:
        raise ParseError(_binary_reason(filename, claimed))
    text = decoded[0]
    flavour = _text_flavour(claimed, data)
    if flavour:
        return flavour
    if claimed == HTML or _HTML_MARKER.search(data[:4096].replace(b"\x00", b"")):
        return HTML
    if claimed in (MARKDOWN, PLAIN):
        return claimed
    return MARKDOWN if len(_MD_MARKER.findall(text[:20000])) >= 2 else PLAIN


def _binary_reason(filename: str, claimed: str | None) -> str:
    if claimed == PDF:
        return f"{filename}: not a valid PDF: the file has no %PDF- header (corrupt or not a PDF)"
    if claimed == DOCX:
        return f"{filename}: not a valid DOCX: the file is not a zip archive"
    return (
        f"{filename}: binary data that matches no supported format "
        "(it is not PDF, DOCX, HTML, Markdown or text in a known encoding)"
    )
