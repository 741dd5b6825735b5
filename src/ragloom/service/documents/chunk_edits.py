"""Manual chunk edits: change a chunk's text, disable or enable it, delete it, add one (DESIGN §3).

Each edit changes the active version's row in the search store at once (re-analysed and
re-embedded, so search sees it) and is kept as a :class:`~ragloom.db.models.ChunkOverride` of the
document. A re-parse builds a new version from the file; before its rows are indexed,
:func:`apply_overrides` re-applies every override to the new chunk that still has the edited
chunk's parsed text (its *anchor*), and appends the added chunks. An edit whose chunk no longer
exists (another chunk method, a changed file) stays unapplied until a version has it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import ChunkKind, ChunkRecord
from ragloom.db.models import ChunkOverride, Document, DocumentVersion, KnowledgeBase, new_id
from ragloom.docstore.base import Filters
from ragloom.docstore.ids import chunk_id
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError
from ragloom.ingest.job import ORDER_STRIDE, Job, telling_name
from ragloom.ingest.pipeline import TITLE_WEIGHT, embedding_text
from ragloom.models.embedding import Embedder
from ragloom.schemas.chunks import MAX_CHUNK_TERM_CHARS, MAX_CHUNK_TERMS
from ragloom.service import knowledgebases
from ragloom.service.accounts import workspace_models
from ragloom.service.documents import catalog

__all__ = ["ADDED_ORDER", "anchor_of", "add_chunk", "apply_overrides", "delete_chunk", "edited_ids", "follow_to",
           "method_of", "update_chunk"]

ADDED_ORDER = 1_000_000 * ORDER_STRIDE  # added chunks sort after every parsed one (pages < 1,000,000)
KEEP_APPLIED = 8  # versions remembered per override (older ones are garbage-collected anyway)
HIDDEN_KINDS = (ChunkKind.PARENT, ChunkKind.TOC, ChunkKind.SUMMARY)  # rows no one edits: they follow their chunks


def anchor_of(text: str) -> str:
    """A parsed chunk's identity across versions: the hash of its text as the parser made it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class _Target:
    kb: KnowledgeBase
    doc: Document
    version_id: str


def _target(session: Session, principal: Principal, kb_id: str, doc_id: str) -> _Target:
    kb = knowledgebases.get_editable(session, principal=principal, kb_id_or_name=kb_id, action="edit its chunks")
    doc = catalog.get(session, principal=principal, kb_id=kb.id, doc_id=doc_id)
    if doc.active_version_id is None:
        raise ConflictError(f"document {doc.name!r} has no parsed version yet: its chunks cannot be edited")
    return _Target(kb, doc, doc.active_version_id)


def _row(ctx: Context, t: _Target, row_id: str) -> ChunkRecord:
    rows = ctx.docstore.get(t.doc.tenant_id, [row_id])
    if (not rows or rows[0].doc_id != t.doc.id or rows[0].version_id != t.version_id
            or rows[0].kind in HIDDEN_KINDS):
        raise NotFoundError(f"chunk {row_id!r} not found in document {t.doc.name!r}")
    return rows[0]


def _override_of(session: Session, doc_id: str, version_id: str, row_id: str) -> ChunkOverride | None:
    found = session.scalars(select(ChunkOverride).where(ChunkOverride.document_id == doc_id))
    return next((o for o in found if o.applied.get(version_id) == row_id), None)


def _mark_applied(o: ChunkOverride, version_id: str, row_id: str) -> None:
    applied = {k: v for k, v in o.applied.items() if k != version_id}
    o.applied = dict(list(applied.items())[-(KEEP_APPLIED - 1):]) | {version_id: row_id}


def method_of(session: Session, version_id: str) -> str:
    """The chunk method of a version (as the chunk list shows it)."""
    version = session.get(DocumentVersion, version_id)
    return version.chunk_method if version is not None else ""


def edited_ids(session: Session, doc_id: str, version_id: str) -> set[str]:
    """The rows of ``version_id`` that carry an edit (changed, disabled or added)."""
    found = session.scalars(select(ChunkOverride).where(ChunkOverride.document_id == doc_id))
    return {o.applied[version_id] for o in found if version_id in o.applied}


def _reindex(ctx: Context, embedder: Embedder, filename: str, rows: Sequence[ChunkRecord], language: str) -> None:
    """Re-analyse and re-embed rows whose text changed (as the pipeline does: the file name blended in)."""
    from ragloom.nlp import analyze_chunk

    if not rows:
        return
    title = telling_name(filename)
    texts = ([title] if title else []) + [embedding_text(r.content, r.questions) for r in rows]
    vectors = embedder.embed_passages(texts)
    own = vectors[1:] if title else vectors
    for r, vec in zip(rows, own, strict=True):
        v = TITLE_WEIGHT * vectors[0] + (1 - TITLE_WEIGHT) * vec if title else vec
        r.vector = (v / (np.linalg.norm(v) or 1.0)).astype(np.float32)
        analyzer = ctx.analyzers.for_text(r.content, language)
        terms = analyze_chunk(analyzer, r.content, title=title or "", important_keywords=r.important_keywords,
                              questions=r.questions)
        r.content_terms, r.content_fine_terms = terms.content_terms, terms.content_fine_terms
        r.title_terms, r.title_fine_terms = terms.title_terms, terms.title_fine_terms
        r.important_keywords = terms.important_keywords
        r.important_terms, r.question_terms = terms.important_terms, terms.question_terms
        r.html = None  # a table's HTML showed the parsed text, not the edited one
        r.table = None  # and so did its rows


def _checked(name: str, values: Sequence[str] | None) -> list[str] | None:
    """A caller's keywords or questions, trimmed and without blanks; refused when too many or too long."""
    if values is None:
        return None
    out = [v.strip() for v in values if v.strip()]
    if len(out) > MAX_CHUNK_TERMS or any(len(v) > MAX_CHUNK_TERM_CHARS for v in out):
        raise InvalidRequestError(f"a chunk takes at most {MAX_CHUNK_TERMS} {name} of at most "
                                  f"{MAX_CHUNK_TERM_CHARS} characters each")
    return out


def _set_content(row: ChunkRecord, content: str | None, available: bool | None,
                 keywords: Sequence[str] | None = None, questions: Sequence[str] | None = None) -> bool:
    """Apply an edit to a row (``None``: that part unchanged); True when its text, keywords or questions
    changed (it must be re-analysed and re-embedded)."""
    changed = False
    if available is not None:
        row.available = available
    if content is not None and content != row.content:
        row.content, changed = content, True
    if keywords is not None and list(keywords) != row.important_keywords:
        row.important_keywords, changed = list(keywords), True
    if questions is not None and list(questions) != row.questions:
        row.questions, changed = list(questions), True
    return changed


def update_chunk(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 row_id: str, content: str | None = None, available: bool | None = None,
                 keywords: Sequence[str] | None = None, questions: Sequence[str] | None = None) -> ChunkRecord:
    """Change a chunk's text, its important keywords or the questions it answers (matched beside its
    text; questions are embedded in its place), and/or enable or disable it (a disabled chunk is never
    retrieved). ``None`` leaves that part as it is; ``[]`` clears keywords or questions."""
    keywords, questions = _checked("keywords", keywords), _checked("questions", questions)
    t = _target(session, principal, kb_id, doc_id)
    row = _row(ctx, t, row_id)
    o = _override_of(session, t.doc.id, t.version_id, row_id)
    if o is None:
        o = ChunkOverride(id=new_id(), document_id=t.doc.id, anchor=anchor_of(row.content), action="edit",
                          applied={})
        session.add(o)
    if content is not None:
        o.content = content
    if keywords is not None:
        o.keywords = list(keywords)
    if questions is not None:
        o.questions = list(questions)
    if available is not None:
        o.available = available
        if available != row.available:
            t.doc.chunk_count += 1 if available else -1
    _mark_applied(o, t.version_id, row_id)
    if _set_content(row, content, available, keywords, questions):
        _reindex(ctx, workspace_models.embedder(ctx, t.kb.embedding_model), t.doc.name, [row], t.kb.language)
    session.flush()
    ctx.docstore.upsert(t.doc.tenant_id, [row])
    return row


def add_chunk(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
              content: str, keywords: Sequence[str] = (), questions: Sequence[str] = ()) -> ChunkRecord:
    """A chunk of the caller's own text (with its important keywords and the questions it answers, if
    given), after the document's last one (kept over re-parses)."""
    keywords, questions = _checked("keywords", keywords) or [], _checked("questions", questions) or []
    t = _target(session, principal, kb_id, doc_id)
    scope = Filters(kb_ids=[t.kb.id], doc_ids=[t.doc.id], version_ids=[t.version_id], available_only=False)
    total = ctx.docstore.count(t.doc.tenant_id, scope)
    last, _ = ctx.docstore.list_chunks(t.doc.tenant_id, scope, offset=max(0, total - 1), limit=1)
    order = max([ADDED_ORDER, *(r.order + 1 for r in last)])
    oid = new_id()
    row = ChunkRecord(id=chunk_id(t.version_id, order), kb_id=t.kb.id, doc_id=t.doc.id, version_id=t.version_id,
                      content=content, vector=np.zeros(0, dtype=np.float32), document_name=t.doc.name, order=order,
                      important_keywords=list(keywords), questions=list(questions))
    _reindex(ctx, workspace_models.embedder(ctx, t.kb.embedding_model), t.doc.name, [row], t.kb.language)
    session.add(ChunkOverride(id=oid, document_id=t.doc.id, anchor=f"add:{oid}", action="add", content=content,
                              keywords=list(row.important_keywords) or None, questions=list(questions) or None,
                              applied={t.version_id: row.id}))
    t.doc.chunk_count += 1
    session.flush()
    ctx.docstore.upsert(t.doc.tenant_id, [row])
    return row


def delete_chunk(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                 row_id: str) -> None:
    """Remove a chunk; a re-parse leaves it out again (an added chunk is simply gone)."""
    t = _target(session, principal, kb_id, doc_id)
    row = _row(ctx, t, row_id)
    o = _override_of(session, t.doc.id, t.version_id, row_id)
    if o is not None and o.action == "add":
        session.delete(o)
    else:
        if o is None:
            o = ChunkOverride(id=new_id(), document_id=t.doc.id, anchor=anchor_of(row.content), applied={})
            session.add(o)
        o.action, o.content, o.available, o.keywords, o.questions = "delete", None, None, None, None
        _mark_applied(o, t.version_id, row_id)
    t.doc.chunk_count -= 1 if row.available else 0
    session.flush()
    ctx.docstore.delete(t.doc.tenant_id, Filters(kb_ids=[t.kb.id], doc_ids=[t.doc.id], ids=[row_id]))


def apply_overrides(ctx: Context, job: Job, records: list[ChunkRecord], embedder: Embedder) -> None:
    """Re-apply the document's overrides to a new version's rows before they are indexed: each edit
    or deletion to the first row with its anchor, and the added chunks (by the task that holds the
    document's start). Records which rows of ``job.version_id`` carry them."""
    with ctx.db.session() as s:
        overrides = list(s.scalars(select(ChunkOverride).where(ChunkOverride.document_id == job.doc_id)
                                   .order_by(ChunkOverride.created_at)))
        if not overrides:
            return
        by_anchor = {o.anchor: o for o in overrides if o.action != "add"}
        changed: list[ChunkRecord] = []
        dropped: set[str] = set()
        for r in records:
            o = by_anchor.pop(anchor_of(r.content), None) if r.kind not in HIDDEN_KINDS else None
            if o is None:
                continue
            _mark_applied(o, job.version_id, r.id)
            if o.action == "delete":
                dropped.add(r.id)
            elif _set_content(r, o.content, o.available, o.keywords, o.questions):
                changed.append(r)
        records[:] = [r for r in records if r.id not in dropped]
        if job.from_page <= 1:
            for i, o in enumerate(o for o in overrides if o.action == "add"):
                row = ChunkRecord(id=chunk_id(job.version_id, ADDED_ORDER + i), kb_id=job.kb_id, doc_id=job.doc_id,
                                  version_id=job.version_id, content=o.content or "",
                                  vector=np.zeros(0, dtype=np.float32), document_name=job.filename,
                                  order=ADDED_ORDER + i, available=o.available is not False,
                                  important_keywords=list(o.keywords or []), questions=list(o.questions or []))
                _mark_applied(o, job.version_id, row.id)
                records.append(row)
                changed.append(row)
        _reindex(ctx, embedder, job.filename, changed, job.language)


def follow_to(ctx: Context, *, tenant_id: str, kb_id: str, doc_id: str, version_id: str, filename: str,
              embedding_model: str, language: str = "en") -> int:
    """A kept version made live again (a rollback, a publish after review) gets the document's edits as a
    re-parse would give them: each edit or deletion on the row it was applied to in that version, else on
    the row with its anchor; the added chunks after the last one. Rows whose text changes are re-embedded.
    Returns the rows changed."""
    with ctx.db.session() as s:
        overrides = list(s.scalars(select(ChunkOverride).where(ChunkOverride.document_id == doc_id)
                                   .order_by(ChunkOverride.created_at)))
        if not overrides:
            return 0
        rows: list[ChunkRecord] = []
        scope = Filters(kb_ids=[kb_id], doc_ids=[doc_id], version_ids=[version_id], available_only=False)
        while True:
            page, total = ctx.docstore.list_chunks(tenant_id, scope, offset=len(rows), limit=1000)
            rows.extend(page)
            if not page or len(rows) >= total:
                break
        by_id = {r.id: r for r in rows}
        by_anchor: dict[str, ChunkRecord] = {}
        for r in rows:
            if r.kind not in HIDDEN_KINDS:
                by_anchor.setdefault(anchor_of(r.content), r)
        changed: list[ChunkRecord] = []
        touched: list[ChunkRecord] = []
        dropped: list[str] = []
        added = [o for o in overrides if o.action == "add"]
        for o in overrides:
            if o.action == "add":
                continue
            row = by_id.get(o.applied.get(version_id, "")) or by_anchor.get(o.anchor)
            if row is None:
                continue
            _mark_applied(o, version_id, row.id)
            if o.action == "delete":
                dropped.append(row.id)
                continue
            was = row.available
            if _set_content(row, o.content, o.available):
                changed.append(row)
            elif row.available != was:
                touched.append(row)
        for i, o in enumerate(added):
            rid = chunk_id(version_id, ADDED_ORDER + i)
            row = by_id.get(rid) or ChunkRecord(id=rid, kb_id=kb_id, doc_id=doc_id, version_id=version_id, content="",
                                                vector=np.zeros(0, dtype=np.float32), document_name=filename,
                                                order=ADDED_ORDER + i)
            _mark_applied(o, version_id, row.id)
            if _set_content(row, o.content or "", o.available is not False) or rid not in by_id:
                changed.append(row)
            else:
                touched.append(row)
    _reindex(ctx, workspace_models.embedder(ctx, embedding_model), filename, changed, language)
    if changed or touched:
        ctx.docstore.upsert(tenant_id, changed + touched)
    if dropped:
        ctx.docstore.delete(tenant_id, Filters(kb_ids=[kb_id], doc_ids=[doc_id], ids=dropped))
    return len(changed) + len(touched) + len(dropped)
