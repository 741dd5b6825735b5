"""/datasets/{id}/documents: upload, list, inspect, delete, re-parse, cancel; versions: replace the file,
list, compare, roll back."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, File, Form, Path, Query, Response, UploadFile
from fastapi.responses import StreamingResponse

from ragloom.api.deps import ContextDep, PrincipalDep, rate_limited
from ragloom.api.responses import CALLER_ERRORS, binary_response, error_responses
from ragloom.api.uploads import SpoolingRoute, spooled
from ragloom.errors import PayloadTooLargeError
from ragloom.schemas.base import parse_json_object
from ragloom.schemas.chunks import ChunkCreate, ChunkList, ChunkUpdate, StoredChunk
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
from ragloom.service.documents import catalog, chunk_edits, chunks, versions
from ragloom.service.documents.views import (
    document_view,
    pages_view,
    stored_chunk_view,
    version_diff_view,
    version_view,
)

# the upload route's multipart body is received straight to disk (api/uploads.py)
router = APIRouter(prefix="/datasets/{dataset_id}/documents", tags=["documents"], responses=CALLER_ERRORS,
                   route_class=SpoolingRoute)
RATE_LIMITED = error_responses(429)

MAX_LIST_PAGE = 1_000_000  # listings: page x page_size stays far inside what SQL offsets take
MAX_PAGE_NUMBER = 1_000_000  # a document's page number (preview images)
PageQuery = Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)]
PageSizeQuery = Annotated[int, Query(ge=1, le=1000)]


@router.post("", status_code=201, dependencies=[rate_limited("upload")], responses=RATE_LIMITED)
def upload_documents(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    file: Annotated[list[UploadFile], File(description="One or more files")],
    chunk_method: Annotated[str | None, Form(description="Chunk method for these files (default: the dataset's)")]
    = None,
    parser_config: Annotated[str | None, Form(description="JSON object of chunking parameters")] = None,
    stage: Annotated[bool, Form(description="New versions wait, built, for review (publish with "
                                            ".../versions/{version_id}/activate, or discard) instead of going "
                                            "live")] = False,
) -> UploadedDocuments:
    if len(file) > ctx.settings.max_upload_files:
        raise PayloadTooLargeError(f"{len(file)} files in one upload; the limit is {ctx.settings.max_upload_files} "
                                   "files per request (RAGLOOM_MAX_UPLOAD_FILES)")
    config = parse_json_object(parser_config) if parser_config else None
    # each file was received to disk, hashed and held to RAGLOOM_MAX_UPLOAD_MB as it arrived (api/uploads.py);
    # the object store takes it from there (a rename on the local engine)
    uploads = [catalog.Upload(filename=f.filename or "", content_type=f.content_type or "",
                                spooled=spooled(f, ctx.settings)) for f in file]
    with ctx.db.session() as s:
        docs = catalog.add_documents(ctx, s, principal=principal, kb_id=dataset_id, uploads=uploads,
                                       chunk_method=chunk_method, parser_config=config, stage=stage)
        return UploadedDocuments(documents=[document_view(d) for d in docs])


@router.get("")
def list_documents(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep, page: PageQuery = 1, page_size: PageSizeQuery = 100,
    status: Annotated[str | None, Query(description="queued, running, done, failed or cancelled")] = None,
    type: Annotated[str | None, Query(max_length=16, description="file type: the name's extension (pdf, docx)")]
    = None,
    name: Annotated[str | None, Query(max_length=256, description="part of the name (case-insensitive)")] = None,
) -> DocumentList:
    """The dataset's documents, oldest first; ``total`` counts those the filters keep."""
    where = catalog.DocumentFilter(status=status, type=type, name=name)
    with ctx.db.session() as s:
        docs, total = catalog.list_documents(
            s, principal=principal, kb_id=dataset_id, offset=(page - 1) * page_size, limit=page_size, where=where
        )
        facts = catalog.file_facts(s, docs)
        return DocumentList(documents=[document_view(d, facts) for d in docs], total=total)


@router.get("/{document_id}")
def get_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> Document:
    with ctx.db.session() as s:
        return document_view(catalog.get(s, principal=principal, kb_id=dataset_id, doc_id=document_id))


@router.get("/{document_id}/versions")
def list_versions(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> VersionList:
    """The document's versions, newest first: the one searches see is ``active``; a re-parse or a
    replaced file makes a new one, published atomically when all its tasks are done. Each says why it
    was made and by whom, and whether it is ``kept`` (can be rolled back to and compared)."""
    with ctx.db.session() as s:
        doc = catalog.get(s, principal=principal, kb_id=dataset_id, doc_id=document_id)
        rows = catalog.versions(s, principal=principal, kb_id=dataset_id, doc_id=document_id)
        users = catalog.user_names(s, {u for v in rows for u in (v.created_by, v.published_by) if u})
        return VersionList(versions=[version_view(v, doc, users) for v in rows],
                           active_version_id=doc.active_version_id)


@router.get("/{document_id}/versions/diff")
def diff_versions(
    dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
    from_: Annotated[str | None, Query(alias="from", max_length=40,
                                       description="the older version (number or id; default: the kept version "
                                                   "before 'to')")] = None,
    to: Annotated[str | None, Query(max_length=40, description="the newer version (number or id; default: the "
                                                                "active one)")] = None,
) -> VersionDiff:
    """Chunks added, removed and changed between two kept versions, the changed words marked, and the
    cells of table chunks that changed."""
    with ctx.db.session() as s:
        d = versions.diff(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id, before=from_, after=to)
        return version_diff_view(d)


@router.post("/{document_id}/versions/{version_id}/activate", dependencies=[rate_limited("reparse")],
             responses=RATE_LIMITED)
def activate_version(
    dataset_id: str, document_id: str,
    version_id: Annotated[str, Path(max_length=40, description="the version's id, or its number")],
    ctx: ContextDep, principal: PrincipalDep,
) -> Document:
    """Make a kept version the one readers see, at once and without parsing: roll back (or forward), or
    publish a staged version that waits for review; searches and answers follow it. 409 when its chunks
    were dropped (re-parse to rebuild)."""
    doc_id = versions.activate(ctx, principal=principal, kb_id=dataset_id, doc_id=document_id, version=version_id)
    with ctx.db.session() as s:
        return document_view(catalog.get(s, principal=principal, kb_id=dataset_id, doc_id=doc_id))


@router.post("/{document_id}/versions/{version_id}/discard")
def discard_version(
    dataset_id: str, document_id: str,
    version_id: Annotated[str, Path(max_length=40, description="the version's id, or its number")],
    ctx: ContextDep, principal: PrincipalDep,
) -> Document:
    """Turn down a staged version that waits for review: its chunks are dropped, readers keep the
    version they see. 409 for a version that does not wait for review."""
    doc_id = versions.discard(ctx, principal=principal, kb_id=dataset_id, doc_id=document_id, version=version_id)
    with ctx.db.session() as s:
        return document_view(catalog.get(s, principal=principal, kb_id=dataset_id, doc_id=doc_id))


@router.put("/{document_id}/file", status_code=202, dependencies=[rate_limited("upload")], responses=RATE_LIMITED)
def replace_file(
    dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
    file: Annotated[UploadFile, File(description="The document's new content (it keeps its name)")],
    stage: Annotated[bool, Form(description="The new version waits, built, for review instead of going live")]
    = False,
) -> Document:
    """New content for the document, keeping its id, metadata, chunk edits and history: a new version,
    published when built (readers see the current one until then). Content equal to the latest
    version's makes none."""
    upload = catalog.Upload(filename=file.filename or "", content_type=file.content_type or "",
                              spooled=spooled(file, ctx.settings))
    with ctx.db.session() as s:
        doc = catalog.replace_file(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                     upload=upload, stage=stage)
        return document_view(doc)


@router.patch("/{document_id}", status_code=202, dependencies=[rate_limited("reparse")], responses=RATE_LIMITED)
def update_document(dataset_id: str, document_id: str, body: DocumentUpdate, ctx: ContextDep,
                    principal: PrincipalDep) -> Document:
    with ctx.db.session() as s:
        doc = catalog.set_chunking(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                     chunk_method=body.chunk_method, parser_config=body.parser_config)
        return document_view(doc)


@router.patch("/{document_id}/metadata")
def update_metadata(dataset_id: str, document_id: str, body: MetadataUpdate, ctx: ContextDep,
                    principal: PrincipalDep) -> Document:
    with ctx.db.session() as s:
        doc = catalog.set_metadata(s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                     changes=body.metadata)
        return document_view(doc)


@router.get("/{document_id}/chunks")
def list_chunks(
    dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
    page: PageQuery = 1, page_size: PageSizeQuery = 100,
    include_hidden: Annotated[bool, Query(description="also parents and other rows never matched")] = False,
) -> ChunkList:
    with ctx.db.session() as s:
        listing = chunks.list_chunks(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                     offset=(page - 1) * page_size, limit=page_size, include_hidden=include_hidden)
    return ChunkList(chunks=[stored_chunk_view(r, listing.method, edited=r.id in listing.edited)
                             for r in listing.chunks],
                     total=listing.total, version_id=listing.version_id, method=listing.method)


@router.post("/{document_id}/chunks", status_code=201)
def add_chunk(dataset_id: str, document_id: str, body: ChunkCreate, ctx: ContextDep,
              principal: PrincipalDep) -> StoredChunk:
    """Add a chunk of your own text after the document's last one; it is searchable at once and
    added again to every new version of the document."""
    with ctx.db.session() as s:
        row = chunk_edits.add_chunk(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                    content=body.content, keywords=body.important_keywords,
                                    questions=body.questions)
        method = chunk_edits.method_of(s, row.version_id)
    return stored_chunk_view(row, method, edited=True)


@router.patch("/{document_id}/chunks/{chunk_id}")
def update_chunk(dataset_id: str, document_id: str, chunk_id: str, body: ChunkUpdate, ctx: ContextDep,
                 principal: PrincipalDep) -> StoredChunk:
    """Change a chunk's text, important keywords or questions (re-analysed and re-embedded: search sees
    it at once) and/or disable or enable it. The edit
    is kept as an override: a re-parse applies it again to the chunk when the new version still has it."""
    with ctx.db.session() as s:
        row = chunk_edits.update_chunk(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                       row_id=chunk_id, content=body.content, available=body.available,
                                       keywords=body.important_keywords, questions=body.questions)
        method = chunk_edits.method_of(s, row.version_id)
    return stored_chunk_view(row, method, edited=True)


@router.delete("/{document_id}/chunks/{chunk_id}", status_code=204, response_class=Response)
def delete_chunk(dataset_id: str, document_id: str, chunk_id: str, ctx: ContextDep,
                 principal: PrincipalDep) -> Response:
    """Remove a chunk from the search store; a re-parse leaves it out again."""
    with ctx.db.session() as s:
        chunk_edits.delete_chunk(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id, row_id=chunk_id)
    return Response(status_code=204)


@router.get("/{document_id}/file", response_class=Response,
            responses=binary_response("application/octet-stream", "the original file as an attachment, "
                                      "with its own media type"))
def download_file(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
                  version_id: str | None = None) -> Response:
    """The original file (of ``version_id`` when given)."""
    from ragloom.schemas.names import ascii_filename

    with ctx.db.session() as s:
        stored = catalog.open_original(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                         version_id=version_id)
    # an attachment in a sandbox: an uploaded HTML or SVG file never runs as this site's page
    name = stored.name
    disposition = f"attachment; filename=\"{ascii_filename(name)}\"; filename*=UTF-8''{quote(name, safe='')}"
    # served a piece at a time: a 128 MiB original never sits whole in the server's memory
    headers = {"Content-Disposition": disposition, "Content-Security-Policy": "sandbox"}
    if stored.size > 0:
        headers["Content-Length"] = str(stored.size)
    return StreamingResponse(stored.pieces, media_type=stored.media_type, headers=headers)


@router.get("/{document_id}/pages")
def list_pages(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
               version_id: str | None = None) -> PageList:
    """Page sizes in PDF points (positions are in these units) and preview image links."""
    with ctx.db.session() as s:
        rows = catalog.pages(s, principal=principal, kb_id=dataset_id, doc_id=document_id, version_id=version_id)
    return pages_view(rows, base=f"/api/v1/datasets/{dataset_id}/documents/{document_id}/pages",
                      version_id=version_id)


@router.get("/{document_id}/pages/{page}.png", response_class=Response,
            responses=binary_response("image/png", "the page's preview image"))
def page_image(dataset_id: str, document_id: str, page: Annotated[int, Path(ge=1, le=MAX_PAGE_NUMBER)],
               ctx: ContextDep, principal: PrincipalDep,
               version_id: str | None = None,
               width: Annotated[int | None, Query(ge=16, le=1024, description="scaled down to this many pixels "
                                                   "wide (a thumbnail); the stored image when absent or "
                                                   "narrower")] = None) -> Response:
    with ctx.db.session() as s:
        image = catalog.page_png(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id, page=page,
                                   version_id=version_id, width=width)
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})


@router.get("/{document_id}/chunks/{chunk_id}/figure.png", response_class=Response,
            responses=binary_response("image/png", "the figure chunk's picture"))
def figure_image(dataset_id: str, document_id: str, chunk_id: Annotated[str, Path(max_length=64)],
                 ctx: ContextDep, principal: PrincipalDep) -> Response:
    """The picture of a figure chunk (``kind`` ``figure``): cropped from its page, or as the file holds it."""
    with ctx.db.session() as s:
        image = catalog.figure_png(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                                   chunk_id=chunk_id)
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})


VIEW_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"


@router.get("/{document_id}/preview", response_class=Response,
            responses=binary_response("text/html", "the version's HTML view, the highlighted blocks marked"))
def preview(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep,
            version_id: str | None = None,
            highlight: Annotated[str, Query(max_length=4000, pattern=r"^\d{1,7}(,\d{1,7})*$|^$",
                                            description="block numbers to mark, e.g. 3,4,5")] = "") -> Response:
    """The HTML view of a flowing document (DOCX, HTML, Markdown, e-mail, sheets...): one element per
    block, anchored ``#b{n}``; a citation's view positions ``[0, 0, 0, n, n]`` name the blocks."""
    with ctx.db.session() as s:
        page = catalog.view(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id,
                              version_id=version_id, highlight=[int(n) for n in highlight.split(",") if n])
    return Response(page, media_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": VIEW_POLICY, "Cache-Control": "private, max-age=3600"})


@router.delete("")
def delete_documents(dataset_id: str, body: DocumentIds, ctx: ContextDep,
                     principal: PrincipalDep) -> DeletedDocuments:
    with ctx.db.session() as s:
        n = catalog.delete_documents(ctx, s, principal=principal, kb_id=dataset_id, doc_ids=body.ids)
    return DeletedDocuments(deleted=n)


@router.post("/{document_id}/reparse", status_code=202, dependencies=[rate_limited("reparse")],
             responses=RATE_LIMITED)
def reparse_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> Document:
    with ctx.db.session() as s:
        return document_view(catalog.reparse(ctx, s, principal=principal, kb_id=dataset_id, doc_id=document_id))


@router.post("/{document_id}/cancel")
def cancel_document(dataset_id: str, document_id: str, ctx: ContextDep, principal: PrincipalDep) -> Document:
    with ctx.db.session() as s:
        return document_view(catalog.cancel(s, principal=principal, kb_id=dataset_id, doc_id=document_id))
