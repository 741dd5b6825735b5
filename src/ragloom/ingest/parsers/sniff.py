"""Content sniffing: what a file *is*, whatever its name says.

``detect_type`` looks at magic bytes (``%PDF-``, zip containers, OLE2, images),
then tries to decode the bytes as text (:func:`decode_text`: BOMs, UTF-16/32
without BOM, UTF-8, legacy code pages found by charset-normalizer) and looks for
HTML markers. The file name only decides between text flavours (``.md`` →
Markdown) and shapes error messages. Every text-ish parser decodes through
:func:`decode_text` (``parsers.text.decode_or_raise``).
"""

from __future__ import annotations

import codecs
import functools
import io
import json
import logging
import re
import zipfile
import zlib
from pathlib import PurePath
from typing import TYPE_CHECKING

from ragloom.errors import ParseError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

log = logging.getLogger(__name__)

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
    """Few characters no text holds: at most 1 % NULs and 5 % other control characters (an ANSI
    coloured log has some escapes; binary data read as Windows-1252 has 10 % and more), surrogates
    and non-characters. Private-use characters (icon fonts, CJK extensions in planes 15-16) and
    code points newer than Python's Unicode tables are text."""
    if not text:
        return True
    sample = text[:20000]
    bad = nuls = 0
    for ch in sample:
        if ch == "\x00":
            nuls += 1
        elif (ch < " " and ch not in "\t\n\r\f\v") or "\x7f" <= ch <= "\x9f" or "\ud800" <= ch <= "\udfff" \
                or ch in "\ufffe\uffff":
            bad += 1
    return nuls <= max(1, len(sample) // 100) and nuls + bad <= max(1, len(sample) // 20)


def _utf16_without_bom(data: bytes, least: float) -> tuple[str, str] | None:
    """UTF-16 or UTF-32 recognised by its zero bytes (the high bytes of ASCII and Latin text): at
    least the share ``least`` of one parity of bytes is zero, four times less of the other."""
    sample = data[:4096]
    half = len(sample) / 2
    if len(sample) < 4 or len(data) % 2:
        return None
    if len(data) % 4 == 0 and sample.count(0) > 0.6 * len(sample):
        candidates = ["utf-32-le", "utf-32-be"]
    else:
        even = sample[0::2].count(0) / half
        odd = sample[1::2].count(0) / half
        if odd >= least and even <= odd / 4:
            candidates = ["utf-16-le"]
        elif even >= least and odd <= even / 4:
            candidates = ["utf-16-be"]
        else:
            return None
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _looks_like_text(text):
            return text, encoding
    return None


# Windows and legacy code pages tried when a file is not UTF-8 (supersets: gb18030 ⊃ GBK ⊃ GB2312,
# cp932 ⊃ Shift-JIS, cp949 ⊃ EUC-KR, cp950 ⊃ Big5); earlier ones win a tie. KOI8-R comes later
# (_LESS_COMMON): its readings of a few CJK bytes look like Russian to the detector.
LEGACY_ENCODINGS = ["cp1252", "gb18030", "cp950", "cp932", "euc_jp", "cp949", "cp1250", "cp1251", "cp1253",
                    "cp1255", "cp1256", "utf_16_le", "utf_16_be"]
_LESS_COMMON = ["koi8_r", "koi8_u", "cp1254", "cp1257", "cp1258", "cp874"]  # tried when none of those fits
# what a charset label in a file (HTML <meta>, XML declaration) means, as browsers read it (WHATWG)
_LABELS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252",
           "ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "big5": "cp950",
           "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "euc-kr": "cp949",
           "ks_c_5601-1987": "cp949"}
_DETECT_BYTES = 1 << 18  # the legacy detector reads at most this much of a file
_ACCEPTED_CHAOS = 0.05  # detector results this close to the least chaotic one are all candidates
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_HIGH_BYTES = bytes(range(0x80, 0x100))
_FALLBACK_ERRORS = "ragloom.cp1252"


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte that is not UTF-8 is read as Windows-1252 (Latin-1 if unmapped)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    byte = exc.object[exc.start : exc.start + 1]
    try:
        return byte.decode("cp1252"), exc.start + 1
    except UnicodeDecodeError:
        return byte.decode("latin-1"), exc.start + 1


codecs.register_error(_FALLBACK_ERRORS, _cp1252_fallback)


def _mixed_utf8(data: bytes) -> str | None:
    """Text that is mostly UTF-8 with some Windows-1252 bytes (files pasted together): each byte
    that is not UTF-8 is read as cp1252. None when the non-UTF-8 bytes outnumber the UTF-8
    sequences (then the file is in a legacy encoding)."""
    sequences = _UTF8_SEQUENCE.findall(data)
    if not sequences:
        return None
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    invalid = high - sum(len(seq) for seq in sequences)
    return data.decode("utf-8", _FALLBACK_ERRORS) if len(sequences) >= invalid else None


def _common_share(text: str) -> float:
    """Share of the non-ASCII characters of ``text`` that are among the most frequent letters of
    some language (charset-normalizer's tables): a right decoding scores high, mojibake low."""
    common = _common_letters()
    non_ascii = [ch for ch in text[:20000] if ord(ch) > 127 and not ch.isspace()]
    return sum(ch in common for ch in non_ascii) / len(non_ascii) if non_ascii else 0.0


@functools.cache
def _common_letters() -> frozenset[str]:
    from charset_normalizer.constant import FREQUENCIES

    return frozenset(ch for letters in FREQUENCIES.values() for ch in letters if ord(ch) > 127)


def _legacy(data: bytes) -> tuple[str, str]:
    """A file in a legacy code page: charset-normalizer's least chaotic readings among
    :data:`LEGACY_ENCODINGS` (then KOI8, Turkish, Baltic, Vietnamese, Thai when none fits), the
    one whose characters are the most common letters of a language winning (then the order of the
    list). Western text whose reading also fits cp1252 is cp1252 (a detector cannot tell cp1250
    from cp1252 by a few accents). Windows-1252 reads any bytes when nothing else does."""
    from charset_normalizer import from_bytes

    sample = data[:_DETECT_BYTES]
    if len(data) > _DETECT_BYTES and b"\n" in sample:
        sample = sample[: sample.rindex(b"\n") + 1]
    isolation = [e for e in LEGACY_ENCODINGS if not e.startswith("utf_16") or (len(data) >= 64 and len(data) % 2 == 0)]
    matches = list(from_bytes(sample, cp_isolation=isolation))
    if not matches:
        matches = list(from_bytes(sample, cp_isolation=_LESS_COMMON))
    if not matches:  # no code page reads it without chaos: Windows-1252 (Latin-1 for its 5 holes)
        return data.decode("cp1252", _FALLBACK_ERRORS), "cp1252"
    least = min(m.chaos for m in matches)
    rank = {e: i for i, e in enumerate(LEGACY_ENCODINGS)}

    def score(match: CharsetMatch) -> tuple[float, int]:
        names = [match.encoding, *match.could_be_from_charset]
        best_rank = min(rank.get(n, len(rank)) for n in names)
        return match.coherence + _common_share(str(match)), -best_rank

    ranked = sorted((m for m in matches if m.chaos <= least + _ACCEPTED_CHAOS), key=score, reverse=True)
    for match in ranked:
        names = [match.encoding, *match.could_be_from_charset]
        encoding = "cp1252" if "cp1252" in names else min(names, key=lambda n: rank.get(n, len(rank)))
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:  # the detector read a sample: a later byte does not fit
            continue
    encoding = ranked[0].encoding
    log.info("no encoding reads every byte of the file: %s with replacement characters", encoding)
    return data.decode(encoding, "replace"), encoding


def charset_label(label: str | None) -> str | None:
    """The Python codec for a charset label found in a file (WHATWG meanings), or None when the
    label is unknown or names UTF-16/32 (which a byte-level label cannot)."""
    if not label:
        return None
    label = label.strip().lower()
    label = _LABELS.get(label, label)
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError):  # an unknown label, or one holding a NUL
        return None
    return None if name.startswith(("utf-16", "utf-32")) else name


def decode_text(data: bytes, declared: str | None = None) -> tuple[str, str] | None:
    """Decode bytes as text; returns ``(text, encoding)`` or None for binary data.

    Order: a BOM; UTF-16/32 without BOM (zero-byte pattern); the ``declared`` charset (a label
    from the file itself, e.g. HTML ``<meta charset>``) when the bytes fit it; UTF-8; UTF-8 with
    stray Windows-1252 bytes (encoding ``utf-8+cp1252``); a legacy code page found by
    charset-normalizer among :data:`LEGACY_ENCODINGS` (cp1252/Latin-1, GB18030/GBK, Big5,
    Shift-JIS, EUC-KR, Cyrillic...). The text is binary when it holds too many control characters.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                text = data[len(bom):].decode(encoding, "replace")
            return (text, encoding) if _looks_like_text(text) else None
    zeros = b"\x00" in data[:4096]
    if zeros and (wide := _utf16_without_bom(data, 0.3)) is not None:  # ASCII or Latin text in UTF-16/32
        return wide
    codec = charset_label(declared)
    if codec is not None:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            pass
        else:
            return (text, codec) if _looks_like_text(text) else None
    decoded: tuple[str, str] | None
    try:
        decoded = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None and _looks_like_text(decoded[0]):
        return decoded  # UTF-8 (with a few stray NULs, perhaps)
    if zeros and (wide := _utf16_without_bom(data, 0.02)) is not None:  # CJK with some ASCII in UTF-16
        return wide
    if decoded is None:
        mixed = _mixed_utf8(data)
        decoded = (mixed, "utf-8+cp1252") if mixed is not None else _legacy(data)
    if decoded is None or not _looks_like_text(decoded[0]):
        return None
    return decoded


_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError, EOFError, ValueError)


def _zip_type(data: bytes, filename: str) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
        epub = "META-INF/container.xml" in names and ("mimetype" not in names or _zip_mimetype(data) == EPUB)
    except _ZIP_ERRORS as exc:  # a damaged directory, or a mimetype entry that does not read back
        claimed = extension_type(filename)
        kind = "DOCX" if claimed == DOCX else "zip"
        raise ParseError(f"{filename}: not a valid {kind} file: the zip container is damaged ({exc})") from exc
    if epub:
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
    except RecursionError:  # nested too deeply to read here: the JSON parser says so, naming the limit
        return JSON
    except ValueError:
        pass
    lines = [line for line in decoded[0].splitlines()[:20] if line.strip()]
    try:
        for line in lines:
            json.loads(line)
    except RecursionError:
        return JSONL if len(lines) > 1 else JSON
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
