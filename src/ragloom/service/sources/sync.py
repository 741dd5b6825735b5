"""A source's sync (a job of the queue, :mod:`ragloom.db.syncs`): list the source, compare each item with
what the last sync kept (:class:`ragloom.db.models.SourceItem`), and bring the documents in step.

For each item the connector lists:

* filtered out (:class:`Filters`) — skipped; a document it made before is deleted (below);
* new — read into a spool file and added as a document, exactly as an upload is
  (:func:`ragloom.service.documents.catalog.add_documents`), with the source's metadata
  (``source_url``, ``source_path``, ``source``, ``source_type``); the item's row is written in the same
  transaction as the document, so a sync killed at any moment neither loses nor duplicates one;
* changed (another change token) — read, and given to its document as new content
  (:func:`ragloom.service.documents.catalog.replace_file`: a new version, published atomically when
  built; equal content makes none); moved (same id, another path or title) — its document renamed;
* unchanged (same token) — nothing read.

Then every item the source no longer lists (deleted there, or now filtered out) loses its document —
unless the listing was incomplete (:meth:`ragloom.ingest.connectors.Connector.problems`), when nothing is
deleted. An error with one item is counted and kept (``errors``) and never stops the others; the item
is tried again next sync. A listing that fails is retried with back-off when the error is transient.

The schedule (:func:`queue_due`) runs in the workers: a source whose ``next_run_at`` passed, with a
schedule and not paused, gets a sync (one worker takes it: a conditional update moves ``next_run_at``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import posixpath
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.db import syncs
from ragloom.db.models import Document, MemberGroup, Source, SourceItem, SourceSync, utcnow
from ragloom.errors import RagloomError, TaskCancelledError, TaskInterruptedError
from ragloom.ingest.connectors import Connector, GroupSource, Item, SourceError
from ragloom.ingest.guard import checkpoint
from ragloom.schemas.names import normalize_filename
from ragloom.schemas.sources import SourceFilters
from ragloom.service.accounts import access, groups
from ragloom.service.documents.catalog import Upload, add_documents, delete_documents, replace_file
from ragloom.service.documents.uploads import SpoolFile, spool_dir
from ragloom.service.sources import manage
from ragloom.states import Role, TaskStatus

log = logging.getLogger(__name__)

RETRY_AFTER = timedelta(seconds=30)  # a transient listing failure: tried again after this, then twice as long
REPORT_EVERY = 0.5  # seconds between progress reports
COUNTS = ("listed", "new", "changed", "deleted", "unchanged", "skipped", "failed")


def item_key(item_id: str) -> str:
    """The unique key of an item id of any length."""
    return hashlib.sha256(item_id.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Filters:
    """A source's filters (:class:`ragloom.schemas.sources.SourceFilters`) as a test of an item."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    file_types: frozenset[str] = frozenset()
    max_bytes: int | None = None

    @classmethod
    def of(cls, filters: SourceFilters, max_bytes: int) -> Filters:
        return cls(tuple(filters.include), tuple(filters.exclude), frozenset(filters.file_types), max_bytes)

    def why_not(self, item: Item) -> str | None:
        """Why the item is left out; None when it is kept."""
        path = (item.path or item.name).lstrip("/")
        if self.include and not any(_matches(path, p) for p in self.include):
            return "not included"
        if any(_matches(path, p) for p in self.exclude):
            return "excluded"
        ext = posixpath.splitext(item.name)[1].lower().lstrip(".")
        if self.file_types and ext not in self.file_types:
            return f"file type {ext or '(none)'} not kept"
        if self.max_bytes is not None and item.size is not None and item.size > self.max_bytes:
            return "too large"
        return None


def _matches(path: str, pattern: str) -> bool:
    """A glob over a path: ``*`` within a name, ``**`` across folders; a pattern without ``/`` matches the
    file name anywhere (``*.md``)."""
    pattern = pattern.lstrip("/")
    if "/" not in pattern:
        return fnmatch.fnmatchcase(posixpath.basename(path), pattern)
    if fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*")):
        return True
    return pattern.startswith("**/") and fnmatch.fnmatchcase(path, pattern[3:])


@dataclass
class _Known:
    row_id: str
    document_id: str
    token: str
    path: str
    title: str
    url: str
    readers_digest: str = ""


@dataclass
class SyncRun:
    """A claimed sync as it runs."""

    ctx: Context
    sync_id: str
    source_id: str
    kb_id: str
    principal: Principal
    source_name: str
    source_type: str
    errors_kept: int
    readers: tuple[str, ...] = ()  # the source's own readers: given to the items whose connector names none
    stats: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    errors: list[dict[str, str]] = field(default_factory=list)
    _last: float = 0.0

    def report(self, stage: str, message: str, *, force: bool = False, progress: float | None = None) -> None:
        """Progress and counts (at most every ``REPORT_EVERY`` s unless ``force``); raises when cancelled."""
        checkpoint()
        now = time.monotonic()
        if not force and now - self._last < REPORT_EVERY:
            return
        self._last = now
        with self.ctx.db.session() as s:
            alive = syncs.report(s, self.sync_id, progress=progress, message=message, stage=stage,
                                 stats=dict(self.stats))
            if alive:
                job = s.get(SourceSync, self.sync_id)
                if job is not None:
                    job.errors = list(self.errors)
        if not alive:
            raise TaskCancelledError("cancelled by user")

    def readers_of(self, item: Item) -> list[str]:
        """Who may read the item's document: the readers its connector names (those it cannot read as a
        user or a group are left out, with an error noted; when none is left the document is read by
        nobody rather than by everyone), else the source's own."""
        out = []
        named = item.principals or self.readers
        for principal in named:
            try:
                out.append(access.normalise(principal))
            except RagloomError as exc:
                self.note(item.id, exc.message)
        return sorted(set(out)) if out or not named else [access.NOBODY]

    def note(self, item_id: str, message: str) -> None:
        if len(self.errors) < self.errors_kept:
            self.errors.append({"item": item_id[:1000], "message": message[:1000]})

    def error(self, item_id: str, message: str) -> None:
        self.stats["failed"] += 1
        if len(self.errors) < self.errors_kept:
            self.errors.append({"item": item_id[:1000], "message": message[:1000]})


def run_sync(ctx: Context, sync_id: str) -> str:
    """Run a claimed sync to its end; the outcome (done, failed, cancelled, requeued, handed back)."""
    with ctx.db.session() as s:
        job = s.get(SourceSync, sync_id)
        source = s.get(Source, job.source_id) if job is not None else None
        if job is None or source is None:
            if job is not None:
                syncs.mark_cancelled(s, sync_id, message="the source was removed")
            return TaskStatus.CANCELLED
        system = Principal(source.tenant_id, source.created_by or "", Role.OWNER, reads_all=True)
        run = SyncRun(ctx, sync_id, source.id, source.kb_id, system, source.name, source.type,
                      ctx.settings.source_sync_errors_kept, readers=tuple(source.readers or ()))
        filters = SourceFilters.model_validate(source.filters or {})
    try:
        made = manage.connector(ctx, source)
    except RagloomError as exc:
        with ctx.db.session() as s:
            syncs.fail(s, sync_id, reason=f"the source's settings are refused: {exc.message}", stats=run.stats)
        return TaskStatus.FAILED
    try:
        return _run(run, made, Filters.of(filters, manage.max_bytes(ctx, filters)))
    except TaskCancelledError as exc:
        with ctx.db.session() as s:
            if isinstance(exc, TaskInterruptedError):
                syncs.hand_back(s, sync_id, message=f"{exc.message}; resumes from what is stored")
                return "handed back"
            syncs.mark_cancelled(s, sync_id, stats=run.stats)
            _finished(s, run, cancelled=True)
        return TaskStatus.CANCELLED
    except SourceError as exc:
        with ctx.db.session() as s:
            job = s.get(SourceSync, sync_id)
            delay = RETRY_AFTER * (2 ** max(0, (job.attempts if job else 1) - 1)) if exc.transient else None
            requeued = syncs.fail(s, sync_id, reason=f"the source could not be listed: {exc.message}",
                                  retry_in=delay, max_attempts=ctx.settings.task_max_retries, stats=run.stats)
            if not requeued:
                _finished(s, run)
        return "requeued" if requeued else TaskStatus.FAILED
    finally:
        made.close()


def _run(run: SyncRun, made: Connector, filters: Filters) -> str:
    ctx = run.ctx
    with ctx.db.session() as s:
        known = {row.item_key: _Known(row.id, row.document_id, row.change_token, row.path, row.title, row.url,
                                      row.readers_digest)
                 for row in s.scalars(select(SourceItem).where(SourceItem.source_id == run.source_id))}
    kept: set[str] = set()
    seen: set[str] = set()
    run.report("listing", "listing the source", force=True)
    for item in made.list_items():
        key = item_key(item.id)
        if key in seen:
            continue
        seen.add(key)
        run.stats["listed"] += 1
        if filters.why_not(item) is not None:
            run.stats["skipped"] += 1
        else:
            kept.add(key)
            _one(run, made, item, key, known.get(key))
        done = run.stats["listed"]
        run.report("listing", f"{done} items listed", progress=0.9 * done / max(len(known), done + 1))
    problems = made.problems()
    if isinstance(made, GroupSource) and not problems:
        _sync_groups(run, made)
    gone = [k for k in known if k not in kept]
    note = ""
    if problems and gone:
        note = (f"; deleted nothing: {len(problems)} item(s) could not be fetched ({problems[0]}), so "
                f"{len(gone)} document(s) not listed this time were kept")
    else:
        for i, key in enumerate(gone):
            run.report("deleting", f"deleting {len(gone) - i} documents whose item is gone", progress=0.95)
            _delete(run, known[key])
    with ctx.db.session() as s:
        counts = ", ".join(f"{run.stats[c]} {c}" for c in COUNTS)
        syncs.finish(s, run.sync_id, message=counts + note, stats=dict(run.stats))
        job = s.get(SourceSync, run.sync_id)
        if job is not None:
            job.errors = list(run.errors)
        _finished(s, run)
    return TaskStatus.DONE


def _sync_groups(run: SyncRun, made: GroupSource) -> None:
    """Keep the workspace's groups the source knows in step (``group:<name>`` readers): each group its
    listing named gets the members it has there; a group this source made that it names no more is
    deleted. A group of the same name made by hand (or by another source) is left as it is, noted."""
    try:
        listed = [(name, groups.emails(members)) for name, members in made.groups()]
    except (SourceError, RagloomError) as exc:
        run.note("groups", f"the source's groups could not be read: {exc.message}")
        return
    tenant = run.principal.tenant_id
    with run.ctx.db.session() as s:
        mine = {g.name: g for g in s.scalars(select(MemberGroup).where(MemberGroup.tenant_id == tenant,
                                                                       MemberGroup.source_id == run.source_id))}
        for name, members in listed:
            group = mine.pop(name, None)
            if group is None:
                if s.scalar(select(MemberGroup.id).where(MemberGroup.tenant_id == tenant, MemberGroup.name == name)):
                    run.note(f"group:{name}", "a group of this name was made by hand or by another source: its "
                             "members are left as they are")
                    continue
                group = MemberGroup(tenant_id=tenant, name=name, source_id=run.source_id,
                                    description=f"kept in step by the source {run.source_name}")
                s.add(group)
                s.flush()
            groups.set_members(s, group, members)
        for gone in mine.values():
            s.delete(gone)


def _finished(session: Session, run: SyncRun, *, cancelled: bool = False) -> None:
    source = session.get(Source, run.source_id)
    if source is not None:
        source.last_sync_id = run.sync_id
        if not cancelled:
            source.last_synced_at = utcnow()


def _meta(run: SyncRun, item: Item) -> dict[str, Any]:
    meta: dict[str, Any] = {"source": run.source_name, "source_type": run.source_type, "source_path": item.path}
    if item.url:
        meta["source_url"] = item.url
    if item.title:
        meta["source_title"] = item.title
    return meta


def _name_for(session: Session, kb_id: str, item: Item, document_id: str | None) -> str:
    """A document name for the item, free in the knowledge base (its own document's name is free)."""
    base = normalize_filename(item.name or item.id)
    stem, ext = posixpath.splitext(base)
    parent = posixpath.dirname(item.path.strip("/"))
    candidates = [base]
    if parent:
        candidates.append(normalize_filename(f"{stem} ({parent.replace('/', ' - ')}){ext}"))
    candidates.append(normalize_filename(f"{stem} ({item_key(item.id)[:8]}){ext}"))
    for name in candidates:
        holder = session.scalar(select(Document.id).where(Document.kb_id == kb_id, Document.name == name))
        if holder is None or holder == document_id:
            return name
    return normalize_filename(f"{stem} ({item_key(item.id)[:16]}){ext}")


def _one(run: SyncRun, made: Connector, item: Item, key: str, known: _Known | None) -> None:
    """Bring one item's document in step; an error is counted, never raised (but a cancel or a stop)."""
    try:
        if known is not None and known.token == item.token:
            run.stats["unchanged"] += 1
            readers = run.readers_of(item)
            if ((known.path, known.title, known.url) != (item.path, item.title, item.url)
                    or known.readers_digest != readers_digest(readers)):
                _moved(run, item, known, readers)
            return
        _store(run, made, item, key, known)
    except (TaskCancelledError, TaskInterruptedError):
        raise
    except Exception as exc:  # one item's failure never stops the others
        message = exc.message if isinstance(exc, RagloomError) else f"{type(exc).__name__}: {exc}"
        log.warning("sync %s: %s: %s", run.sync_id, item.id, message)
        run.error(item.id, message)


def _store(run: SyncRun, made: Connector, item: Item, key: str, known: _Known | None) -> None:
    ctx = run.ctx
    limit = ctx.settings.max_upload_mb * 1024 * 1024
    with SpoolFile(spool_dir(ctx.settings), limit=limit, too_large=f"{item.id} is larger than the upload limit "
                   f"of {ctx.settings.max_upload_mb} MiB (RAGLOOM_MAX_UPLOAD_MB)") as spool:
        for chunk in made.read(item):
            spool.write(chunk)
            checkpoint()
        with ctx.db.session() as s:
            doc = s.get(Document, known.document_id) if known is not None else None
            upload = Upload(filename=_name_for(s, run.kb_id, item, doc.id if doc else None),
                            content_type=item.content_type, spooled=spool.finish())
            if doc is None:
                doc = add_documents(ctx, s, principal=run.principal, kb_id=run.kb_id, uploads=[upload])[0]
                row = s.scalar(select(SourceItem).where(SourceItem.source_id == run.source_id,
                                                        SourceItem.item_key == key))
                if row is None:
                    row = SourceItem(source_id=run.source_id, item_key=key, item_id=item.id, document_id=doc.id)
                    s.add(row)
                row.document_id = doc.id
                run.stats["new"] += 1
            else:
                before = doc.latest_version_id
                if doc.name != upload.filename:
                    doc.name = upload.filename
                replace_file(ctx, s, principal=run.principal, kb_id=run.kb_id, doc_id=doc.id, upload=upload)
                run.stats["changed" if doc.latest_version_id != before else "unchanged"] += 1
                row = s.get(SourceItem, known.row_id) if known is not None else None
                assert row is not None
            row.change_token, row.path, row.title, row.url = item.token[:255], item.path, item.title, item.url
            row.synced_at = utcnow()
            doc.meta = {**(doc.meta or {}), **_meta(run, item)}
            readers = run.readers_of(item)
            access.set_readers(s, doc, readers)
            row.readers_digest = readers_digest(readers)


def _moved(run: SyncRun, item: Item, known: _Known, readers: list[str]) -> None:
    """Same item and content, another path, title or readers: its row and its document follow."""
    with run.ctx.db.session() as s:
        row = s.get(SourceItem, known.row_id)
        doc = s.get(Document, known.document_id)
        if row is None or doc is None:
            return
        row.path, row.title, row.url = item.path, item.title, item.url
        name = _name_for(s, run.kb_id, item, doc.id)
        if name != doc.name:
            doc.name = name
        doc.meta = {**(doc.meta or {}), **_meta(run, item)}
        access.set_readers(s, doc, readers)
        row.readers_digest = readers_digest(readers)


def readers_digest(readers: list[str]) -> str:
    """What a source item keeps of its document's readers, to see a change without reading anything."""
    return hashlib.sha256("\n".join(readers).encode()).hexdigest() if readers else ""


def _delete(run: SyncRun, known: _Known) -> None:
    try:
        with run.ctx.db.session() as s:
            if s.get(Document, known.document_id) is None:  # deleted by hand meanwhile: its row went with it
                return
            delete_documents(run.ctx, s, principal=run.principal, kb_id=run.kb_id, doc_ids=[known.document_id])
        run.stats["deleted"] += 1
    except RagloomError as exc:
        run.error(known.path or known.document_id, f"could not delete its document: {exc.message}")


def queue_due(ctx: Context) -> list[str]:
    """Queue a sync of every source whose scheduled sync is due (see the module docstring); their ids.
    Each due source is taken by one caller: ``next_run_at`` moves forward by a conditional update."""
    queued = []
    with ctx.db.session() as s:
        for source in manage.due(s):
            now = utcnow()
            moved = s.execute(update(Source).where(Source.id == source.id, Source.next_run_at == source.next_run_at)
                              .values(next_run_at=manage.next_run(source, now=now)))
            if getattr(moved, "rowcount", 0) != 1:
                continue
            if syncs.open_sync(s, source.id) is None:
                queued.append(manage.enqueue(s, source, trigger="schedule").id)
    return queued
