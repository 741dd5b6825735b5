"""A worker killed with SIGKILL in the middle of a sync (issue 30): the sync is taken back by another
worker and finishes; every file has exactly one document and one item row — nothing lost, nothing
duplicated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db.models import Document, SourceItem, SourceSync, utcnow
from ragloom.service.accounts import identity
from ragloom.service.sources import manage
from ragloom.states import TaskStatus
from ragloom.worker import run_one_sync
from tests.sources.helpers import add_source, make_kb, write

pytestmark = pytest.mark.slow

FILES = 24

WORKER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ragloom.config import Settings
    from ragloom.context import Context
    from ragloom.ingest.connectors.folder import FolderConnector
    from ragloom.worker import run_one_sync

    real = FolderConnector.read

    def slow(self, item):  # a slow disk: the parent has time to kill this process midway
        time.sleep(0.15)
        return real(self, item)

    FolderConnector.read = slow
    home, root = Path(sys.argv[1]), Path(sys.argv[2])
    ctx = Context(Settings(home=home, workers=0, source_roots=[root], _env_file=None))
    run_one_sync(ctx, "doomed-worker")
    print("finished before it was killed", flush=True)
""")


def test_a_worker_killed_mid_sync_loses_and_duplicates_nothing(tmp_path: Path, shared: Path) -> None:
    for i in range(FILES):
        write(shared / "big" / f"doc{i:02d}.md", f"# Document {i}\n\nThe part number is P-{i:04d}.\n")
    settings = Settings(home=tmp_path / "home", workers=0, source_roots=[shared], _env_file=None)
    ctx = Context(settings)
    ctx.init_storage()
    try:
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        kb = make_kb(ctx, principal)
        source = add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "big")})
        with ctx.db.session() as s:
            job_id = manage.request_sync(s, principal=principal, kb_id=kb, source_id=source).id
        script = tmp_path / "worker.py"
        script.write_text(WORKER)
        proc = subprocess.Popen([sys.executable, str(script), str(settings.home), str(shared)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def items() -> int:
            with ctx.db.session() as s:
                return s.scalar(select(func.count()).select_from(SourceItem)) or 0

        deadline = time.monotonic() + 120
        while items() < 5:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        done_before = items()
        assert 5 <= done_before < FILES
        with ctx.db.session() as s:
            assert s.get(SourceSync, job_id).status == TaskStatus.RUNNING  # type: ignore[union-attr]
            # no heartbeat comes from a dead worker: once it is stale the queue takes the sync back
            s.execute(update(SourceSync).where(SourceSync.id == job_id)
                      .values(heartbeat_at=utcnow() - timedelta(hours=1)))
        assert run_one_sync(ctx, "next-worker") == job_id
        with ctx.db.session() as s:
            job = s.get(SourceSync, job_id)
            assert job is not None and job.status == TaskStatus.DONE and job.attempts == 2
            assert job.stats["new"] + job.stats["unchanged"] == FILES and job.stats["unchanged"] >= done_before
            names = list(s.scalars(select(Document.name).where(Document.kb_id == kb)))
            rows = list(s.scalars(select(SourceItem.item_id).where(SourceItem.source_id == source)))
        assert sorted(names) == sorted(rows) == [f"doc{i:02d}.md" for i in range(FILES)]
    finally:
        ctx.close()
