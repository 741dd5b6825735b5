"""A sync run by the supervised worker processes of ``ragloom serve`` (issue 30): the pool knows a sync
as one of its jobs — a sync that runs longer than the cancel grace is not taken for a cancelled task and
killed — and the pool's workers run the schedule."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import SourceSync
from ragloom.states import TaskStatus
from ragloom.supervisor import WorkerPool
from tests.processes import wait
from tests.sources.helpers import add_source, documents, make_kb, write

pytestmark = pytest.mark.slow
FILES = 120


def test_a_long_scheduled_sync_runs_to_its_end_in_a_worker_process(ctx: Context, principal: Principal,
                                                                   settings: Settings, shared: Path) -> None:
    for i in range(FILES):
        write(shared / "many" / f"note{i:03d}.md", f"# Note {i}\n\nItem {i}.\n")
    kb = make_kb(ctx, principal)
    add_source(ctx, principal, kb, type="folder", settings={"path": str(shared / "many")}, schedule_minutes=60)
    changed = {"worker_heartbeat_seconds": 1.0, "cancel_grace_seconds": 0.5}
    pool = WorkerPool(settings.model_copy(update=changed), 1, ctx=ctx).start()
    try:
        def finished() -> SourceSync | None:
            with ctx.db.session() as s:
                job = s.scalar(select(SourceSync))
                return job if job is not None and job.status in (TaskStatus.DONE, TaskStatus.FAILED) else None

        job = wait(finished, 240, "the scheduled sync (a worker killed each time it runs it never ends it)")
        exits = pool.status().last_exits
    finally:
        pool.stop(timeout=20)
    assert isinstance(job, SourceSync) and job.trigger == "schedule"
    assert job.status == TaskStatus.DONE and job.attempts == 1, (job.status, job.attempts, job.message, exits)
    assert job.stats["new"] == FILES and len(documents(ctx, kb)) == FILES
