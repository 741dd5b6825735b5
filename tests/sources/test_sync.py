"""Syncs of a folder source, run by the worker's own code on real stores (issue 30): new, changed,
deleted, moved and unchanged items (an unchanged one is not read), filters, a failing item, a crash
midway resumed without a duplicate, one sync at a time, and the schedule."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from ragloom.context import Context, Principal
from ragloom.db import syncs
from ragloom.db.models import Document, Source, SourceItem, SourceSync, Task, utcnow
from ragloom.ingest.connectors import SourceError
from ragloom.ingest.connectors.folder import FolderConnector
from ragloom.schemas.sources import SourceUpdate
from ragloom.service.sources import manage
from ragloom.service.sources import sync as sync_module
from ragloom.service.sources.sync import Filters, queue_due
from ragloom.states import TaskStatus
from ragloom.worker import run_until
from tests.sources.helpers import add_source, documents, make_kb, sync, version_count, write


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the items the folder connector reads."""
    seen: list[str] = []
    real = FolderConnector.read

    def counted(self: FolderConnector, item):  # type: ignore[no-untyped-def]
        seen.append(item.id)
        return real(self, item)

    monkeypatch.setattr(FolderConnector, "read", counted)
    return seen


def test_new_changed_deleted_and_unchanged_items(ctx: Context, principal: Principal, shared: Path,
                                                 reads: list[str]) -> None:
    folder = shared / "handbook"
    write(folder / "pump.md", "# Pump\n\nThe pump needs grease every 450 hours.\n")
    write(folder / "valve.txt", "The valve is blue.\n")
    write(folder / "sub" / "filter.md", "# Filter\n\nChange the filter yearly.\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(folder)})

    first = sync(ctx, principal, kb, source)
    assert first.status == TaskStatus.DONE and first.errors == []
    assert first.stats == {"listed": 3, "new": 3, "changed": 0, "deleted": 0, "unchanged": 0, "skipped": 0,
                           "failed": 0}
    docs = documents(ctx, kb)
    assert set(docs) == {"pump.md", "valve.txt", "filter.md"}
    pump = docs["pump.md"]
    assert pump.meta["source_path"] == "pump.md" and pump.meta["source"] == "src"
    assert pump.meta["source_url"] == (folder / "pump.md").as_uri() and pump.meta["source_type"] == "folder"
    assert docs["filter.md"].meta["source_path"] == "sub/filter.md"
    assert sorted(reads) == ["pump.md", "sub/filter.md", "valve.txt"]

    reads.clear()
    again = sync(ctx, principal, kb, source)
    assert again.stats["unchanged"] == 3 and again.stats["new"] == again.stats["changed"] == 0
    assert reads == []  # an unchanged item costs one list entry: nothing read
    assert {d.id for d in documents(ctx, kb).values()} == {d.id for d in docs.values()}

    write(folder / "pump.md", "# Pump\n\nThe pump needs grease every 500 hours.\n")
    (folder / "valve.txt").unlink()
    write(folder / "new.md", "# New\n\nA new page.\n")
    third = sync(ctx, principal, kb, source)
    assert (third.stats["changed"], third.stats["deleted"], third.stats["new"], third.stats["unchanged"]) == (1, 1,
                                                                                                            1, 1)
    assert sorted(reads) == ["new.md", "pump.md"]
    after = documents(ctx, kb)
    assert set(after) == {"pump.md", "filter.md", "new.md"}
    assert after["pump.md"].id == pump.id and version_count(ctx, pump.id) == 2  # a new version, same document
    with ctx.db.session() as s:
        assert s.scalar(select(SourceItem).where(SourceItem.item_id == "valve.txt")) is None
        assert s.get(Source, source).last_sync_id == third.id  # type: ignore[union-attr]

    # a folder's items are known by their paths: a moved file is a deleted one and a new one
    (folder / "sub" / "filter.md").rename(folder / "sub" / "filters.md")
    moved = sync(ctx, principal, kb, source)
    assert (moved.stats["deleted"], moved.stats["new"]) == (1, 1)
    assert set(documents(ctx, kb)) == {"pump.md", "filters.md", "new.md"}


def test_synced_documents_are_ingested_and_found(ctx: Context, principal: Principal, shared: Path) -> None:
    from ragloom.service.search.retrieval import search

    write(shared / "docs" / "pump.md", "# Pump\n\nThe Orion pump needs grease every 450 operating hours.\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "docs")})
    sync(ctx, principal, kb, source)

    def idle() -> bool:
        with ctx.db.session() as s:
            return s.scalar(select(Task.id).where(Task.status.in_(("queued", "running")))) is None

    run_until(ctx, idle, poll=0.01)
    assert documents(ctx, kb)["pump.md"].status == "done"
    found = search(ctx, principal=principal, kb_ids=[kb], question="How often is the Orion pump greased?")
    assert found.chunks and "450 operating hours" in found.chunks[0].record.content


def test_same_file_names_in_two_folders_get_two_documents(ctx: Context, principal: Principal, shared: Path) -> None:
    write(shared / "d" / "a" / "readme.md", "# A\n")
    write(shared / "d" / "b" / "readme.md", "# B\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "d")})
    assert sync(ctx, principal, kb, source).stats["new"] == 2
    assert set(documents(ctx, kb)) == {"readme.md", "readme (b).md"}


def test_filters_skip_items_and_a_new_filter_deletes_their_documents(ctx: Context, principal: Principal,
                                                                     shared: Path) -> None:
    folder = shared / "f"
    write(folder / "guide.md", "# Guide\n")
    write(folder / "notes.txt", "notes\n")
    write(folder / "drafts" / "wip.md", "# WIP\n")
    write(folder / "big.md", "# Big\n" + "x" * 3 * 1024 * 1024)
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(folder)},
                        filters={"exclude": ["drafts/**"], "file_types": ["md"], "max_size_mb": 1})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"], first.stats["skipped"]) == (4, 1, 3)
    assert set(documents(ctx, kb)) == {"guide.md"}

    with ctx.db.session() as s:
        manage.update(ctx, s, principal=principal, kb_id=kb, source_id=source,
                       spec=SourceUpdate(filters={"include": ["*.txt"]}))  # type: ignore[arg-type]
    second = sync(ctx, principal, kb, source)
    assert (second.stats["new"], second.stats["deleted"]) == (1, 1)
    assert set(documents(ctx, kb)) == {"notes.txt"}


def test_the_filters_globs() -> None:
    from ragloom.ingest.connectors import Item
    from ragloom.schemas.sources import SourceFilters

    def kept(path: str, size: int = 10, **f: object) -> bool:
        item = Item(id=path, token="t", name=path.rsplit("/", 1)[-1], path=path, size=size)
        return Filters.of(SourceFilters.model_validate(f), 100).why_not(item) is None

    assert kept("a/b/c.md", include=["a/**"]) and not kept("x/c.md", include=["a/**"])
    assert kept("deep/down/c.md", include=["*.md"]) and not kept("c.txt", include=["*.md"])
    assert not kept("drafts/x/y.md", exclude=["drafts/**"]) and kept("final/y.md", exclude=["drafts/**"])
    assert kept("c.md", include=["**/*.md"]) and kept("a/c.md", include=["**/*.md"])
    assert not kept("c.PDF", file_types=["md"]) and kept("c.PDF", file_types=["pdf"])
    assert not kept("c.md", size=101) and kept("c.md", size=100)


def test_a_failing_item_is_counted_and_the_others_synced(ctx: Context, principal: Principal, shared: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = shared / "e"
    for name in ("a.md", "b.md", "c.md"):
        write(folder / name, f"# {name}\n")
    real = FolderConnector.read

    def failing(self: FolderConnector, item):  # type: ignore[no-untyped-def]
        if item.id == "b.md":
            raise SourceError("b.md: permission denied")
        return real(self, item)

    monkeypatch.setattr(FolderConnector, "read", failing)
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(folder)})
    job = sync(ctx, principal, kb, source)
    assert job.status == TaskStatus.DONE
    assert (job.stats["new"], job.stats["failed"]) == (2, 1)
    assert job.errors == [{"item": "b.md", "message": "b.md: permission denied"}]
    assert set(documents(ctx, kb)) == {"a.md", "c.md"}

    monkeypatch.setattr(FolderConnector, "read", real)
    retry = sync(ctx, principal, kb, source)  # tried again at the next sync
    assert (retry.stats["new"], retry.stats["unchanged"], retry.stats["failed"]) == (1, 2, 0)


class Killed(BaseException):
    """Stands for the worker's death: nothing of the sync's own code catches it."""


def test_a_sync_killed_midway_resumes_without_duplicates(ctx: Context, principal: Principal, shared: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = shared / "k"
    for i in range(6):
        write(folder / f"doc{i}.md", f"# Document {i}\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(folder)})
    real = sync_module.add_documents
    made: list[str] = []

    def dies_in_the_fourth(*args, **kwargs):  # type: ignore[no-untyped-def]
        docs = real(*args, **kwargs)
        made.append(docs[0].name)
        if len(made) == 4:  # the document exists in the transaction, its item row too soon: then death
            raise Killed
        return docs

    monkeypatch.setattr(sync_module, "add_documents", dies_in_the_fourth)
    with ctx.db.session() as s:
        job_id = manage.request_sync(s, principal=principal, kb_id=kb, source_id=source).id
    from ragloom.worker import run_one_sync

    with pytest.raises(Killed):
        run_one_sync(ctx, "doomed-worker")
    assert len(documents(ctx, kb)) == 3  # the fourth's transaction never committed
    with ctx.db.session() as s:
        assert s.get(SourceSync, job_id).status == TaskStatus.RUNNING  # type: ignore[union-attr]
        # its worker is gone: no heartbeat; the queue takes the sync back
        s.execute(update(SourceSync).where(SourceSync.id == job_id)
                  .values(heartbeat_at=utcnow() - timedelta(hours=1)))
    monkeypatch.setattr(sync_module, "add_documents", real)
    assert run_one_sync(ctx, "next-worker") == job_id
    with ctx.db.session() as s:
        job = s.get(SourceSync, job_id)
        assert job is not None and job.status == TaskStatus.DONE and job.attempts == 2
        assert (job.stats["new"], job.stats["unchanged"]) == (3, 3)
        names = list(s.scalars(select(Document.name).where(Document.kb_id == kb)))
        items = list(s.scalars(select(SourceItem.item_id).where(SourceItem.source_id == source)))
    assert sorted(names) == [f"doc{i}.md" for i in range(6)] and sorted(items) == sorted(names)


def test_one_sync_at_a_time_per_source(ctx: Context, principal: Principal, shared: Path) -> None:
    write(shared / "o" / "a.md", "# A\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "o")})
    with ctx.db.session() as s:
        first = manage.request_sync(s, principal=principal, kb_id=kb, source_id=source).id
        assert manage.request_sync(s, principal=principal, kb_id=kb, source_id=source).id == first  # the waiting one
    with ctx.db.session() as s:
        assert syncs.claim(s, worker_id="w1").id == first  # type: ignore[union-attr]
    with ctx.db.session() as s:
        second = manage.request_sync(s, principal=principal, kb_id=kb, source_id=source).id
        assert second != first
    with ctx.db.session() as s:
        assert syncs.claim(s, worker_id="w2") is None  # the source's first sync runs: the second waits


def test_the_schedule_queues_due_syncs_and_leaves_paused_sources_alone(ctx: Context, principal: Principal,
                                                                       shared: Path) -> None:
    write(shared / "s" / "a.md", "# A\n")
    kb = make_kb(ctx, principal)
    scheduled = add_source(ctx, principal, kb, name="hourly", type="folder", settings={"path": str(shared / "s")},
                           schedule_minutes=60)
    add_source(ctx, principal, kb, name="manual", type="folder", settings={"path": str(shared / "s")})
    paused = add_source(ctx, principal, kb, name="paused", type="folder", settings={"path": str(shared / "s")},
                        schedule_minutes=60, paused=True)
    queued = queue_due(ctx)
    assert len(queued) == 1
    with ctx.db.session() as s:
        job = s.get(SourceSync, queued[0])
        assert job is not None and job.source_id == scheduled and job.trigger == "schedule"
        nxt = s.get(Source, scheduled).next_run_at  # type: ignore[union-attr]
        assert nxt is not None and nxt.replace(tzinfo=None) > utcnow().replace(tzinfo=None) + timedelta(minutes=59)
    assert queue_due(ctx) == []  # not due again before its next run
    with ctx.db.session() as s:  # time passes: due again, but its last sync still waits — not queued twice
        s.execute(update(Source).values(next_run_at=utcnow() - timedelta(minutes=1)))
    assert queue_due(ctx) == []
    with ctx.db.session() as s:
        assert len(list(s.scalars(select(SourceSync.id)))) == 1
        manage.update(ctx, s, principal=principal, kb_id=kb, source_id=paused, spec=SourceUpdate(paused=False))
    assert len(sync_module.queue_due(ctx)) == 1  # resumed: its due sync is queued
    with ctx.db.session() as s:
        per_source = {j.source_id for j in s.scalars(select(SourceSync))}
    assert per_source == {scheduled, paused}


def test_a_cancelled_sync_stops_after_its_item_and_keeps_what_it_did(ctx: Context, principal: Principal,
                                                                     shared: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = shared / "c"
    for i in range(6):
        write(folder / f"doc{i}.md", f"# Document {i}\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(folder)})
    real = FolderConnector.read

    def cancelling(self: FolderConnector, item):  # type: ignore[no-untyped-def]
        if item.id == "doc2.md":  # the user cancels while the third file is read
            with ctx.db.session() as s:
                running = s.scalars(select(SourceSync)).one()
                manage.cancel_sync(s, principal=principal, kb_id=kb, source_id=source, sync_id=running.id)
        return real(self, item)

    monkeypatch.setattr(FolderConnector, "read", cancelling)
    monkeypatch.setattr(sync_module, "REPORT_EVERY", 0.0)  # each item reports (and so sees the cancel)
    job = sync(ctx, principal, kb, source)
    assert job.status == TaskStatus.CANCELLED and job.stats["new"] == 3
    assert len(documents(ctx, kb)) == 3
    monkeypatch.setattr(FolderConnector, "read", real)
    rest = sync(ctx, principal, kb, source)
    assert (rest.status, rest.stats["new"], rest.stats["unchanged"]) == (TaskStatus.DONE, 3, 3)


def test_a_listing_that_fails_is_retried_with_back_off_then_fails(ctx: Context, principal: Principal, shared: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write(shared / "t" / "a.md", "# A\n")
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "t")})

    def unreachable(self: FolderConnector):  # type: ignore[no-untyped-def]
        raise SourceError("the share is offline", transient=True)

    monkeypatch.setattr(FolderConnector, "list_items", unreachable)
    job = sync(ctx, principal, kb, source)
    assert job.status == TaskStatus.QUEUED and "retrying in 30 s" in job.message and "offline" in job.message
    from ragloom.worker import run_one_sync

    for attempt, wait in ((2, 60), (3, None)):
        with ctx.db.session() as s:
            assert s.get(SourceSync, job.id).not_before is not None  # type: ignore[union-attr]
            s.execute(update(SourceSync).where(SourceSync.id == job.id).values(not_before=None))
        assert run_one_sync(ctx, "w") == job.id
        with ctx.db.session() as s:
            again = s.get(SourceSync, job.id)
            assert again is not None and again.attempts == attempt
            if wait is not None:
                assert again.status == TaskStatus.QUEUED and f"retrying in {wait} s" in again.message
            else:  # its attempts are used up (RAGLOOM_TASK_MAX_RETRIES)
                assert again.status == TaskStatus.FAILED and "could not be listed" in again.message
    assert documents(ctx, kb) == {}  # a listing that failed deletes nothing and adds nothing
