"""Datasets (knowledge bases), their documents, chunks, pages and previews, retrieval and answers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack
from urllib.parse import unquote

from ragloom.errors import RagloomError
from ragloom.schemas.answers import AnswerRequest, CitedAnswer
from ragloom.schemas.chunking import ChunkingPreview, ChunkMethodList
from ragloom.schemas.chunks import ChunkCreate, ChunkList, ChunkUpdate, StoredChunk
from ragloom.schemas.datasets import Dataset, DatasetList, DatasetTags, KBCreate, KBUpdate, Reindexed, ReindexRequest
from ragloom.schemas.documents import (
    DeletedDocuments,
    Document,
    DocumentIds,
    DocumentList,
    DocumentUpdate,
    MetadataUpdate,
    PageList,
    UploadedDocuments,
    VersionDiff,
    VersionList,
)
from ragloom.schemas.retrieval import Retrieval, RetrievalRequest
from ragloom.schemas.scope import ScopeRequest
from ragloom.sdk._base import Base, FileInput, Route, body, operation, read_files
from ragloom.sdk.events import AnswerEvent, answer_event

TERMINAL = ("done", "failed", "cancelled")  # a document's states once its processing has ended
SearchMode = Literal["hybrid", "keyword", "vector"]
FusionName = Literal["normalized", "weighted"]
MetadataValue = str | int | float | bool | list[str | int | float | bool] | None


class _DatasetSettings(TypedDict, total=False):
    description: str
    permission: Literal["me", "team"]
    chunk_method: str
    parser_config: Mapping[str, Any]
    similarity_threshold: float
    vector_similarity_weight: float
    min_relevance: float
    review_versions: bool
    source_permissions: bool
    admins_see_all: bool
    pagerank: int
    synonyms: Sequence[Sequence[str]]
    tag_kb_ids: Sequence[str]
    topn_tags: int
    raptor: Mapping[str, Any]
    graphrag: Mapping[str, Any]


class DatasetChanges(_DatasetSettings, total=False):
    """What ``update_dataset`` may change (``KBUpdate``); what is not given stays."""

    name: str


class DatasetFields(_DatasetSettings, total=False):
    """What ``create_dataset`` may set besides the name (``KBCreate``); what is not given is the server's
    default."""

    language: str
    embedding_model: str


class EvidenceFields(TypedDict, total=False):
    """Which chunks may serve as evidence, and how strictly they are kept (``EvidenceOptions``)."""

    route: bool
    document_ids: Sequence[str]
    metadata_filter: Mapping[str, Any]
    toc_enhance: bool
    use_kg: bool
    similarity_threshold: float
    vector_similarity_weight: float
    min_relevance: float
    min_answerable: float
    cross_languages: Sequence[str]


class SearchFields(EvidenceFields, total=False):
    """The options of one retrieval (``RetrievalOptions``): the evidence options, the page, the mode,
    the fusion, ``explain`` and ``rerank``."""

    page: int
    page_size: int
    mode: SearchMode
    fusion: FusionName
    explain: bool
    rerank: bool


@dataclass(frozen=True, slots=True)
class DownloadedFile:
    """A document's original file."""

    name: str
    media_type: str
    content: bytes


def _dataset_ids(dataset_ids: str | Sequence[str]) -> list[str]:
    return [dataset_ids] if isinstance(dataset_ids, str) else list(dataset_ids)


def _filename(disposition: str) -> str:
    """The file name of a ``Content-Disposition`` header (``filename*`` first)."""
    for part in disposition.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "filename*" and "''" in value:
            return unquote(value.split("''", 1)[1])
    for part in disposition.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "filename":
            return value.strip('"')
    return ""


class KnowledgeAPI(Base):
    # --- datasets ---

    @operation("GET", "/datasets")
    def list_datasets(self, op: Route, /, *, page: int = 1, page_size: int = 100) -> DatasetList:
        """One page of the knowledge bases you may read, by name (``total`` counts them all)."""
        return self._model(DatasetList, op, params={"page": page, "page_size": page_size})

    def iter_datasets(self, *, page_size: int = 1000) -> Iterator[Dataset]:
        """Every knowledge base you may read, page after page."""
        page, seen = 1, 0
        while True:
            listed = self.list_datasets(page=page, page_size=page_size)
            yield from listed.datasets
            seen += len(listed.datasets)
            if not listed.datasets or seen >= listed.total:
                return
            page += 1

    @operation("POST", "/datasets")
    def create_dataset(self, op: Route, /, name: str, **fields: Unpack[DatasetFields]) -> Dataset:
        """A new knowledge base (private to you unless ``permission="team"``)."""
        return self._model(Dataset, op, json=body(KBCreate, {"name": name, **fields}))

    @operation("GET", "/datasets/{dataset_id}")
    def get_dataset(self, op: Route, /, dataset_id: str) -> Dataset:
        """A knowledge base by id or name."""
        return self._model(Dataset, op, path={"dataset_id": dataset_id})

    @operation("PATCH", "/datasets/{dataset_id}")
    def update_dataset(self, op: Route, /, dataset_id: str, **changes: Unpack[DatasetChanges]) -> Dataset:
        """Change a knowledge base; new chunking settings apply to documents parsed from now on."""
        return self._model(Dataset, op, path={"dataset_id": dataset_id}, json=body(KBUpdate, changes))

    @operation("DELETE", "/datasets/{dataset_id}")
    def delete_dataset(self, op: Route, /, dataset_id: str) -> None:
        """Delete a knowledge base with its documents."""
        self._empty(op, path={"dataset_id": dataset_id})

    @operation("POST", "/datasets/{dataset_id}/reindex")
    def reindex_dataset(self, op: Route, /, dataset_id: str, *, embedding_model: str | None = None) -> Reindexed:
        """Switch to another embedding model (default: the workspace's current one) and re-embed every document."""
        return self._model(Reindexed, op, path={"dataset_id": dataset_id},
                           json=body(ReindexRequest, {"embedding_model": embedding_model}))

    @operation("GET", "/datasets/{dataset_id}/tags")
    def dataset_tags(self, op: Route, /, dataset_id: str) -> DatasetTags:
        """How many chunks carry each tag."""
        return self._model(DatasetTags, op, path={"dataset_id": dataset_id})

    # --- documents ---

    @operation("POST", "/datasets/{dataset_id}/documents")
    def upload_documents(self, op: Route, /, dataset_id: str, files: FileInput | Iterable[FileInput], *,
                         chunk_method: str | None = None,
                         parser_config: Mapping[str, Any] | None = None, stage: bool = False) -> UploadedDocuments:
        """Upload one file or several (paths, or ``(name, bytes)``), queued for parsing; a chunk method
        and parameters of their own are optional. With ``stage`` the versions made wait for review."""
        form = {k: v for k, v in (("chunk_method", chunk_method),
                                  ("parser_config", None if parser_config is None else json.dumps(parser_config)),
                                  ("stage", "true" if stage else None))
                if v is not None}
        return self._model(UploadedDocuments, op, path={"dataset_id": dataset_id}, files=read_files(files),
                           data=form)

    @operation("GET", "/datasets/{dataset_id}/documents")
    def list_documents(self, op: Route, /, dataset_id: str, *, page: int = 1, page_size: int = 100,
                       status: str | None = None, type: str | None = None, name: str | None = None) -> DocumentList:
        """One page of a knowledge base's documents with their status and progress; optionally only
        those of a ``status``, a file ``type`` (extension) or whose name contains ``name``."""
        params = {k: v for k, v in (("page", page), ("page_size", page_size), ("status", status), ("type", type),
                                    ("name", name)) if v is not None}
        return self._model(DocumentList, op, path={"dataset_id": dataset_id}, params=params)

    def iter_documents(self, dataset_id: str, *, page_size: int = 1000,
                       status: str | None = None) -> Iterator[Document]:
        """Every document of a knowledge base (or only those of a ``status``), page after page."""
        page, seen = 1, 0
        while True:
            listed = self.list_documents(dataset_id, page=page, page_size=page_size, status=status)
            yield from listed.documents
            seen += len(listed.documents)
            if not listed.documents or seen >= listed.total:
                return
            page += 1

    def wait_for_documents(self, dataset_id: str, document_ids: Iterable[str] | None = None, *,
                           timeout: float = 600.0, poll: float = 0.5) -> list[Document]:
        """The documents (default: all of the knowledge base) once each is done, failed or cancelled;
        ``RagloomError`` after ``timeout`` seconds."""
        wanted = None if document_ids is None else set(document_ids)
        deadline = time.monotonic() + timeout
        while True:
            docs = [d for d in self.iter_documents(dataset_id) if wanted is None or d.id in wanted]
            if all(d.status in TERMINAL for d in docs):
                return docs
            if time.monotonic() > deadline:
                busy = ", ".join(f"{d.name} ({d.status})" for d in docs if d.status not in TERMINAL)
                raise RagloomError(f"documents still processing after {timeout:g} s: {busy}")
            time.sleep(poll)

    @operation("DELETE", "/datasets/{dataset_id}/documents")
    def delete_documents(self, op: Route, /, dataset_id: str, ids: Sequence[str]) -> DeletedDocuments:
        """Delete documents by id."""
        return self._model(DeletedDocuments, op, path={"dataset_id": dataset_id},
                           json=body(DocumentIds, {"ids": list(ids)}))

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}")
    def get_document(self, op: Route, /, dataset_id: str, document_id: str) -> Document:
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id})

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/versions")
    def list_versions(self, op: Route, /, dataset_id: str, document_id: str) -> VersionList:
        """A document's versions, newest first, the active one marked."""
        return self._model(VersionList, op, path={"dataset_id": dataset_id, "document_id": document_id})

    @operation("PUT", "/datasets/{dataset_id}/documents/{document_id}/file")
    def replace_file(self, op: Route, /, dataset_id: str, document_id: str, file: FileInput, *,
                     stage: bool = False) -> Document:
        """New content for a document (a path, or ``(name, bytes)``), keeping its id, name and history: a
        new version, published when built (with ``stage``: when a reviewer publishes it)."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           files=read_files(file)[:1], data={"stage": "true"} if stage else {})

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/versions/diff")
    def diff_versions(self, op: Route, /, dataset_id: str, document_id: str, *, from_version: int | str | None = None,
                      to_version: int | str | None = None) -> VersionDiff:
        """Chunks added, removed and changed between two kept versions (numbers or ids; default: the
        version before the active one, and the active one)."""
        params = {k: str(v) for k, v in (("from", from_version), ("to", to_version)) if v is not None}
        return self._model(VersionDiff, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           params=params)

    @operation("POST", "/datasets/{dataset_id}/documents/{document_id}/versions/{version_id}/activate")
    def activate_version(self, op: Route, /, dataset_id: str, document_id: str, version: int | str) -> Document:
        """Roll back (or forward) to a kept version, or publish a staged one (its number or id): readers
        see it at once."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id,
                                               "version_id": str(version)})

    @operation("POST", "/datasets/{dataset_id}/documents/{document_id}/versions/{version_id}/discard")
    def discard_version(self, op: Route, /, dataset_id: str, document_id: str, version: int | str) -> Document:
        """Turn down a staged version that waits for review (its number or id)."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id,
                                               "version_id": str(version)})

    @operation("GET", "/chunk-methods")
    def chunk_methods(self, op: Route, /) -> ChunkMethodList:
        """Every chunk method with the parameters it reads (type, default, bounds, meaning)."""
        return self._model(ChunkMethodList, op)

    @operation("POST", "/datasets/{dataset_id}/chunking-preview")
    def preview_chunking(self, op: Route, /, dataset_id: str, *, file: FileInput | None = None,
                         document_id: str | None = None, chunk_method: str | None = None,
                         parser_config: Mapping[str, Any] | None = None) -> ChunkingPreview:
        """How a sample (a file, or one of the dataset's documents) would be chunked; nothing is stored."""
        form = {k: v for k, v in (("document_id", document_id), ("chunk_method", chunk_method),
                                  ("parser_config", None if parser_config is None else json.dumps(parser_config)))
                if v is not None}
        files = read_files(file) if file is not None else None
        return self._model(ChunkingPreview, op, path={"dataset_id": dataset_id}, files=files, data=form)

    @operation("PATCH", "/datasets/{dataset_id}/documents/{document_id}")
    def update_document(self, op: Route, /, dataset_id: str, document_id: str, *, chunk_method: str | None,
                        parser_config: Mapping[str, Any] | None = None) -> Document:
        """Give a document its own chunk method (None: the dataset's again); it is parsed again."""
        config = None if parser_config is None else dict(parser_config)
        payload = {"chunk_method": chunk_method, "parser_config": config}
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           json=body(DocumentUpdate, payload, keep_none=True))

    @operation("PATCH", "/datasets/{dataset_id}/documents/{document_id}/metadata")
    def update_metadata(self, op: Route, /, dataset_id: str, document_id: str,
                        metadata: Mapping[str, MetadataValue]) -> Document:
        """Set metadata keys; a None value removes its key."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           json=body(MetadataUpdate, {"metadata": dict(metadata)}))

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/chunks")
    def list_chunks(self, op: Route, /, dataset_id: str, document_id: str, *, page: int = 1, page_size: int = 100,
                    include_hidden: bool = False) -> ChunkList:
        """One page of the active version's chunks in reading order."""
        return self._model(ChunkList, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           params={"page": page, "page_size": page_size, "include_hidden": include_hidden})

    @operation("POST", "/datasets/{dataset_id}/documents/{document_id}/chunks")
    def add_chunk(self, op: Route, /, dataset_id: str, document_id: str, content: str, *,
                  important_keywords: Sequence[str] = (), questions: Sequence[str] = ()) -> StoredChunk:
        """Add a chunk of your own text after the document's last one (kept over re-parses), with the
        keywords matched beside it and the questions it answers (embedded in its place)."""
        return self._model(StoredChunk, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           json=body(ChunkCreate, {"content": content, "important_keywords": list(important_keywords),
                                                   "questions": list(questions)}))

    @operation("PATCH", "/datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}")
    def update_chunk(self, op: Route, /, dataset_id: str, document_id: str, chunk_id: str, *,
                     content: str | None = None, available: bool | None = None,
                     important_keywords: Sequence[str] | None = None,
                     questions: Sequence[str] | None = None) -> StoredChunk:
        """Change a chunk's text, keywords or questions (``[]`` clears them) and/or disable
        (``available=False``) or enable it; a re-parse keeps the edit."""
        return self._model(StoredChunk, op,
                           path={"dataset_id": dataset_id, "document_id": document_id, "chunk_id": chunk_id},
                           json=body(ChunkUpdate, {"content": content, "available": available,
                                                   "important_keywords": None if important_keywords is None
                                                   else list(important_keywords),
                                                   "questions": None if questions is None else list(questions)}))

    @operation("DELETE", "/datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}")
    def delete_chunk(self, op: Route, /, dataset_id: str, document_id: str, chunk_id: str) -> None:
        """Remove a chunk; a re-parse leaves it out again."""
        self._empty(op, path={"dataset_id": dataset_id, "document_id": document_id, "chunk_id": chunk_id})

    def iter_chunks(self, dataset_id: str, document_id: str, *, include_hidden: bool = False,
                    page_size: int = 1000) -> Iterator[StoredChunk]:
        """Every chunk of a document's active version, page after page."""
        page, seen = 1, 0
        while True:
            listed = self.list_chunks(dataset_id, document_id, page=page, page_size=page_size,
                                      include_hidden=include_hidden)
            yield from listed.chunks
            seen += len(listed.chunks)
            if not listed.chunks or seen >= listed.total:
                return
            page += 1

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/file")
    def download_file(self, op: Route, /, dataset_id: str, document_id: str, *,
                      version_id: str | None = None) -> DownloadedFile:
        """The original file (of ``version_id`` when given)."""
        resp = self._send(op, path={"dataset_id": dataset_id, "document_id": document_id},
                          params={"version_id": version_id})
        media = resp.headers.get("content-type", "application/octet-stream").split(";")[0].strip()
        return DownloadedFile(_filename(resp.headers.get("content-disposition", "")), media, resp.content)

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/pages")
    def list_pages(self, op: Route, /, dataset_id: str, document_id: str, *,
                   version_id: str | None = None) -> PageList:
        """Page sizes in PDF points and preview image links."""
        return self._model(PageList, op, path={"dataset_id": dataset_id, "document_id": document_id},
                           params={"version_id": version_id})

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/pages/{page}.png")
    def page_image(self, op: Route, /, dataset_id: str, document_id: str, page: int, *,
                   version_id: str | None = None) -> bytes:
        """A page's preview image (PNG)."""
        return self._send(op, path={"dataset_id": dataset_id, "document_id": document_id, "page": page},
                          params={"version_id": version_id}).content

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}/figure.png")
    def figure_image(self, op: Route, /, dataset_id: str, document_id: str, chunk_id: str) -> bytes:
        """A figure chunk's picture (PNG): a chunk whose ``figure`` link is set."""
        return self._send(op, path={"dataset_id": dataset_id, "document_id": document_id,
                                    "chunk_id": chunk_id}).content

    @operation("GET", "/datasets/{dataset_id}/documents/{document_id}/preview")
    def preview(self, op: Route, /, dataset_id: str, document_id: str, *, version_id: str | None = None,
                highlight: Sequence[int] = ()) -> str:
        """The HTML view of a document without pages, the blocks numbered ``highlight`` marked."""
        return self._send(op, path={"dataset_id": dataset_id, "document_id": document_id},
                          params={"version_id": version_id,
                                  "highlight": ",".join(map(str, highlight)) or None}).text

    @operation("POST", "/datasets/{dataset_id}/documents/{document_id}/reparse")
    def reparse_document(self, op: Route, /, dataset_id: str, document_id: str) -> Document:
        """Build a new version of the document from its file."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id})

    @operation("POST", "/datasets/{dataset_id}/documents/{document_id}/cancel")
    def cancel_document(self, op: Route, /, dataset_id: str, document_id: str) -> Document:
        """Stop processing a document."""
        return self._model(Document, op, path={"dataset_id": dataset_id, "document_id": document_id})

    # --- retrieval and answers ---

    @operation("POST", "/retrieval")
    def retrieve(self, op: Route, /, question: str, dataset_ids: str | Sequence[str] = (), *,
                 scope: ScopeRequest | Mapping[str, Any] | None = None,
                 **options: Unpack[SearchFields]) -> Retrieval:
        """The chunks of the knowledge bases (ids or names; with ``route=True``, the candidates, none =
        every readable one) that best match the question, best first. ``scope`` (``{"keys": [...],
        "values": {...}}``): only the documents whose metadata match; the result's ``scope`` says what
        was decided (clarify and gap retrieve nothing)."""
        return self._model(Retrieval, op, json=body(RetrievalRequest, {
            "question": question, "dataset_ids": _dataset_ids(dataset_ids), "scope": scope, **options}))

    @operation("POST", "/answer")
    def answer(self, op: Route, /, question: str, dataset_ids: str | Sequence[str] = (), *, top_n: int = 6,
               scope: ScopeRequest | Mapping[str, Any] | None = None,
               **options: Unpack[EvidenceFields]) -> CitedAnswer:
        """An answer from the knowledge bases, citing its evidence as ``[ID:n]`` (with ``scope``: from the
        documents whose metadata match, as :meth:`retrieve`'s; a missing value is asked for)."""
        return self._model(CitedAnswer, op, json=body(AnswerRequest, {
            "question": question, "dataset_ids": _dataset_ids(dataset_ids), "top_n": top_n, "scope": scope,
            **options}))

    @operation("POST", "/answer")
    def answer_stream(self, op: Route, /, question: str, dataset_ids: str | Sequence[str] = (), *, top_n: int = 6,
                      scope: ScopeRequest | Mapping[str, Any] | None = None,
                      **options: Unpack[EvidenceFields]) -> Iterator[AnswerEvent]:
        """The answer as it is written: :class:`~ragloom.sdk.Delta` events, then one
        :class:`~ragloom.sdk.AnswerFinal` with the checked answer and its references."""
        payload = body(AnswerRequest, {"question": question, "dataset_ids": _dataset_ids(dataset_ids),
                                       "top_n": top_n, "stream": True, "scope": scope, **options})
        return (answer_event(e) for e in self._events(op, path={}, json=payload))
