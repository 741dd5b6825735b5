"""Garbage collection of the object store: files no version references any more.

Deleting a document (or a knowledge base) removes its rows; its original files and page
preview images stay in the object store until :func:`collect_garbage` runs (``ragloom gc``,
and periodically ``ragloom serve``). An object is *referenced* when a row names it: the
file of any document version (``DocumentVersion.file_key``, superseded versions included,
so an old answer's citation still opens the file it cited), the preview image of any
page of any version (``VersionPage.image_key``), the picture of a figure chunk of any version
(``VersionFigure.image_key``) or the HTML view of any version
(``DocumentVersion.view_key``). Only unreferenced objects last written
or refreshed more than ``grace_seconds`` ago are deleted.

Why a live version's object is never deleted, races included
-------------------------------------------------------------
Every reference is recorded by a transaction that called ``put`` for that key shortly
before (an upload puts the file, a task puts its page images), or copies a reference
that stays recorded (a re-parse reuses its latest version's key; old versions are kept).
``put`` sets the object's modification time to *now* whether it writes the object or
finds it already stored ("refresh"), and re-writes it if it is gone. The store makes
``put`` and the deletion of one object mutually exclusive (LocalStore: a file lock held
shared by puts around the write-or-refresh, and exclusive by the collector around each
batch of re-stat-and-unlink).

A collection starts at time ``T``, sets ``cutoff = T - grace``, *then* reads the set of
referenced keys, then scans the store, and deletes an unreferenced object only if, under
the exclusive lock, its modification time is still before ``cutoff``. Take an object ``X``
deleted at time ``D`` and a row ``R`` referencing it:

* ``R``'s put of ``X`` happened after ``D``: the put found ``X`` gone and wrote it again.
* it happened before ``D``: it set ``mtime(X)`` to its own time, and ``X`` was deleted
  only because ``mtime(X) < cutoff``; so that put ran before ``T - grace``. If ``R`` was
  committed before the collector read the references (after ``T``), ``X`` was in the
  referenced set and was not deleted. So ``R`` was committed more than ``grace`` after
  its put.

Hence: as long as no reference is committed more than ``grace_seconds`` after the put
of its key, garbage collection never deletes a referenced object. Uploads commit within
their request and tasks within their time limit (``task_time_limit_seconds``, below the
default grace of an hour). A grace of 0 is safe only while nothing uploads or parses.
The argument needs the store's modification times and this process's clock to agree
(true of a local folder; mind clock skew on a network file system).

Before the object store is scanned, document versions beyond each document's last
``RAGLOOM_KEEP_VERSIONS`` lose their chunks in the search store (:func:`ragloom.service.documents.versions.trim`;
a publish does the same for its document): their files stay referenced.

Leftovers of interrupted writes (``.tmp-*`` files older than the grace period) and
empty folders are removed too. A crash of the collector at any point leaves only
objects that a later run collects.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

from sqlalchemy import func, select

from ragloom.context import Context
from ragloom.db.models import DocumentVersion, KnowledgePart, VersionFigure, VersionPage

log = logging.getLogger(__name__)

DELETE_BATCH = 256  # candidates handed to the store at once


@dataclass(slots=True)
class GcReport:
    """What one collection found and did (in a dry run: what it would have deleted)."""

    scanned: int = 0  # objects in the store
    referenced: int = 0  # of them, referenced by a version or a page image
    deleted: int = 0  # unreferenced objects deleted
    bytes_freed: int = 0
    kept_young: int = 0  # unreferenced but written or refreshed within the grace period (or meanwhile)
    missing: int = 0  # referenced keys with no object in the store (should be 0)
    temp_files: int = 0  # leftovers of interrupted writes removed
    dirs_removed: int = 0  # empty folders removed
    versions_trimmed: int = 0  # old document versions whose chunks were dropped (beyond RAGLOOM_KEEP_VERSIONS)
    grace_seconds: float = 0.0
    dry_run: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, int | float | bool]:
        return asdict(self)


def referenced_keys(ctx: Context) -> set[str]:
    """Every object key a row names: each version's file and HTML view (all versions), each page's
    preview image, each figure's picture, and the knowledge graphs' subgraphs and merged graphs."""
    with ctx.db.session() as s:
        keys = set(s.scalars(select(func.coalesce(DocumentVersion.object_key, DocumentVersion.content_hash))))
        keys.update(s.scalars(select(DocumentVersion.view_key).where(DocumentVersion.view_key.is_not(None))))
        keys.update(s.scalars(select(VersionPage.image_key).where(VersionPage.image_key.is_not(None))))
        keys.update(s.scalars(select(VersionFigure.image_key)))  # figure chunks' pictures (ingest/figures.py)
        for roots in s.scalars(select(KnowledgePart.root_ids).where(KnowledgePart.kind == "graph")):
            keys.update(roots or ())  # knowledge-graph parts name their JSON objects (service/builds/graph.py)
    return keys


def collect_garbage(ctx: Context, *, grace_seconds: float, dry_run: bool = False) -> GcReport:
    """Delete the objects no version or page references that were last written or refreshed more
    than ``grace_seconds`` ago; with ``dry_run``, only report what would be deleted."""
    if grace_seconds < 0:
        from ragloom.errors import InvalidRequestError

        raise InvalidRequestError("the grace period must not be negative")
    started = time.time()
    cutoff = started - grace_seconds  # fixed before the references are read (see the module docstring)
    report = GcReport(grace_seconds=grace_seconds, dry_run=dry_run)
    if not dry_run:  # the search store first: versions beyond the kept ones lose their chunks (files stay)
        from ragloom.service.documents.versions import trim

        report.versions_trimmed = trim(ctx)
    referenced = referenced_keys(ctx)
    store = ctx.objects
    seen: set[str] = set()
    candidates: list[str] = []
    would_free = 0
    for obj in store.scan():
        report.scanned += 1
        if obj.key in referenced:
            report.referenced += 1
            seen.add(obj.key)
        elif obj.mtime >= cutoff:
            report.kept_young += 1
        else:
            candidates.append(obj.key)
            would_free += obj.size
    report.missing = len(referenced - seen)
    if dry_run:
        report.deleted, report.bytes_freed = len(candidates), would_free
    else:
        for start in range(0, len(candidates), DELETE_BATCH):
            batch = candidates[start : start + DELETE_BATCH]
            deleted = store.delete_stale(batch, older_than=cutoff)
            report.deleted += len(deleted)
            report.bytes_freed += sum(o.size for o in deleted)
            report.kept_young += len(batch) - len(deleted)  # refreshed (or gone) since the scan
    swept = store.sweep(older_than=cutoff, dry_run=dry_run)
    report.temp_files, report.dirs_removed = swept.temp_files, swept.dirs
    report.bytes_freed += swept.temp_bytes
    report.seconds = round(time.time() - started, 3)
    log.info("object store gc%s: %d objects, %d referenced, %d deleted (%d bytes), %d kept as too young, "
             "%d missing, %d temporary files, %d empty folders", " (dry run)" if dry_run else "", report.scanned,
             report.referenced, report.deleted, report.bytes_freed, report.kept_young, report.missing,
             report.temp_files, report.dirs_removed)
    if report.missing:
        log.warning("%d referenced objects are missing from the object store", report.missing)
    return report
