"""Working with a document's versions (issue 27): keep the last few versions' chunks, roll back to one of
them at once, compare two of them.

A version readers no longer see keeps its rows in the search store while it is one of the document's
``RAGLOOM_KEEP_VERSIONS`` newest kept versions; its matchable rows are *parked*: made unavailable (so they
never take a place in a search's candidate window) and their ids remembered on the version. A rollback
un-parks the rows of the version asked for, flips ``document.active_version_id`` in one transaction (as a
publish does) and parks the rows of the version it replaces: no parsing, no embedding. Older versions'
rows are dropped (:func:`trim`, at each publish and by ``ragloom gc``); their files stay, so a re-parse
can rebuild them.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import Document, DocumentVersion, utcnow
from ragloom.docstore.base import Filters
from ragloom.errors import ConflictError, NotFoundError
from ragloom.service import knowledgebases
from ragloom.service.accounts import audit
from ragloom.service.documents import catalog
from ragloom.states import DocumentStatus, VersionStatus

log = logging.getLogger(__name__)

PAGE = 1000  # rows read from the search store at once
KEPT = (VersionStatus.READY, VersionStatus.SUPERSEDED)  # the statuses of versions whose rows may be kept


def _rows(ctx: Context, tenant_id: str, filters: Filters) -> Iterator[list[ChunkRecord]]:
    offset = 0
    while True:
        rows, total = ctx.docstore.list_chunks(tenant_id, filters, offset=offset, limit=PAGE)
        if rows:
            yield rows
        offset += PAGE
        if not rows or offset >= total:
            return


def park(ctx: Context, tenant_id: str, kb_id: str, version_id: str) -> list[str]:
    """Hide a version's matchable rows (kept, never matched); the ids hidden, for :func:`unpark`."""
    hidden: list[str] = []
    for page in list(_rows(ctx, tenant_id, Filters(kb_ids=[kb_id], version_ids=[version_id]))):
        for r in page:
            r.available = False
        ctx.docstore.upsert(tenant_id, page)
        hidden.extend(r.id for r in page)
    return hidden


def unpark(ctx: Context, tenant_id: str, kb_id: str, version_id: str, ids: list[str]) -> None:
    """Make the rows :func:`park` hid matchable again."""
    for start in range(0, len(ids), PAGE):
        rows = ctx.docstore.get(tenant_id, ids[start:start + PAGE])
        for r in rows:
            r.available = True
        ctx.docstore.upsert(tenant_id, [r for r in rows if r.version_id == version_id and r.kb_id == kb_id])


def retire(ctx: Context, *, tenant_id: str, kb_id: str, doc_id: str, version_id: str) -> None:
    """The version ``version_id`` stopped being the one readers see (a newer one was published, or a
    rollback chose another): its rows are parked, then versions beyond the kept ones are dropped."""
    ids = park(ctx, tenant_id, kb_id, version_id)
    with ctx.db.session() as s:
        v = s.get(DocumentVersion, version_id)
        doc = s.get(Document, doc_id)
        if v is not None and doc is not None and doc.active_version_id != version_id:
            v.parked = ids
            v = None
    if v is not None:  # made active again meanwhile (a quick rollback): its rows come back
        unpark(ctx, tenant_id, kb_id, version_id, ids)
    trim(ctx, doc_id)


def trim(ctx: Context, doc_id: str | None = None) -> int:
    """Drop the search-store rows of every version beyond a document's ``keep_versions`` newest kept
    ones (the active one always stays); of one document, or of all. The versions dropped."""
    keep = ctx.settings.keep_versions
    dropped: list[tuple[str, str, str]] = []  # (tenant, kb, version)
    with ctx.db.session() as s:
        q = select(DocumentVersion, Document).join(Document, Document.id == DocumentVersion.document_id).where(
            DocumentVersion.indexed.is_(True), DocumentVersion.status.in_(KEPT))
        if doc_id is not None:
            q = q.where(Document.id == doc_id)
        seen: dict[str, int] = {}
        for v, doc in s.execute(q.order_by(Document.id, DocumentVersion.number.desc())).all():
            if v.id == doc.active_version_id:
                continue
            seen[doc.id] = seen.get(doc.id, 0) + 1
            if seen[doc.id] >= keep:  # the active one and keep - 1 others stay
                v.indexed, v.parked = False, None
                dropped.append((doc.tenant_id, doc.kb_id, v.id))
    for tenant_id, kb_id, version_id in dropped:
        ctx.docstore.delete(tenant_id, Filters(kb_ids=[kb_id], version_ids=[version_id]))
    if dropped:
        log.info("dropped the chunks of %d old document versions (RAGLOOM_KEEP_VERSIONS=%d)", len(dropped), keep)
    return len(dropped)


def version_of(session: Session, *, principal: Principal, kb_id: str, doc_id: str,
               version: str | int) -> tuple[Document, DocumentVersion]:
    """A document's version by number (``3``) or id; NotFoundError when the document has none such."""
    doc = catalog.get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    text = str(version).lstrip("v")
    cond = DocumentVersion.number == int(text) if text.isdigit() and len(text) < 10 else (
        DocumentVersion.id == str(version))
    found = session.scalar(select(DocumentVersion).where(DocumentVersion.document_id == doc.id, cond))
    if found is None:
        raise NotFoundError(f"version {version!r} of {doc.name!r} not found")
    return doc, found


def activate(ctx: Context, *, principal: Principal, kb_id: str, doc_id: str, version: str | int) -> str:
    """Make a kept version the one readers see, at once, without parsing: an earlier one (a rollback), or
    a staged one that waits for review (its publish). Its rows come back, the document row flips in one
    transaction, the version it replaces is parked. A build in progress is cancelled (it would otherwise
    replace the version asked for when it is published). Returns the document's id."""
    with ctx.db.session() as s:
        kb = knowledgebases.get_editable(s, principal=principal, kb_id_or_name=kb_id, action="roll back its documents")
        doc, target = version_of(s, principal=principal, kb_id=kb.id, doc_id=doc_id, version=version)
        if target.id == doc.active_version_id:
            return doc.id
        if target.status not in KEPT or not target.indexed:
            why = (f"its chunks were dropped (only the last {ctx.settings.keep_versions} versions keep theirs, "
                   "RAGLOOM_KEEP_VERSIONS); re-parse to rebuild" if target.status in KEPT
                   else f"it is {target.status}, never published")
            raise ConflictError(f"version {target.number} of {doc.name!r} cannot be made live: {why}")
        if target.embedding_model and target.embedding_model != kb.embedding_model:
            raise ConflictError(f"version {target.number} of {doc.name!r} was embedded with "
                                f"{target.embedding_model!r}; the knowledge base now uses {kb.embedding_model!r}: "
                                "re-parse instead")
        tenant_id, ids, target_id = doc.tenant_id, list(target.parked or []), target.id
        kb_id, kb_name, model, filename, the_doc = kb.id, kb.name, kb.embedding_model, doc.name, doc.id
        language = kb.language
    unpark(ctx, tenant_id, kb_id, target_id, ids)  # matchable again, but not yet searched: not active
    from ragloom.service.documents import chunk_edits

    chunk_edits.follow_to(ctx, tenant_id=tenant_id, kb_id=kb_id, doc_id=the_doc, version_id=target_id,
                          filename=filename, embedding_model=model, language=language)  # the edits made meanwhile
    dropped: str | None = None
    with ctx.db.session() as s:
        doc = catalog.get(s, principal=principal, kb_id=kb_id, doc_id=doc_id)
        catalog.cancel_open_tasks(s, doc)
        target_row = s.get(DocumentVersion, target_id)
        assert target_row is not None
        if not target_row.indexed:  # dropped meanwhile
            raise ConflictError(f"version {target_row.number} of {doc.name!r} was just dropped; re-parse it")
        old_id = doc.active_version_id
        building = s.get(DocumentVersion, doc.latest_version_id) if doc.latest_version_id else None
        if building is not None and building.status == VersionStatus.BUILDING:
            building.status, building.indexed = VersionStatus.CANCELLED, False
            building.error = f"cancelled by the rollback to version {target_row.number}"
            dropped = building.id
        if old_id and old_id != target_id:
            old = s.get(DocumentVersion, old_id)
            if old is not None:
                old.status = VersionStatus.SUPERSEDED
        review = target_row.staged and target_row.published_at is None  # never live: this is its publish
        what = f"published version {target_row.number}" if review else f"rolled back to version {target_row.number}"
        target_row.status, target_row.parked = VersionStatus.READY, None
        target_row.published_at, target_row.published_by = utcnow(), principal.user_id
        doc.active_version_id = doc.latest_version_id = target_id
        doc.chunk_count, doc.coverage = target_row.chunk_count, target_row.coverage
        doc.status, doc.progress = DocumentStatus.DONE, 1.0
        doc.message = what
        audit.record_by(s, principal, "document.published" if review else "document.rollback",
                        target=f"document:{doc.id}", detail=f"{doc.name} in {kb_name}: {what}")
        out = doc.id
    if dropped is not None:  # what the cancelled build indexed so far
        ctx.docstore.delete(tenant_id, Filters(kb_ids=[kb_id], version_ids=[dropped]))
    if old_id and old_id != target_id:
        retire(ctx, tenant_id=tenant_id, kb_id=kb_id, doc_id=out, version_id=old_id)
    from ragloom.service.builds import kinds

    try:
        kinds.on_published(ctx, kb_id, out)  # RAPTOR summaries and graph records follow
    except Exception:
        log.exception("document %s rolled back, but its knowledge builds could not be queued", out)
    return out


def discard(ctx: Context, *, principal: Principal, kb_id: str, doc_id: str, version: str | int) -> str:
    """A reviewer turns down a version that waits for review (staged, built, never live): its chunks are
    dropped and readers keep the version they see. Returns the document's id."""
    with ctx.db.session() as s:
        kb = knowledgebases.get_editable(s, principal=principal, kb_id_or_name=kb_id,
                                         action="review its documents' versions")
        doc, target = version_of(s, principal=principal, kb_id=kb.id, doc_id=doc_id, version=version)
        waits = target.status in (VersionStatus.READY, VersionStatus.BUILDING)
        if not (target.staged and waits) or target.published_at is not None or target.id == doc.active_version_id:
            raise ConflictError(f"version {target.number} of {doc.name!r} does not wait for review: only a staged "
                                "version that was never published can be discarded")
        if target.status == VersionStatus.BUILDING:
            catalog.cancel_open_tasks(s, doc)
        target.status, target.indexed, target.parked = VersionStatus.CANCELLED, False, None
        target.error = "discarded by review"
        if doc.latest_version_id == target.id:  # a re-parse takes the live version's file again
            doc.latest_version_id = doc.active_version_id
            doc.message = f"version {target.number} discarded"
            if doc.active_version_id is not None:
                doc.status = DocumentStatus.DONE
        audit.record_by(s, principal, "document.discarded", target=f"document:{doc.id}",
                        detail=f"{doc.name} in {kb.name}: version {target.number}")
        tenant_id, kb_id_, out, target_id = doc.tenant_id, kb.id, doc.id, target.id
    ctx.docstore.delete(tenant_id, Filters(kb_ids=[kb_id_], version_ids=[target_id]))
    return out


# -- diff ------------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class CellChange:
    row: str  # the row's stub cells (else its number in the chunk)
    column: str  # the column's header path, joined with " / "
    before: str | None
    after: str | None


@dataclass(slots=True)
class ChunkChange:
    kind: str  # added | removed | changed
    before: ChunkRecord | None
    after: ChunkRecord | None
    marked: str = ""  # the text with changes marked: [-removed-] {+added+}
    similarity: float = 0.0
    cells: list[CellChange] = field(default_factory=list)


@dataclass(slots=True)
class VersionDiff:
    doc: Document
    before: DocumentVersion | None  # None: no earlier kept version (every chunk of ``after`` is added)
    after: DocumentVersion
    changes: list[ChunkChange]
    unchanged: int


CHANGED_AT = 0.5  # two chunks this similar (difflib ratio of their words) are one chunk changed


def diff(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
         before: str | int | None = None, after: str | int | None = None) -> VersionDiff:
    """Chunks added, removed and changed from ``before`` (default: the version before ``after``) to
    ``after`` (default: the version readers see, else the latest; with no kept version before it, every
    chunk is added). Both versions' chunks must still be in the search store (the last ``keep_versions``
    versions): else ConflictError."""
    doc = catalog.get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    if after is None:
        after = (session.get(DocumentVersion, catalog.shown_version_id(doc) or "")
                 or _missing(doc)).number
    _, new = version_of(session, principal=principal, kb_id=kb_id, doc_id=doc.id, version=after)
    if before is None:
        prev = session.scalar(select(DocumentVersion).where(
            DocumentVersion.document_id == doc.id, DocumentVersion.number < new.number,
            DocumentVersion.indexed.is_(True), DocumentVersion.status.in_(KEPT))
            .order_by(DocumentVersion.number.desc()))
        if prev is not None:
            before = prev.number
    old = None if before is None else version_of(session, principal=principal, kb_id=kb_id, doc_id=doc.id,
                                                  version=before)[1]
    for v in (old, new):
        if v is not None and (v.status not in KEPT or not v.indexed):
            raise ConflictError(f"version {v.number} of {doc.name!r} has no chunks to compare: "
                                + (f"it is {v.status}" if v.status not in KEPT else "they were dropped "
                                   f"(RAGLOOM_KEEP_VERSIONS={ctx.settings.keep_versions})"))
    a = _chunks(ctx, doc, old.id) if old is not None else []  # no earlier version: every chunk is added
    b = _chunks(ctx, doc, new.id)
    changes, unchanged = compare(a, b)
    return VersionDiff(doc=doc, before=old, after=new, changes=changes, unchanged=unchanged)


def _missing(doc: Document) -> DocumentVersion:
    raise NotFoundError(f"document {doc.name!r} has no version")


HIDDEN = ("parent", "toc", "summary")


def _chunks(ctx: Context, doc: Document, version_id: str) -> list[ChunkRecord]:
    rows = [r for page in _rows(ctx, doc.tenant_id, Filters(kb_ids=[doc.kb_id], doc_ids=[doc.id],
                                                              version_ids=[version_id], available_only=False))
            for r in page]
    return sorted((r for r in rows if r.kind not in HIDDEN), key=lambda r: r.order)


def compare(a: list[ChunkRecord], b: list[ChunkRecord]) -> tuple[list[ChunkChange], int]:
    """Align two versions' chunks (in order) by their text: equal ones are unchanged; in each run that
    differs, a removed and an added chunk similar enough are one chunk changed."""
    matcher = difflib.SequenceMatcher(a=[r.content for r in a], b=[r.content for r in b], autojunk=False)
    out: list[ChunkChange] = []
    unchanged = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            unchanged += i2 - i1
            continue
        olds, news = list(a[i1:i2]), list(b[j1:j2])
        while olds or news:
            if olds and news:
                if _same_chunk(olds[0], news[0]):
                    o, n = olds.pop(0), news.pop(0)
                    out.append(ChunkChange("changed", o, n, mark(o.content, n.content),
                                           round(_similarity(o.content, n.content), 3), table_cells(o.table, n.table)))
                    continue
                best = max(range(len(news)), key=lambda j: _similarity(olds[0].content, news[j].content))
                if _same_chunk(olds[0], news[best]):
                    for n in news[:best]:
                        out.append(ChunkChange("added", None, n))
                    news = news[best:]
                    continue
                o = olds.pop(0)
                out.append(ChunkChange("removed", o, None))
            elif olds:
                out.append(ChunkChange("removed", olds.pop(0), None))
            else:
                out.append(ChunkChange("added", None, news.pop(0)))
    return out, unchanged


def _same_chunk(a: ChunkRecord, b: ChunkRecord) -> bool:
    """Two chunks of a run that differs are one chunk changed: their words are similar enough, or they
    are rows of one table (the same header)."""
    if a.table and b.table and a.table.get("header_paths") == b.table.get("header_paths"):
        return True
    return _similarity(a.content, b.content) >= CHANGED_AT


def _similarity(x: str, y: str) -> float:
    return difflib.SequenceMatcher(a=x.split(), b=y.split(), autojunk=False).ratio()


def mark(before: str, after: str) -> str:
    """``after``'s words with the words of ``before`` it lost marked ``[-...-]`` and the words it gained
    ``{+...+}`` (words joined by single spaces)."""
    x, y = before.split(), after.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=x, b=y, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(y[j1:j2])
            continue
        if i2 > i1:
            out.append("[-" + " ".join(x[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(y[j1:j2]) + "+}")
    return " ".join(out)


def _cells(table: dict[str, Any] | None) -> dict[tuple[str, str], str]:
    """A table payload's (:func:`ragloom.dataflow.table_rows`) body cells by (row, column): a row is named
    by its stub columns' cells when the table has some (else its number), a column by its header path."""
    if not table:
        return {}
    paths = table.get("header_paths") or []
    stubs = int(table.get("stub_columns") or 0)
    out: dict[tuple[str, str], str] = {}
    for i, row in enumerate(table.get("rows") or []):
        label = " / ".join(str(c) for c in row[:stubs] if str(c).strip()) or str(i + 1)
        for j, cell in enumerate(row):
            if j < stubs:
                continue
            path = paths[j] if j < len(paths) and paths[j] else [str(j + 1)]
            out[(label, " / ".join(str(p) for p in path))] = "" if cell is None else str(cell)
    return out


def table_cells(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[CellChange]:
    """The cells of a table chunk that changed, were added or removed (by row and column header path)."""
    if before is None and after is None:
        return []
    x, y = _cells(before), _cells(after)
    return [CellChange(row=k[0], column=k[1], before=x.get(k), after=y.get(k))
            for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
