"""EPUB: the chapters of the spine, in reading order, through the HTML parser.

The container (``META-INF/container.xml``) names the package document; its
manifest maps ids to files and its spine orders them. Each XHTML chapter is
parsed by :class:`~ragloom.ingest.parsers.html.HtmlParser`; chapters without
text (covers, images) are skipped. Blocks carry ``meta["chapter"]`` (1-based
spine position) and ``meta["href"]``. DRM-encrypted books raise ParseError.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from urllib.parse import unquote

from lxml import etree

from ragloom.errors import LimitExceededError, ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import check_zip
from ragloom.ingest.parsers.html import HtmlParser

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_XHTML = {"application/xhtml+xml", "text/html", "application/xml"}
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)


def _read(zf: zipfile.ZipFile, name: str, filename: str) -> bytes:
    """An entry of the book; a damaged one (bad CRC, corrupt or cut-off data) is a ParseError."""
    try:
        return zf.read(name)
    except _DAMAGED as exc:
        raise ParseError(f"{filename}: not a valid EPUB: {name} cannot be read ({exc})") from exc


def _xml(zf: zipfile.ZipFile, name: str, filename: str) -> etree._Element:
    try:
        root = etree.fromstring(_read(zf, name, filename), _PARSER)
    except KeyError as exc:
        raise ParseError(f"{filename}: not a valid EPUB: {name} is missing") from exc
    if root is None:
        raise ParseError(f"{filename}: not a valid EPUB: {name} is not XML")
    return root


def _spine(zf: zipfile.ZipFile, filename: str) -> tuple[list[str], str | None]:
    """Paths (inside the zip) of the spine's XHTML documents in order, and the book title."""
    container = _xml(zf, "META-INF/container.xml", filename)
    rootfile = container.find(".//c:rootfile", _NS)
    opf_path = rootfile.get("full-path") if rootfile is not None else None
    if not opf_path:
        raise ParseError(f"{filename}: not a valid EPUB: the container names no package document")
    opf = _xml(zf, opf_path, filename)
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): (posixpath.normpath(posixpath.join(base, unquote(item.get("href", "")))),
                         item.get("media-type", ""), item.get("properties", ""))
        for item in opf.iterfind(".//opf:manifest/opf:item", _NS)
    }
    paths = []
    for ref in opf.iterfind(".//opf:spine/opf:itemref", _NS):
        path, media, properties = manifest.get(ref.get("idref"), ("", "", ""))
        if path and media in _XHTML and "nav" not in properties.split():
            paths.append(path)
    title = opf.findtext(".//dc:title", namespaces=_NS)
    return paths, (title or "").strip() or None


class EpubParser:
    """Blocks of an EPUB book, chapter by chapter."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        check_zip(data, filename, "EPUB")
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile as exc:
            raise ParseError(f"{filename}: not a valid EPUB: the zip container is damaged ({exc})") from exc
        with zf:
            if "META-INF/encryption.xml" in zf.namelist() and "META-INF/rights.xml" in zf.namelist():
                raise ParseError(f"{filename}: the EPUB is DRM-protected (encrypted) and cannot be read")
            paths, title = _spine(zf, filename)
            blocks: list[Block] = []
            for chapter, path in enumerate(paths, start=1):
                checkpoint()
                blocks += self._chapter(zf, path, chapter, filename)
        if not blocks:
            raise ParseError(f"{filename}: the EPUB has no chapter with text")
        return ParsedDocument(blocks=blocks, title=title, metadata={"chapters": str(len(paths))})

    @staticmethod
    def _chapter(zf: zipfile.ZipFile, path: str, chapter: int, filename: str) -> list[Block]:
        try:
            content = zf.read(path)
        except KeyError:
            return []
        except _DAMAGED as exc:
            raise ParseError(f"{filename}: not a valid EPUB: {path} cannot be read ({exc})") from exc
        try:
            doc = HtmlParser().parse(content, posixpath.basename(path))
        except LimitExceededError:
            raise
        except ParseError:
            return []  # a cover or image-only page
        for block in doc.blocks:
            block.meta.update({"chapter": str(chapter), "href": path})
        return doc.blocks
