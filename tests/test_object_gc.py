"""Stored files: per-tenant keys, garbage collection of what no version references, private data directory.

Everything runs on a real data directory (LocalStore + SQLite) with documents generated here;
ingestion runs inline (:func:`ragloom.worker.run_until`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

from sqlalchemy import func, select

from ragloom.context import Context, Principal
from ragloom.db.models import Document, DocumentVersion, Task, VersionPage
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog
from ragloom.service.documents.gc import collect_garbage
from ragloom.worker import run_until
from tests.ingest.docgen import make_pdf

HOUR = 3600.0


# ---------------------------------------------------------------- helpers


def _kb(ctx: Context, principal: Principal, name: str = "kb") -> None:
    with ctx.db.session() as s:
        if not any(k.name == name for k in knowledgebases.list_visible(s, principal=principal)):
            knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name=name))


def _upload(ctx: Context, principal: Principal, name: str, data: bytes, kb: str = "kb") -> str:
    _kb(ctx, principal, kb)
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id=kb,
                                         uploads=[catalog.Upload(filename=name, data=data)])
        return doc.id


def _drain(ctx: Context) -> None:
    def idle() -> bool:
        with ctx.db.session() as s:
            return not s.scalar(select(func.count()).select_from(Task).where(Task.status.in_(("queued", "running"))))

    run_until(ctx, idle, poll=0.01)


def _delete(ctx: Context, principal: Principal, *doc_ids: str, kb: str = "kb") -> None:
    with ctx.db.session() as s:
        catalog.delete_documents(ctx, s, principal=principal, kb_id=kb, doc_ids=list(doc_ids))


def _keys_of(ctx: Context, doc_id: str) -> tuple[list[str], list[str]]:
    """(file keys of every version, preview keys of every version: page images, HTML views) of a document."""
    with ctx.db.session() as s:
        versions = list(s.scalars(select(DocumentVersion).where(DocumentVersion.document_id == doc_id)))
        images = list(s.scalars(select(VersionPage.image_key).where(
            VersionPage.version_id.in_([v.id for v in versions]), VersionPage.image_key.is_not(None))))
        views = [v.view_key for v in versions if v.view_key is not None]
        return [v.file_key for v in versions], images + views


def _path(ctx: Context, key: str) -> Path:
    ns, _, sha = key.rpartition("/")
    base = ctx.settings.files_dir / ns if ns else ctx.settings.files_dir
    return base / sha[:2] / sha[2:4] / sha


def _age(ctx: Context, key: str, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(_path(ctx, key), (then, then))


def _pdf(tmp_path: Path, name: str, words: str, pages: int = 2) -> bytes:
    path = tmp_path / name
    make_pdf(path, [[f"## {words} page {n}", f"This page of {name} is about {words} number {n}."]
                    for n in range(1, pages + 1)])
    return path.read_bytes()


def _other_tenant(ctx: Context) -> Principal:
    with ctx.db.session() as s:
        tenant, user = identity.create_tenant(s, name="other", owner_email="owner@other.test")
        return Principal(tenant_id=tenant.id, user_id=user.id, role="owner")


# ---------------------------------------------------------------- per-tenant keys


def test_two_tenants_uploading_the_same_bytes_get_their_own_objects(ctx, principal) -> None:
    other = _other_tenant(ctx)
    data = b"# Shared\n\nBoth tenants upload exactly these bytes.\n"
    mine = _upload(ctx, principal, "same.md", data)
    theirs = _upload(ctx, other, "same.md", data)
    (my_key,), _ = _keys_of(ctx, mine)
    (their_key,), _ = _keys_of(ctx, theirs)
    sha = hashlib.sha256(data).hexdigest()
    assert my_key == f"{principal.tenant_id}/{sha}" and their_key == f"{other.tenant_id}/{sha}"
    assert _path(ctx, my_key) != _path(ctx, their_key)
    assert _path(ctx, my_key).read_bytes() == _path(ctx, their_key).read_bytes() == data
    with ctx.db.session() as s:
        assert {v.content_hash for v in s.scalars(select(DocumentVersion))} == {sha}

    _delete(ctx, principal, mine)  # one tenant's deletion never takes the other's file
    report = collect_garbage(ctx, grace_seconds=0)
    assert report.deleted == 1 and not _path(ctx, my_key).exists()
    with ctx.db.session() as s:
        assert catalog.original_file(ctx, s, principal=other, kb_id="kb", doc_id=theirs) == ("same.md", data)


def test_pdf_page_images_are_stored_under_the_tenant(ctx, principal, tmp_path) -> None:
    doc = _upload(ctx, principal, "two.pdf", _pdf(tmp_path, "two.pdf", "lighthouse"))
    _drain(ctx)
    (file_key,), images = _keys_of(ctx, doc)
    assert len(images) == 2 and all(k.startswith(principal.tenant_id + "/") for k in [file_key, *images])
    assert all(ctx.objects.get(k).startswith(b"\x89PNG") for k in images)


# ---------------------------------------------------------------- collection


def test_deleted_documents_files_are_collected_live_and_superseded_ones_kept(ctx, principal, tmp_path) -> None:
    live = _upload(ctx, principal, "live.pdf", _pdf(tmp_path, "live.pdf", "harbor"))
    gone = _upload(ctx, principal, "gone.pdf", _pdf(tmp_path, "gone.pdf", "glacier", pages=3))
    versioned = _upload(ctx, principal, "notes.md", b"# Notes\n\nThe first version says alpha.\n")
    _drain(ctx)
    with ctx.db.session() as s:
        v1 = s.get(Document, versioned).active_version_id
    _upload(ctx, principal, "notes.md", b"# Notes\n\nThe second version says omega.\n")
    _drain(ctx)
    live_files, live_images = _keys_of(ctx, live)
    gone_files, gone_images = _keys_of(ctx, gone)
    notes_files, notes_views = _keys_of(ctx, versioned)  # Markdown: an HTML view per version, no page images
    assert len(gone_images) == 3 and len(live_images) == 2 and len(set(notes_files)) == 2 == len(set(notes_views))

    # a dry run deletes nothing but says what would go
    dry = collect_garbage(ctx, grace_seconds=0, dry_run=True)
    assert dry.dry_run and dry.deleted == 0 and dry.missing == 0
    _delete(ctx, principal, gone)
    dry = collect_garbage(ctx, grace_seconds=0, dry_run=True)
    assert dry.deleted == 4 and dry.bytes_freed >= sum(_path(ctx, k).stat().st_size for k in gone_files)
    assert all(_path(ctx, k).exists() for k in gone_files + gone_images)

    report = collect_garbage(ctx, grace_seconds=0)
    assert report.deleted == 4 and report.missing == 0 and report.kept_young == 0
    assert report.scanned == report.referenced + 4
    assert report.referenced == len(live_files + live_images + notes_files + notes_views)
    assert not any(_path(ctx, k).exists() for k in gone_files + gone_images)
    for key in gone_files + gone_images:  # their now empty folders went too (unless another object shares one)
        if not any(_path(ctx, k).parent == _path(ctx, key).parent
                   for k in live_files + live_images + notes_files + notes_views):
            assert not _path(ctx, key).parent.exists()
    assert all(ctx.objects.exists(k) for k in live_files + live_images + notes_files)

    with ctx.db.session() as s:  # the live files still download, the superseded version's too
        assert catalog.original_file(ctx, s, principal=principal, kb_id="kb", doc_id=live)[1] \
            == (tmp_path / "live.pdf").read_bytes()
        old = catalog.original_file(ctx, s, principal=principal, kb_id="kb", doc_id=versioned, version_id=v1)
        assert b"alpha" in old[1]
        pages = catalog.pages(s, principal=principal, kb_id="kb", doc_id=live)
    assert [p.page for p in pages] == [1, 2]
    assert all(ctx.objects.get(p.image_key).startswith(b"\x89PNG") for p in pages)

    again = collect_garbage(ctx, grace_seconds=0)  # nothing left to do
    assert again.deleted == 0 and again.scanned == report.referenced


def test_objects_younger_than_the_grace_period_are_kept(ctx, principal) -> None:
    doc = _upload(ctx, principal, "young.md", b"# Young\n\nJust uploaded, then deleted.\n")
    (key,), _ = _keys_of(ctx, doc)
    _delete(ctx, principal, doc)
    report = collect_garbage(ctx, grace_seconds=HOUR)
    assert report.deleted == 0 and report.kept_young == 1 and ctx.objects.exists(key)
    _age(ctx, key, 2 * HOUR)
    report = collect_garbage(ctx, grace_seconds=HOUR)
    assert report.deleted == 1 and not ctx.objects.exists(key)


def test_leftover_temporary_files_are_removed_after_the_grace_period(ctx, principal) -> None:
    doc = _upload(ctx, principal, "t.md", b"# T\n\nKept.\n")
    (key,), _ = _keys_of(ctx, doc)
    folder = _path(ctx, key).parent
    crashed, writing = folder / ".tmp-crashed", folder / ".tmp-writing"
    crashed.write_bytes(b"half a file")
    writing.write_bytes(b"being written")
    then = time.time() - 2 * HOUR
    os.utime(crashed, (then, then))
    report = collect_garbage(ctx, grace_seconds=HOUR)
    assert report.temp_files == 1 and report.deleted == 0
    assert not crashed.exists() and writing.exists() and ctx.objects.exists(key)


# ---------------------------------------------------------------- files stored before per-tenant keys


def _make_legacy(ctx: Context, doc_id: str) -> str:
    """Turn a document's file into one stored the old way: bare sha256 key, version.object_key NULL."""
    with ctx.db.session() as s:
        version = s.get(DocumentVersion, s.get(Document, doc_id).latest_version_id)
        new_path = _path(ctx, version.file_key)
        sha = version.content_hash
        version.object_key = None
    old_path = _path(ctx, sha)
    old_path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(new_path, old_path)
    return sha


def test_a_legacy_version_still_downloads_reparses_and_is_collected_when_deleted(ctx, principal) -> None:
    from ragloom.service.search.retrieval import search

    data = b"# Old\n\nThe lighthouse keeper winds the clock every Sunday.\n"
    doc = _upload(ctx, principal, "old.md", data)
    legacy = _make_legacy(ctx, doc)
    _drain(ctx)  # the first parse reads the legacy key
    with ctx.db.session() as s:
        assert s.get(Document, doc).status == "done"
        assert catalog.original_file(ctx, s, principal=principal, kb_id="kb", doc_id=doc) == ("old.md", data)
        catalog.reparse(ctx, s, principal=principal, kb_id="kb", doc_id=doc)
    _drain(ctx)
    with ctx.db.session() as s:
        d = s.get(Document, doc)
        assert d.status == "done" and d.active_version_id == d.latest_version_id
        assert s.get(DocumentVersion, d.active_version_id).file_key == legacy
    assert "Sunday" in search(ctx, principal=principal, kb_ids=["kb"], question="lighthouse keeper clock") \
        .chunks[0].record.content

    (view,) = set(_keys_of(ctx, doc)[1])  # both versions rendered the same HTML view: one object
    report = collect_garbage(ctx, grace_seconds=0)
    assert report.deleted == 0 and report.referenced == 2 and ctx.objects.get(legacy) == data
    _delete(ctx, principal, doc)
    report = collect_garbage(ctx, grace_seconds=0)
    assert report.deleted == 2 and not ctx.objects.exists(legacy) and not ctx.objects.exists(view)


# ---------------------------------------------------------------- races with uploads


def test_an_old_unreferenced_object_uploaded_again_during_a_collection_survives(ctx, principal) -> None:
    data = b"# Again\n\nUploaded, deleted, uploaded again.\n"
    first = _upload(ctx, principal, "again.md", data)
    (key,), _ = _keys_of(ctx, first)
    _delete(ctx, principal, first)
    _age(ctx, key, 2 * HOUR)  # unreferenced and old: a collection that scans now picks it
    store = ctx.objects
    real_delete_stale = store.delete_stale
    uploaded: list[str] = []

    def upload_between_scan_and_delete(keys, *, older_than):  # type: ignore[no-untyped-def]
        keys = list(keys)
        assert key in keys  # chosen for deletion: the references were read before this upload
        uploaded.append(_upload(ctx, principal, "again.md", data))
        return real_delete_stale(keys, older_than=older_than)

    store.delete_stale = upload_between_scan_and_delete  # type: ignore[method-assign]
    try:
        report = collect_garbage(ctx, grace_seconds=HOUR)
    finally:
        del store.delete_stale
    assert report.deleted == 0 and report.kept_young == 1
    (again_key,), _ = _keys_of(ctx, uploaded[0])
    assert again_key == key and ctx.objects.get(key) == data
    _drain(ctx)
    with ctx.db.session() as s:
        assert s.get(Document, uploaded[0]).status == "done"


def test_an_upload_right_after_a_collection_deleted_its_bytes_writes_them_again(ctx, principal) -> None:
    data = b"# Back\n\nDeleted and collected, then uploaded again.\n"
    first = _upload(ctx, principal, "back.md", data)
    (key,), _ = _keys_of(ctx, first)
    _delete(ctx, principal, first)
    assert collect_garbage(ctx, grace_seconds=0).deleted == 1 and not ctx.objects.exists(key)
    second = _upload(ctx, principal, "back.md", data)
    assert _keys_of(ctx, second)[0] == [key] and ctx.objects.get(key) == data


# The race of many puts with collections, store by store: tests/storage/test_conformance.py
# (test_concurrent_puts_and_collections_never_lose_a_referenced_object), on every engine.


# ---------------------------------------------------------------- the command


def test_ragloom_gc_command_reports_as_json(tmp_path, cli_state) -> None:
    from typer.testing import CliRunner

    from ragloom.cli import app
    from ragloom.config import Settings

    home = tmp_path / "home"
    c = Context(Settings(home=home, workers=0, _env_file=None))
    c.init_storage()
    with c.db.session() as s:
        principal = identity.bootstrap(s).principal
    doc = _upload(c, principal, "cli.md", b"# CLI\n\nCollected from the command line.\n")
    (key,), _ = _keys_of(c, doc)
    _delete(c, principal, doc)
    c.close()
    path = _path(c, key)
    runner = CliRunner()

    res = runner.invoke(app, ["--home", str(home), "--json", "gc", "--grace", "0", "--dry-run"])
    assert res.exit_code == 0, res.output
    dry = json.loads(res.stdout)
    assert dry["dry_run"] is True and dry["deleted"] == 1 and dry["scanned"] == 1 and path.exists()

    cli_state._ctx.close()
    cli_state._ctx = None
    res = runner.invoke(app, ["--home", str(home), "--json", "gc", "--grace", "0"])
    assert res.exit_code == 0, res.output
    done = json.loads(res.stdout)
    assert done["deleted"] == 1 and done["bytes_freed"] > 0 and done["dry_run"] is False and not path.exists()
    assert set(done) >= {"scanned", "referenced", "deleted", "bytes_freed", "kept_young", "missing"}

    res = runner.invoke(app, ["--home", str(home), "gc"])  # the default grace keeps what is young
    assert res.exit_code == 0 and "deleted" in res.stdout
    res = runner.invoke(app, ["--home", str(home), "--url", "http://127.0.0.1:1", "--api-key", "k", "gc"])
    assert res.exit_code != 0 and "without --url" in str(res.exception)


# ---------------------------------------------------------------- a private data directory


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_data_directory_and_database_are_private(tmp_path) -> None:
    from ragloom.config import Settings

    old_umask = os.umask(0o022)  # what a default login shell has: without care, 0755 folders and a 0644 DB
    try:
        settings = Settings(home=tmp_path / "deep" / "home", embedding_cache=None, workers=0, _env_file=None)
        c = Context(settings)
        c.init_storage()
        with c.db.session() as s:
            principal = identity.bootstrap(s).principal
        _upload(c, principal, "p.md", b"# P\n\nPrivate.\n")
        home = settings.home
        sides = [home / "ragloom.db-wal", home / "ragloom.db-shm"]
        assert all(p.exists() for p in sides)  # while the database is open
        assert [_mode(p) for p in sides] == [0o600, 0o600]
        c.close()
    finally:
        os.umask(old_umask)
    for d in (tmp_path / "deep", home, settings.files_dir, settings.index_dir, settings.cache_dir):
        assert _mode(d) == 0o700, d
    assert _mode(home / "ragloom.db") == 0o600


def test_folders_the_user_made_keep_their_mode(tmp_path) -> None:
    from ragloom.config import Settings

    home = tmp_path / "mine"
    home.mkdir()
    os.chmod(home, 0o750)
    settings = Settings(home=home, workers=0, _env_file=None)
    c = Context(settings)
    c.init_storage()
    c.close()
    assert _mode(home) == 0o750
    assert _mode(settings.files_dir) == 0o700 and _mode(home / "ragloom.db") == 0o600
