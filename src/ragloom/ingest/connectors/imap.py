"""The ``imap`` connector: the messages of folders of a mailbox, each an ``.eml`` document (its attachments
parsed with it by the e-mail parser, :mod:`ragloom.ingest.parsers.mail`).

Settings: ``host`` (required), ``port`` (default 993 with ``ssl``, else 143), ``ssl`` (IMAP over TLS,
default true; false is a plain connection, for a server on a trusted network only), ``folders``
(default ``["INBOX"]``). Credentials: ``username`` and ``password`` (required; an app password where the
provider has them).

A message is immutable in IMAP: its id is ``<folder>/<UIDVALIDITY>/<UID>`` and its change token the same
with its ``RFC822.SIZE`` — a listing fetches only sizes and a few headers (``BODY.PEEK``: nothing is
marked read). A folder whose UIDVALIDITY changed lists all its messages under new ids (the server says
its UIDs were reassigned). An item's name is made of its subject (``<subject>.eml``), its title the
subject, its path ``<folder>/<name>`` (for include/exclude globs), its URL an RFC 5092 ``imap://`` URL
(without the user name: a credential is never shown);
its metadata the sender, date, Message-ID and the thread it belongs to (the first of ``References``, else
``In-Reply-To``, else its own Message-ID). Its principal is the mailbox's owner, ``user:<username>`` when
the user name is an e-mail address (else none is known). Reading fetches the whole message
(``BODY.PEEK[]``), refused before it is fetched when its size is over the limit.

``host`` is a server-side connection a workspace chooses: it must resolve to addresses this server may
reach (loopback and private ranges only in ``RAGLOOM_OUTBOUND_ALLOW``), checked when the connector is made
and at each connection, which goes to the very address checked.
"""

from __future__ import annotations

import base64
import contextlib
import email.errors
import email.parser
import email.policy
import imaplib
import re
import socket
import ssl
from collections.abc import Iterator
from email.header import decode_header, make_header
from typing import Any
from urllib.parse import quote

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    READ_CHUNK,
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    safe_file_name,
    screen_url,
    setting,
    unknown_settings,
    user_principal,
)
from ragloom.models.http import OutboundPolicy

HOST = re.compile(r"^[A-Za-z0-9.\-]{1,253}$|^\[?[0-9A-Fa-f:.]{2,45}\]?$")
FETCH_BATCH = 200  # messages per FETCH while listing
HEADER_FIELDS = "SUBJECT FROM DATE MESSAGE-ID IN-REPLY-TO REFERENCES"
MAX_FOLDERS = 100
_UID = re.compile(rb"\bUID (\d+)")
_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")
_MSGID = re.compile(r"<[^<>\s]+>")
IMAP_ERRORS = (imaplib.IMAP4.error, OSError, EOFError)


def encode_folder(name: str) -> str:
    """A folder name as an IMAP astring: modified UTF-7 (RFC 3501 5.1.3) in double quotes."""
    out, pending = [], ""

    def flush() -> None:
        if pending:
            raw = base64.b64encode(pending.encode("utf-16-be")).decode().rstrip("=")
            out.append("&" + raw.replace("/", ",") + "-")

    for ch in name:
        if " " <= ch <= "~":
            flush()
            pending = ""
            out.append("&-" if ch == "&" else ch)
        else:
            pending += ch
    flush()
    text = "".join(out)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _header(value: str | None, limit: int = 500) -> str:
    """A header's value decoded (RFC 2047 encoded words), on one line, at most ``limit`` characters."""
    if not value:
        return ""
    value = value[:4 * limit]
    try:
        text = str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError, email.errors.HeaderParseError):
        text = value
    return " ".join(text.split())[:limit]


def file_name(subject: str, uid: str) -> str:
    """A safe file name made of a subject: ``Re: Pump / valve?`` -> ``Re_ Pump _ valve.eml``."""
    return safe_file_name(subject, f"message-{uid}", ".eml")


class _Guarded(imaplib.IMAP4):
    """An IMAP connection to an address checked by the outbound guard (``address``), the host name kept
    (TLS SNI and the certificate check)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        self.address = address
        super().__init__(host, port, timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        return socket.create_connection((self.address, self.port), timeout)


class _GuardedSSL(imaplib.IMAP4_SSL):
    """:class:`_Guarded` over TLS: the certificate checked for the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        self.address = address
        super().__init__(host, port, ssl_context=ssl.create_default_context(), timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        sock = socket.create_connection((self.address, self.port), timeout)
        context: ssl.SSLContext = self.ssl_context
        return context.wrap_socket(sock, server_hostname=self.host)


class IMAPConnector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"host", "port", "ssl", "folders"})
        self.host = setting(spec.settings, "host", str, required=True).strip()
        if not HOST.match(self.host):
            raise InvalidRequestError(f"settings.host {self.host!r} is not a host name or an IP address")
        self.host = self.host.strip("[]")
        self.ssl = bool(setting(spec.settings, "ssl", bool, True))
        self.port = setting(spec.settings, "port", int, 993 if self.ssl else 143)
        if not 1 <= self.port <= 65535:
            raise InvalidRequestError("settings.port must be between 1 and 65535")
        folders = setting(spec.settings, "folders", list, ["INBOX"])
        if not folders or len(folders) > MAX_FOLDERS or not all(
                isinstance(f, str) and f.strip() and "\r" not in f and "\n" not in f for f in folders):
            raise InvalidRequestError(f"settings.folders must list 1 to {MAX_FOLDERS} folder names")
        self.folders = list(dict.fromkeys(f.strip() for f in folders))
        unknown = set(spec.credentials) - {"username", "password"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; an imap source takes "
                                      "username and password")
        self._user, self._password = spec.credentials.get("username", ""), spec.credentials.get("password", "")
        if not self._user or not self._password:
            raise InvalidRequestError("credentials: an imap source needs username and password")
        self.owner = (user_principal(self._user),) if re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", self._user) else ()
        self.timeout = spec.timeout
        self.max_bytes = spec.max_bytes
        self.policy = OutboundPolicy.allowing(spec.outbound_allow)
        screen_url(self.policy, self._where(), "settings.host")
        self._imap: imaplib.IMAP4 | None = None
        self._selected = self._validity = ""  # the folder selected, and its UIDVALIDITY

    def _where(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"imap{'s' if self.ssl else ''}://{host}:{self.port}"

    def settings(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "ssl": self.ssl, "folders": self.folders}

    def problems(self) -> list[str]:
        """A folder is listed whole or the listing fails."""
        return []

    # --- the connection ---

    def _error(self, exc: BaseException, what: str) -> SourceError:
        arg = exc.args[0] if exc.args else ""
        text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(exc)  # imaplib's are bytes
        text = text.replace(self._password, "***") if self._password else text
        transient = isinstance(exc, OSError | EOFError | imaplib.IMAP4.abort)
        return SourceError(f"{self._where()}: {what}: {text or type(exc).__name__}", transient=transient)

    def _connect(self) -> imaplib.IMAP4:
        if self._imap is not None:
            return self._imap
        try:
            addresses, refused = self.policy.screen(self.host, self.port, f"settings.host {self.host}")
        except OSError as exc:
            raise SourceError(f"settings.host: {self.host} does not resolve: {exc}", transient=True) from None
        if refused:
            raise SourceError(f"settings.host: {refused}")
        try:
            conn: imaplib.IMAP4 = (_GuardedSSL if self.ssl else _Guarded)(self.host, self.port, addresses[0],
                                                                          self.timeout)
        except IMAP_ERRORS as exc:
            raise self._error(exc, "cannot connect") from None
        try:
            if (self._user + self._password).isascii():
                conn.login(self._user, self._password)
            else:  # LOGIN's quoted strings are ASCII; SASL PLAIN carries UTF-8
                plain = f"\0{self._user}\0{self._password}".encode()
                conn.authenticate("PLAIN", lambda _: plain)
        except imaplib.IMAP4.abort as exc:
            self._logout(conn)
            raise self._error(exc, "login") from None
        except imaplib.IMAP4.error as exc:
            self._logout(conn)
            reason = exc.args[0] if exc.args else b""
            reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
            raise SourceError(f"{self._where()}: the server refused the user name and password ({reason})"
                              .replace(self._password, "***")) from None
        except IMAP_ERRORS as exc:
            self._logout(conn)
            raise self._error(exc, "login") from None
        self._imap = conn
        return conn

    @staticmethod
    def _logout(conn: imaplib.IMAP4) -> None:
        with contextlib.suppress(*IMAP_ERRORS):
            conn.logout()

    def _select(self, folder: str) -> tuple[str, int]:
        """Select ``folder`` read-only: its UIDVALIDITY and message count."""
        conn = self._connect()
        self._selected = ""  # a failed SELECT leaves none selected
        typ, data = conn.select(encode_folder(folder), readonly=True)
        if typ != "OK":
            detail = b" ".join(d for d in data if isinstance(d, bytes)).decode("utf-8", "replace")
            raise SourceError(f"{self._where()}: cannot open the folder {folder!r}: {detail}")
        _, validity = conn.response("UIDVALIDITY")
        value = validity[0] if validity and isinstance(validity[0], bytes) else b""
        if not value.strip().isdigit():
            raise SourceError(f"{self._where()}: the folder {folder!r} has no UIDVALIDITY")
        count = data[0] if data and isinstance(data[0], bytes) else b"0"
        self._selected, self._validity = folder, value.strip().decode()
        return self._validity, int(count) if count.strip().isdigit() else 0

    # --- the protocol ---

    def check(self) -> str:
        try:
            counts = [f"{folder}: {self._select(folder)[1]} messages" for folder in self.folders]
        except IMAP_ERRORS as exc:
            raise self._error(exc, "check") from None
        return f"{self._where()}: " + ", ".join(counts)

    def list_items(self) -> Iterator[Item]:
        try:
            for folder in self.folders:
                yield from self._folder(folder)
        except IMAP_ERRORS as exc:
            self._drop()
            raise self._error(exc, "listing") from None

    def _folder(self, folder: str) -> Iterator[Item]:
        validity, count = self._select(folder)
        if count == 0:
            return
        conn = self._connect()
        typ, found = conn.uid("SEARCH", "ALL")
        if typ != "OK":
            raise SourceError(f"{self._where()}: cannot search the folder {folder!r}")
        uids = b" ".join(d for d in found if isinstance(d, bytes)).split()
        for start in range(0, len(uids), FETCH_BATCH):
            if self._selected != folder:  # a read between two batches selected another folder
                if self._select(folder)[0] != validity:
                    raise SourceError(f"{self._where()}: the UIDVALIDITY of {folder!r} changed while listing",
                                      transient=True)
                conn = self._connect()
            batch = b",".join(uids[start:start + FETCH_BATCH]).decode()
            typ, data = conn.uid("FETCH", batch, f"(UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS ({HEADER_FIELDS})])")
            if typ != "OK":
                raise SourceError(f"{self._where()}: cannot fetch the messages of {folder!r}")
            messages: list[list[bytes]] = []
            for part in data:
                if isinstance(part, tuple):
                    messages.append([part[0], part[1]])
                elif isinstance(part, bytes) and messages and part.strip() != b")":
                    messages[-1][0] += b" " + part  # what the server sent after the literal (UID may be there)
            for prefix, headers in messages:
                uid, size = _UID.search(prefix), _SIZE.search(prefix)
                if uid is None:
                    continue
                yield self._item(folder, validity, uid.group(1).decode(), int(size.group(1)) if size else None,
                                 headers)

    def _item(self, folder: str, validity: str, uid: str, size: int | None, raw: bytes) -> Item:
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
        subject = _header(headers.get("Subject"), 300)
        message_id = (_MSGID.findall(headers.get("Message-ID") or "") or [""])[0]
        references = _MSGID.findall(headers.get("References") or "")
        replied = _MSGID.findall(headers.get("In-Reply-To") or "")
        thread = (references or replied or [message_id])[0]
        item_id = f"{folder}/{validity}/{uid}"
        name = file_name(subject, uid)
        host = f"[{self.host}]" if ":" in self.host else self.host
        url = f"imap://{host}:{self.port}/{quote(folder, safe='')};UIDVALIDITY={validity}/;UID={uid}"  # no user
        return Item(id=item_id, token=f"{item_id}/{size if size is not None else ''}", name=name,
                    title=subject or name, path=f"{folder}/{name}", url=url, size=size,
                    content_type="message/rfc822",
                    metadata={"folder": folder, "uid": int(uid), "from": _header(headers.get("From")),
                              "date": _header(headers.get("Date"), 100), "message_id": message_id,
                              "thread": thread},
                    principals=self.owner)

    def read(self, item: Item) -> Iterator[bytes]:
        try:
            folder, validity, uid = item.id.rsplit("/", 2)
        except ValueError:
            raise SourceError(f"{item.id}: not a message id of an imap source") from None
        if folder not in self.folders or not uid.isdigit():
            raise SourceError(f"{item.id}: not a message of this source's folders")
        if item.size is not None and item.size > self.max_bytes:
            raise SourceError(f"{item.id} is larger than {self.max_bytes} bytes")
        try:
            now = self._validity if self._selected == folder else self._select(folder)[0]
            if now != validity:
                raise SourceError(f"{item.id}: the folder's UIDVALIDITY changed (its messages have new ids)")
            conn = self._connect()
            typ, data = conn.uid("FETCH", uid, "(RFC822.SIZE)")
            size = next((_SIZE.search(d) for d in data if isinstance(d, bytes) and _SIZE.search(d)), None)
            if typ != "OK" or size is None:
                raise SourceError(f"{item.id}: no such message any more")
            if int(size.group(1)) > self.max_bytes:
                raise SourceError(f"{item.id} is larger than {self.max_bytes} bytes")
            typ, data = conn.uid("FETCH", uid, "(BODY.PEEK[])")
        except IMAP_ERRORS as exc:
            self._drop()
            raise self._error(exc, f"reading {item.id}") from None
        body = next((part[1] for part in data if isinstance(part, tuple)), None)
        if typ != "OK" or body is None:
            raise SourceError(f"{item.id}: no such message any more")
        yield from bounded((body[i:i + READ_CHUNK] for i in range(0, len(body), READ_CHUNK)), self.max_bytes,
                           item.id)

    def _drop(self) -> None:
        """Forget a connection that failed (the next request makes a new one)."""
        self._selected = ""
        if self._imap is not None:
            conn, self._imap = self._imap, None
            with contextlib.suppress(*IMAP_ERRORS):
                conn.shutdown()

    def close(self) -> None:
        if self._imap is not None:
            conn, self._imap = self._imap, None
            self._logout(conn)
