"""Multipart uploads received straight to disk: the upload route's :class:`SpoolingRoute`.

Starlette's form parser would spool each file to an anonymous temporary file and leave the route to
read it; this one writes each file's bytes, as they arrive, to a :class:`~ragloom.service.documents.uploads.SpoolFile`
in the data directory (hashed and counted as written), so that:

- a file over ``max_upload_mb`` is refused (413) at the write that crosses the limit, and a request
  with more than ``max_upload_files`` files at the part that is one too many, not after the whole
  body was received;
- the route gets each file already hashed, on the data directory's filesystem, for the object store
  to take by renaming it (``ObjectStore.put_file``): nothing of an upload is held whole in memory
  (at most :data:`FLUSH_BYTES` of it wait for the disk at a time).

The route keeps its FastAPI declaration (``File``/``Form`` parameters, so ``/openapi.json`` and the
422 answers are unchanged): the parsed form is handed to FastAPI as the request's form. Spool files
are deleted when the form is closed (after the response) or at once when the request fails.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio
from fastapi import Request, Response, params
from fastapi.routing import APIRoute
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.datastructures import FormData, Headers, UploadFile

from ragloom.config import Settings
from ragloom.errors import InvalidRequestError, PayloadTooLargeError
from ragloom.service.documents.uploads import Spooled, SpoolFile, spool_copy, spool_dir

FLUSH_BYTES = 1 << 20  # file bytes gathered before they are written out (in a worker thread)
MAX_FIELD_BYTES = 1 << 20  # a form field that is not a file (chunk_method, parser_config)
MAX_FIELDS = 1000


def _decode(data: bytes | bytearray, charset: str) -> str:
    try:
        return bytes(data).decode(charset)
    except (UnicodeDecodeError, LookupError):
        return bytes(data).decode("latin-1")


@dataclass
class _Part:
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    disposition: bytes = b""
    name: str = ""
    data: bytearray = field(default_factory=bytearray)
    upload: UploadFile | None = None
    spool: SpoolFile | None = None


class _SpoolingParser:
    """Parses one multipart body as it streams in (python-multipart's push parser), files to spool files."""

    def __init__(self, request: Request, settings: Settings) -> None:
        self.request = request
        self.folder = spool_dir(settings)
        self.max_files = settings.max_upload_files
        self.file_limit = settings.max_upload_mb * 1024 * 1024
        self.file_limit_text = f"{settings.max_upload_mb} MiB per file (RAGLOOM_MAX_UPLOAD_MB)"
        self.items: list[tuple[str, str | UploadFile]] = []
        self.spools: list[SpoolFile] = []
        self.pending: list[tuple[SpoolFile, bytes]] = []  # file bytes parsed, not yet written
        self.pending_bytes = 0
        self.part = _Part()
        self.header_name = bytearray()
        self.header_value = bytearray()
        self.fields = 0
        self.charset = "utf-8"

    # ------------------------------------------------------------------ python-multipart callbacks

    def on_part_begin(self) -> None:
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        name, value = bytes(self.header_name).lower(), bytes(self.header_value)
        if name == b"content-disposition":
            self.part.disposition = value
        self.part.headers.append((name, value))
        self.header_name.clear()
        self.header_value.clear()

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.part.disposition)
        if b"name" not in options:
            raise InvalidRequestError('a part of the multipart body has no name (Content-Disposition: form-data; '
                                      'name="...")')
        self.part.name = _decode(options[b"name"], self.charset)
        if b"filename" not in options:
            self.fields += 1
            if self.fields > MAX_FIELDS:
                raise InvalidRequestError(f"more than {MAX_FIELDS} form fields in the multipart body")
            return
        if len(self.spools) >= self.max_files:
            raise PayloadTooLargeError(f"more than {self.max_files} files in one upload; the limit is "
                                       f"{self.max_files} files per request (RAGLOOM_MAX_UPLOAD_FILES)")
        filename = _decode(options[b"filename"], self.charset)
        spool = SpoolFile(self.folder, limit=self.file_limit,
                          too_large=f"{filename!r} is larger than the limit of {self.file_limit_text}")
        self.spools.append(spool)
        self.part.spool = spool
        self.part.upload = UploadFile(file=spool, size=0, filename=filename,  # type: ignore[arg-type]
                                      headers=Headers(raw=self.part.headers))

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.part.spool is not None:
            self.pending.append((self.part.spool, data[start:end]))
            self.pending_bytes += end - start
            return
        if len(self.part.data) + end - start > MAX_FIELD_BYTES:
            raise PayloadTooLargeError(f"the form field {self.part.name!r} is larger than "
                                       f"{MAX_FIELD_BYTES // 1024} KiB")
        self.part.data += data[start:end]

    def on_part_end(self) -> None:
        if self.part.upload is not None:
            self.items.append((self.part.name, self.part.upload))
        else:
            self.items.append((self.part.name, _decode(self.part.data, self.charset)))

    # ------------------------------------------------------------------ the body

    def _flush(self) -> None:
        """Write what was parsed of the files (in a worker thread: the disk may be slow)."""
        for spool, data in self.pending:
            spool.write(data)
        self.pending.clear()
        self.pending_bytes = 0

    async def parse(self) -> FormData:
        _, params = parse_options_header(self.request.headers.get("content-type", ""))
        charset = params.get(b"charset", b"utf-8").decode("latin-1")
        try:
            self.charset = codecs.lookup(charset).name
        except LookupError:
            self.charset = "latin-1"
        boundary = params.get(b"boundary")
        if not boundary:
            raise InvalidRequestError("the multipart body has no boundary (Content-Type: multipart/form-data; "
                                      "boundary=...)")
        callbacks: Any = {name: getattr(self, name) for name in (
            "on_part_begin", "on_part_data", "on_part_end", "on_header_field", "on_header_value", "on_header_end",
            "on_headers_finished")}
        parser = MultipartParser(boundary, callbacks)
        try:
            async for chunk in self.request.stream():
                parser.write(chunk)
                if self.pending_bytes >= FLUSH_BYTES:
                    await anyio.to_thread.run_sync(self._flush)
            parser.finalize()
            await anyio.to_thread.run_sync(self._flush)
            for spool in self.spools:
                spool.seek(0)
        except BaseException as exc:
            for spool in self.spools:
                spool.close()
            if isinstance(exc, FormParserError):
                raise InvalidRequestError(f"the multipart body is malformed: {exc}") from None
            raise
        for _, value in self.items:
            if isinstance(value, UploadFile) and isinstance(value.file, SpoolFile):
                value.size = value.file.size
        return FormData(self.items)


def _is_multipart(request: Request) -> bool:
    media, _ = parse_options_header(request.headers.get("content-type", ""))
    return media == b"multipart/form-data"


class SpoolingRoute(APIRoute):
    """A route whose form body (``File``/``Form`` parameters), sent as multipart, is parsed by
    :class:`_SpoolingParser` before FastAPI sees it (see the module docstring); any other route and
    body are left to FastAPI."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None or not isinstance(self.body_field.field_info, params.Form):
            return handler

        async def spooling(request: Request) -> Response:
            if _is_multipart(request):
                settings: Settings = request.app.state.ctx.settings
                # Request.form() returns the form parsed before: FastAPI validates and closes these files
                request._form = await _SpoolingParser(request, settings).parse()
            return await handler(request)

        return spooling


def spooled(upload: UploadFile, settings: Settings) -> Spooled:
    """The file of ``upload`` on disk, hashed: as :class:`SpoolingRoute` received it, or (a file parsed
    by someone else) copied to a spool file now, a piece at a time."""
    if isinstance(upload.file, SpoolFile):
        return upload.file.finish()
    copy = spool_copy(upload.file, spool_dir(settings), limit=settings.max_upload_mb * 1024 * 1024,
                      too_large=f"{upload.filename!r} is larger than the limit of {settings.max_upload_mb} MiB "
                      "per file (RAGLOOM_MAX_UPLOAD_MB)")
    upload.file.close()
    upload.file = copy  # type: ignore[assignment]  # closed (and deleted) with the form
    return copy.finish()
