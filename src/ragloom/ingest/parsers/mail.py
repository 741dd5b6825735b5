"""E-mail: EML (stdlib ``email``) and Outlook MSG (``extract-msg``).

A message gives a header block (``From/To/Cc/Date/Subject`` lines; the same
values in its ``meta``, with ``meta["part"] == "headers"``, and in the document metadata), its body (plain text
preferred, else the main text of the HTML part) and then each attachment,
parsed recursively with :func:`~ragloom.ingest.parsers.parse_document`: the
attachment's blocks follow with the heading path ``(subject, attachment name,
...)``; they lose their page boxes (pages of another file) and keep the page
in ``meta["attachment_page"]``. An attachment that cannot be parsed becomes a
block saying why (``meta["attachment_error"]``); it never fails the message.

**Cost**: the ``email`` package's header parser takes time quadratic in a header's length (a
subject of 16,000 encoded words: 1.3 s; a Content-Type of 50,000 parameters: 13 s). A header
value is given to it only up to :data:`HEADER_PARSE_CHARS` characters (:class:`_BoundedPolicy`);
the headers shown (From, To, Cc, Date, Subject) that are longer are decoded whole by a linear
reader of RFC 2047 encoded words instead. An attached message is written back out without
refolding its headers (refolding parses them).
"""

from __future__ import annotations

import base64
import binascii
import email
import io
import logging
import re
import struct
import zipfile
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from email.message import EmailMessage, Message, MIMEPart
from email.policy import EmailPolicy
from typing import TYPE_CHECKING, Any

from lxml.etree import XMLSyntaxError

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers.sniff import decode_text

log = logging.getLogger(__name__)
# Parses an attachment (bytes, filename); ``base.parse_document`` in the built-in registry. Injected so that
# this module need not import the registry that registers it.
ParseFn = Callable[[bytes, str], ParsedDocument]
HEADERS = ("From", "To", "Cc", "Date", "Subject")
MAX_DEPTH = 4  # messages attached to messages attached to ...
_DEPTH: ContextVar[int] = ContextVar("ragloom_attachment_depth", default=0)
_LIBRARY_ERRORS = (ValueError, KeyError, IndexError, OSError, zipfile.BadZipFile, XMLSyntaxError)
_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n+")
HEADER_PARSE_CHARS = 4096  # longer header values are cut to this before the email package parses them
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([qQbB])\?([^?\s]*)\?=")
_BETWEEN_WORDS = re.compile(r"[ \t]+")
_FOLD = re.compile(r"\r?\n(?=[ \t])")
# what the email package's structured header parsers raise on some hostile values instead of recording a defect
_HEADER_BUGS = (OverflowError, ValueError, IndexError, TypeError, AttributeError, KeyError)


if TYPE_CHECKING:  # generic in the stubs only
    _Policy = EmailPolicy[EmailMessage]
else:
    _Policy = EmailPolicy


class _BoundedPolicy(_Policy):
    """``email.policy.default``, except that a header value longer than :data:`HEADER_PARSE_CHARS` is
    cut to that length before the email package parses it (its parser is quadratic in the length)."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        if isinstance(value, str) and len(value) > HEADER_PARSE_CHARS:
            value = value[:HEADER_PARSE_CHARS]
        try:
            return super().header_fetch_parse(name, value)
        except _HEADER_BUGS:  # the stdlib's parser fails on some values (a Date in the year 10^20): kept as text
            return super().header_fetch_parse(f"X-Unparsed-{name}", value)


_POLICY = _BoundedPolicy()


def _decode_word(match: re.Match[str]) -> str:
    charset, encoding, text = match.group(1).split("*", 1)[0], match.group(2), match.group(3)
    try:
        if encoding in "bB":
            data = base64.b64decode(text + "=" * (-len(text) % 4))
        else:
            data = binascii.a2b_qp(text, header=True)
        return data.decode(charset, errors="replace")
    except (LookupError, ValueError):  # an unknown charset, bad base64 (binascii.Error is a ValueError)
        return match.group(0)


def decode_words(value: str) -> str:
    """A raw header value unfolded, its RFC 2047 encoded words decoded (white space between two of them
    dropped); linear in the length, unlike the email package's parser."""
    value = _FOLD.sub("", value)
    out: list[str] = []
    end = 0
    for match in _ENCODED_WORD.finditer(value):
        gap = value[end : match.start()]
        if not (end > 0 and _BETWEEN_WORDS.fullmatch(gap)):  # white space between two encoded words goes
            out.append(gap)
        out.append(_decode_word(match))
        end = match.end()
    out.append(value[end:])
    return "".join(out)


def _header_text(msg: Message, name: str) -> str:
    """A header shown in the header block, on one line: parsed by the email package, or when longer than
    :data:`HEADER_PARSE_CHARS` decoded by :func:`decode_words` (a long recipient list is kept whole)."""
    raw = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    if raw is None:
        return ""
    text = str(msg.get(name, "")) if len(raw) <= HEADER_PARSE_CHARS else decode_words(raw)
    return " ".join(text.split())


@dataclass(slots=True)
class Mail:
    """What both formats yield before blocks are made."""

    headers: dict[str, str]
    body: str = ""
    html: str = ""
    attachments: list[tuple[str, bytes]] = field(default_factory=list)


def _body_blocks(mail: Mail, path: tuple[str, ...]) -> list[Block]:
    if mail.body.strip():
        text = mail.body.replace("\r\n", "\n")
        return [Block(text=p.strip("\n"), heading_path=path) for p in _BLANK_LINES.split(text) if p.strip()]
    if mail.html.strip():
        from ragloom.ingest.parsers.html import HtmlParser

        try:
            doc = HtmlParser().parse(mail.html.encode("utf-8"), "body.html")
        except ParseError:
            return []
        for block in doc.blocks:
            block.heading_path = path + block.heading_path
        return doc.blocks
    return []


def _failed(name: str, where: tuple[str, ...], reason: str) -> Block:
    return Block(text=f"Attachment {name}: not parsed: {reason}", heading_path=where,
                 meta={"attachment": name, "attachment_error": reason})


def _attachment_blocks(name: str, data: bytes, path: tuple[str, ...], parse_document: ParseFn) -> list[Block]:
    where = (*path, name)
    depth = _DEPTH.get()
    if depth >= MAX_DEPTH:
        return [_failed(name, where, f"attachments nested deeper than {MAX_DEPTH} messages are not opened")]
    token = _DEPTH.set(depth + 1)
    try:
        doc = parse_document(data, name)
    except ParseError as exc:
        log.info("attachment %s not parsed: %s", name, exc.message)
        return [_failed(name, where, exc.message)]
    except _LIBRARY_ERRORS as exc:  # a format library choking on a damaged attachment: not the message's fault
        log.warning("attachment %s not parsed", name, exc_info=True)
        return [_failed(name, where, f"{name}: unreadable ({type(exc).__name__}: {exc})")]
    finally:
        _DEPTH.reset(token)
    for block in doc.blocks:
        block.heading_path = where + block.heading_path
        block.meta["attachment"] = name
        if block.page is not None:
            block.meta["attachment_page"] = str(block.page)
        block.page, block.boxes = None, []
    return doc.blocks


def mail_document(mail: Mail, filename: str, parse_attachment: ParseFn) -> ParsedDocument:
    """Blocks of a message: headers, body, then every attachment's blocks (parsed by ``parse_attachment``)."""
    headers = {k: v for k, v in mail.headers.items() if v}
    subject = headers.get("Subject") or filename
    path = (subject,)
    header_text = "\n".join(f"{k}: {v}" for k, v in headers.items())
    blocks = [Block(text=header_text or f"Subject: {subject}", meta={"part": "headers", **headers})]
    blocks += _body_blocks(mail, path)
    names = []
    for index, (name, data) in enumerate(mail.attachments, start=1):
        name = name or f"attachment {index}"
        names.append(name)
        blocks += _attachment_blocks(name, data, path, parse_attachment)
    metadata = {k.lower(): v for k, v in headers.items()}
    if names:
        metadata["attachments"] = ", ".join(names)
    return ParsedDocument(blocks=blocks, title=headers.get("Subject") or None, metadata=metadata)


def _part_text(part: MIMEPart) -> str:
    try:
        return str(part.get_content())
    except (LookupError, ValueError):  # an unknown or wrong charset label (a NUL in it is a ValueError): detect it
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            return ""
        found = decode_text(payload, declared=part.get_content_charset())
        return found[0] if found is not None else payload.decode("utf-8", errors="replace")


def _attached_message(part: MIMEPart) -> Message | None:
    """The message a ``message/rfc822`` part holds (the parser always nests one there), else None."""
    if part.get_content_type() != "message/rfc822":
        return None
    inner = part.get_payload(0) if part.is_multipart() else part.get_content()
    return inner if isinstance(inner, Message) else None


def _eml(data: bytes) -> Mail:
    msg = email.message_from_bytes(data, policy=_POLICY)
    headers = {h: _header_text(msg, h) for h in HEADERS}
    mail = Mail(headers=headers)
    for kind in ("plain", "html"):
        part = msg.get_body(preferencelist=(kind,))
        if part is not None and part.get_content_disposition() != "attachment":
            setattr(mail, "body" if kind == "plain" else "html", _part_text(part))
    for part in msg.iter_attachments():
        name = part.get_filename() or ""
        inner = _attached_message(part)
        if inner is not None:
            payload = inner.as_bytes(policy=_POLICY.clone(refold_source="none"))
            name = name or f"{' '.join(str(inner.get('Subject', 'message')).split())}.eml"
        else:
            raw = part.get_payload(decode=True)  # None for a multipart part
            payload = raw if isinstance(raw, bytes) else b""
        mail.attachments.append((name, payload))
    return mail


class EmlParser:
    """RFC 822 / MIME messages (``.eml``); attachments are parsed by ``parse_attachment``."""

    def __init__(self, parse_attachment: ParseFn) -> None:
        self.parse_attachment = parse_attachment

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        mail = _eml(data)
        if not any(mail.headers.values()) and not mail.body.strip():
            raise ParseError(f"{filename}: not an e-mail message: no headers and no body")
        return mail_document(mail, filename, self.parse_attachment)


def _msg(data: bytes, filename: str) -> Mail:
    try:
        import extract_msg
        from extract_msg.exceptions import ExMsgBaseException
        from extract_msg.msg_classes import MessageBase
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise MissingDependencyError("extract-msg") from exc
    # what extract-msg and olefile raise on a damaged container (a FAT pointing outside the file, a stream
    # shorter than its property says, text in no encoding), whenever a field is first read
    damaged = (ExMsgBaseException, OSError, ValueError, KeyError, IndexError, EOFError, struct.error)
    try:
        msg = extract_msg.openMsg(io.BytesIO(data), delayAttachments=False)
    except damaged as exc:
        raise ParseError(f"{filename}: not a readable Outlook message ({exc})") from exc
    with msg:
        if not isinstance(msg, MessageBase):  # class "IPM" opens as a bare MSGFile, without message fields
            raise ParseError(f"{filename}: the Outlook item is not a message (class {msg.classType!r})")
        try:
            return _msg_fields(msg)
        except damaged as exc:
            raise ParseError(f"{filename}: not a readable Outlook message ({exc})") from exc


def _msg_fields(msg: Any) -> Mail:
    """Headers, body and attachments of an open Outlook message (extract-msg's ``MessageBase``)."""
    values = (msg.sender, msg.to, msg.cc, msg.date or msg.header.get("Date"), msg.subject)
    headers = {h: _clean(v) for h, v in zip(HEADERS, values, strict=True)}
    mail = Mail(headers=headers, body=(msg.body or "").replace("\x00", ""))
    if not mail.body.strip():
        html = msg.htmlBody
        mail.html = html.decode("utf-8", errors="replace") if isinstance(html, bytes) else (html or "")
    for att in msg.attachments:
        name = _clean(att.longFilename or att.shortFilename or att.name)
        payload = att.data
        if hasattr(payload, "exportBytes"):  # an attached message
            payload = payload.exportBytes()
            name = name if name.lower().endswith(".msg") else f"{name or 'message'}.msg"
        if isinstance(payload, bytes):
            mail.attachments.append((name, payload))
    return mail


def _clean(value: object) -> str:
    """A header value on one line, without the NULs some writers leave at the end of strings."""
    return " ".join(str(value).replace("\x00", " ").split()) if value else ""


class MsgParser:
    """Outlook ``.msg`` messages; attachments are parsed by ``parse_attachment``."""

    def __init__(self, parse_attachment: ParseFn) -> None:
        self.parse_attachment = parse_attachment

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        return mail_document(_msg(data, filename), filename, self.parse_attachment)
