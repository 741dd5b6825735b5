"""ragloom on the S3 engine end to end: a live app ingests a real PDF into a bucket of a real S3
server, serves its page images and original from there, and garbage collection deletes from the
bucket what no version references (also while an upload of the same bytes races it); and the
README's "Object store on S3" commands run as shown.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pypdfium2
import pytest
from sqlalchemy import func, select

from ragloom.context import Context, Principal
from ragloom.db.models import Task
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog
from ragloom.service.documents.gc import collect_garbage
from ragloom.storage.keys import object_path
from ragloom.storage.s3 import S3Store
from ragloom.worker import run_until
from tests.ingest.docgen import make_pdf
from tests.live import app_client
from tests.storage.engines import ACCESS_KEY, SECRET_KEY, S3Server, age_object

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow
HOUR = 3600.0


def _drain(ctx: Context) -> None:
    def idle() -> bool:
        with ctx.db.session() as s:
            return not s.scalar(select(func.count()).select_from(Task).where(Task.status.in_(("queued", "running"))))

    run_until(ctx, idle, poll=0.01)


def _age_bucket(s3: S3Server, bucket: str, seconds: float) -> None:
    """Make every object of the bucket look last written ``seconds`` ago."""
    for name in _names(s3, bucket):
        age_object(bucket, name, seconds)


def _names(s3: S3Server, bucket: str) -> set[str]:
    return {o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket).get("Contents", [])}


def _pdf(tmp_path: Path, name: str, words: str, pages: int = 2) -> bytes:
    path = tmp_path / name
    make_pdf(path, [[f"## {words} page {n}", f"This page of {name} is about {words} number {n}."]
                    for n in range(1, pages + 1)])
    return path.read_bytes()


def test_an_app_on_s3_ingests_serves_pages_and_originals_and_collects(s3: S3Server, tmp_path: Path) -> None:
    bucket = s3.new_bucket()
    settings = s3.settings(tmp_path / "home", bucket)
    pdf = _pdf(tmp_path, "lighthouse.pdf", "lighthouse")
    with app_client(settings) as (client, ctx, auth):
        assert isinstance(ctx.objects, S3Store)
        api = "/api/v1/datasets"
        ds = client.post(api, json={"name": "on-s3"}, headers=auth).json()["id"]
        up = client.post(f"{api}/{ds}/documents", files=[("file", ("lighthouse.pdf", pdf))], headers=auth)
        assert up.status_code == 201, up.text
        doc = up.json()["documents"][0]["id"]
        _drain(ctx)
        assert client.get(f"{api}/{ds}/documents/{doc}", headers=auth).json()["status"] == "done"

        pages = client.get(f"{api}/{ds}/documents/{doc}/pages", headers=auth).json()["pages"]
        assert [p["page"] for p in pages] == [1, 2]
        for p in pages:
            png = client.get(p["image"], headers=auth)
            assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        original = client.get(f"{api}/{ds}/documents/{doc}/file", headers=auth)
        assert original.status_code == 200 and original.content == pdf

        stored = _names(s3, bucket)  # the original and two page images, under the workspace, in the bucket
        tenant = next(iter(stored)).split("/")[1]
        assert len(stored) == 3 and all(n.startswith(f"ragloom/{tenant}/") for n in stored)
        assert f"ragloom/{object_path(f'{tenant}/' + hashlib.sha256(pdf).hexdigest())}" in stored
        files = settings.files_dir
        assert not files.exists() or not any(p.is_file() for p in files.rglob("*"))  # nothing on local disk
        assert not list((settings.home / "uploads").iterdir())  # the spooled upload went up and was deleted

        assert collect_garbage(ctx, grace_seconds=0).deleted == 0  # all referenced
        gone = client.request("DELETE", f"{api}/{ds}/documents", json={"ids": [doc]}, headers=auth)
        assert gone.status_code == 200 and gone.json()["deleted"] == 1
        young = collect_garbage(ctx, grace_seconds=HOUR)
        assert (young.deleted, young.kept_young, young.scanned) == (0, 3, 3) and len(_names(s3, bucket)) == 3
        _age_bucket(s3, bucket, 2 * HOUR)
        dry = collect_garbage(ctx, grace_seconds=HOUR, dry_run=True)
        assert dry.deleted == 3 and dry.bytes_freed > len(pdf) and len(_names(s3, bucket)) == 3
        report = collect_garbage(ctx, grace_seconds=HOUR)
        assert (report.deleted, report.missing, report.temp_files) == (3, 0, 0)
        assert report.bytes_freed == dry.bytes_freed
        assert _names(s3, bucket) == set()  # no object and no deletion marker left behind
        assert client.get(f"{api}/{ds}/documents/{doc}/file", headers=auth).status_code == 404
    s3.drop_bucket(bucket)


def _upload(ctx: Context, principal: Principal, name: str, data: bytes) -> str:
    with ctx.db.session() as s:
        if not any(k.name == "kb" for k in knowledgebases.list_visible(s, principal=principal)):
            knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="kb"))
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="kb",
                                         uploads=[catalog.Upload(filename=name, data=data)])
        return doc.id


def test_an_old_unreferenced_object_uploaded_again_during_a_collection_survives_on_s3(
        s3: S3Server, tmp_path: Path) -> None:
    bucket = s3.new_bucket()
    ctx = Context(s3.settings(tmp_path / "home", bucket))
    ctx.init_storage()
    try:
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        data = b"# Again\n\nUploaded, deleted, uploaded again.\n"
        first = _upload(ctx, principal, "again.md", data)
        with ctx.db.session() as s:
            catalog.delete_documents(ctx, s, principal=principal, kb_id="kb", doc_ids=[first])
        _age_bucket(s3, bucket, 2 * HOUR)  # unreferenced and old: a collection that scans now picks it
        key = f"{principal.tenant_id}/{hashlib.sha256(data).hexdigest()}"
        store = ctx.objects
        real_delete_stale = store.delete_stale
        again: list[str] = []

        def upload_between_scan_and_delete(keys, *, older_than):  # type: ignore[no-untyped-def]
            keys = list(keys)
            assert key in keys  # chosen for deletion: the references were read before this upload
            again.append(_upload(ctx, principal, "again.md", data))
            return real_delete_stale(keys, older_than=older_than)

        store.delete_stale = upload_between_scan_and_delete  # type: ignore[method-assign]
        try:
            report = collect_garbage(ctx, grace_seconds=HOUR)
        finally:
            del store.delete_stale
        assert report.deleted == 0 and report.kept_young == 1 and ctx.objects.get(key) == data
        _drain(ctx)
        with ctx.db.session() as s:
            assert catalog.original_file(ctx, s, principal=principal, kb_id="kb", doc_id=again[0]) \
                == ("again.md", data)
    finally:
        ctx.close()
        s3.drop_bucket(bucket)


def test_the_readme_s3_commands_run_as_shown(s3: S3Server, tmp_path: Path) -> None:
    """The README's "Object store on S3" block, with its MinIO address and keys replaced by this
    test's S3 server: its files land in the bucket, none in the data directory."""
    from tests.test_readme import Shell, block_with, sh_blocks, split_comment

    block = block_with(sh_blocks(), "RAGLOOM_OBJECT_STORE=s3")
    code = block.code
    for readme_value, ours in (("http://127.0.0.1:9000", s3.endpoint_url), ("change-this-secret", SECRET_KEY),
                               ("ragloom-app", ACCESS_KEY)):
        assert readme_value in code, f"the README's S3 block no longer shows {readme_value}"
        code = code.replace(readme_value, ours)
    bucket = s3.new_bucket()
    code = code.replace("RAGLOOM_S3_BUCKET=ragloom", f"RAGLOOM_S3_BUCKET={bucket}")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    commands = [split_comment(c)[0] for c in code.replace("\\\n", " ").splitlines() if c.strip()]
    proc = Shell(work, home).run("set -e\n" + "\n".join(commands), block)
    stored = _names(s3, bucket)
    pages = len(pypdfium2.PdfDocument(ROOT / "src" / "ragloom" / "samples" / "orion-manual.pdf"))
    # the sample the README adds (a clone's file): its original and an image of each page
    assert len(stored) == 1 + pages and all(n.startswith("ragloom/") for n in stored), (stored, proc.stdout)
    assert not (home / "files").exists() or not any(p.is_file() for p in (home / "files").rglob("*"))
    assert "deleted" in proc.stdout  # `ragloom gc --dry-run` reported on the bucket
    s3.drop_bucket(bucket)
