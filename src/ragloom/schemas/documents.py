"""Documents: the changes a request makes (metadata, settings, which to delete) and the document as the
API shows it, with its pages, its versions and what changed between two."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ragloom.schemas.base import Number, Request, Timestamp, View
from ragloom.schemas.options import MAX_DOCUMENT_IDS


class Coverage(View):
    """Words of a document's parsed text, and how many of them its chunks keep."""

    words: int = Field(description="words of the parsed text (each CJK character counts as one)")
    kept: int = Field(description="of them, the words some chunk holds")
    ratio: Number = Field(description="kept / words; 1.0 = nothing lost")
    removed: dict[str, int] = Field(description="characters the parser left out on purpose, by reason "
                                    "(running_header, page_number, ...)")
    missing: list[str] = Field(description="some of the words no chunk holds")


class Document(View):
    id: str
    kb_id: str
    name: str
    status: str = Field(description="queued, running, done, failed or cancelled")
    progress: Number
    message: str
    chunk_count: int
    coverage: Coverage | None = Field(description="how much of the parsed text the active version's chunks "
                                      "keep; null before the first publish")
    chunk_method: str | None = Field(description="the document's own chunk method; null = the dataset's")
    parser_config: dict[str, Any] | None
    metadata: dict[str, Any]
    active_version_id: str | None = Field(description="the published version searches see")
    latest_version_id: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    file_type: str = Field("", description="the name's extension, lower case (pdf, docx); empty without one")
    size: int | None = Field(None, description="bytes of the file of the version a reader sees")
    page_count: int | None = Field(None, description="pages of that version (a paginated format's); null "
                                   "for a flowing one")
    thumbnail: str | None = Field(None, description="a small image of its first page (a PNG link), null when "
                                  "it has none")


class DocumentList(View):
    documents: list[Document]
    total: int


class UploadedDocuments(View):
    """The documents an upload created, queued for parsing."""

    documents: list[Document]


class DeletedDocuments(View):
    deleted: int


class Page(View):
    page: int
    width: Number = Field(description="PDF points")
    height: Number = Field(description="PDF points")
    image: str | None = Field(description="the page's preview image (a PNG link), null when there is none")


class PageList(View):
    pages: list[Page]


class Version(View):
    """One version of a document: a file (uploaded, or the same file re-parsed) and its chunks."""

    id: str
    number: int = Field(description="1, 2, ... in order of creation")
    status: str = Field(description="building, ready (published), failed, superseded or cancelled")
    active: bool = Field(description="the version searches see")
    latest: bool = Field(description="the newest version (being built while it differs from the active one)")
    chunk_method: str
    parser_config: dict[str, Any]
    chunk_count: int
    page_count: int | None
    size: int = Field(description="bytes of the file")
    content_hash: str = Field(description="SHA-256 of the file")
    error: str
    created_at: Timestamp | None
    published_at: Timestamp | None
    reason: str = Field(description="why it was made: upload, reparse, settings (the document's chunking "
                        "changed) or reindex")
    created_by: str | None = Field(description="the user who made it (null: the system)")
    created_by_name: str | None = Field(None, description="that user's display name or e-mail")
    published_by: str | None = Field(None, description="the user who made it live by hand (a rollback, or the "
                                     "publish of a staged version); null: published when built")
    staged: bool = Field(False, description="made to wait for review: when built it stays ready, not live, until "
                         "it is published (.../activate) or discarded")
    coverage: dict[str, Any] | None = Field(None, description="words of the parsed text its chunks keep")
    kept: bool = Field(description="its chunks are still in the search store: it can be rolled back to and "
                       "compared (the last RAGLOOM_KEEP_VERSIONS versions)")


class VersionList(View):
    versions: list[Version]
    active_version_id: str | None


class CellDiff(View):
    """A table cell that changed between two versions (null: the cell is not in that version)."""

    row: str = Field(description="the row: its stub (row header) cells, else its number in the chunk")
    column: str = Field(description="the column's header path, joined with ' / '")
    before: str | None
    after: str | None


class ChunkDiff(View):
    """A chunk added, removed or changed between two versions."""

    change: str = Field(description="added, removed or changed")
    before_id: str | None = Field(description="the chunk's row in the older version")
    after_id: str | None = Field(description="the chunk's row in the newer version")
    before: str | None = Field(description="its text in the older version")
    after: str | None = Field(description="its text in the newer version")
    marked: str | None = Field(description="a changed chunk's text with the words it lost marked [-...-] and the "
                               "words it gained {+...+}")
    similarity: float | None = Field(description="a changed chunk's word similarity, 0..1")
    pages: list[int] = Field(description="pages it is on (of the newer version when it is there)")
    cells: list[CellDiff] = Field(description="a table chunk's cells that changed")


class VersionDiff(View):
    """What changed in a document's chunks from one version to another."""

    document_id: str
    from_version: int = Field(description="the older version's number (0: none, every chunk is added)")
    to_version: int
    added: int
    removed: int
    changed: int
    unchanged: int
    changes: list[ChunkDiff]


class DocumentIds(Request):
    ids: list[str] = Field(min_length=1, max_length=MAX_DOCUMENT_IDS)


class MetadataUpdate(Request):
    """Keys to set (scalars or lists of scalars); ``null`` removes a key."""

    metadata: dict[str, str | int | float | bool | list[str | int | float | bool] | None]


class DocumentUpdate(Request):
    """A document's own chunk method (``null`` = follow the dataset); changing it re-parses the document."""

    chunk_method: str | None
    parser_config: dict[str, object] | None = None
