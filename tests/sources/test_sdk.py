"""The SDK's sources methods against the app (in process): add with filters and credentials, check, sync
and wait for it, pause and resume, change the schedule, cancel a queued sync, remove."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.config import Settings
from ragloom.errors import ConflictError, InvalidRequestError, NotFoundError
from ragloom.sdk import Ragloom
from ragloom.worker import run_one_sync
from tests.live import app_client
from tests.sources.helpers import write


def test_sources_through_the_sdk(settings: Settings, shared: Path) -> None:
    write(shared / "kb" / "a.md", "# A\n")
    write(shared / "kb" / "b.txt", "b\n")
    with app_client(settings) as (client, ctx, headers):
        from fastapi.testclient import TestClient

        http = TestClient(client.app, base_url="http://testserver/api/v1")
        rag = Ragloom("http://testserver", headers["Authorization"].split(" ", 1)[1], http=http)
        kb = rag.create_dataset("docs")
        src = rag.add_source(kb.id, "share", "folder", settings={"path": str(shared / "kb")}, file_types=["md"],
                             credentials={"token": "t0k3n"}, schedule_minutes=15)
        assert src.has_credentials and src.filters.file_types == ["md"] and src.schedule_minutes == 15
        with pytest.raises(ConflictError):
            rag.add_source(kb.id, "share", "folder", settings={"path": str(shared / "kb")})
        with pytest.raises(InvalidRequestError, match="max_size_mb"):
            rag.add_source(kb.id, "x", "folder", max_size_mb=-1)  # refused before it is sent
        assert rag.check_source(kb.id, "share").ok

        queued = rag.sync_source(kb.id, src.id)
        assert rag.cancel_sync(kb.id, src.id, queued.id).status == "cancelled"
        job = rag.sync_source(kb.id, src.id)
        assert run_one_sync(ctx, "w") == job.id
        done = rag.wait_for_sync(kb.id, src.id, job.id, timeout=10)
        assert done.status == "done" and (done.stats.new, done.stats.skipped) == (1, 1)
        assert [s.id for s in rag.list_syncs(kb.id, src.id).syncs] == [job.id, queued.id]

        assert rag.pause_source(kb.id, "share").paused
        assert not rag.resume_source(kb.id, "share").paused
        manual = rag.update_source(kb.id, "share", {"schedule_minutes": None})
        assert manual.schedule_minutes is None and manual.next_run_at is None
        assert rag.list_sources(kb.id).sources[0].documents == 1
        rag.remove_source(kb.id, "share", keep_documents=True)
        with pytest.raises(NotFoundError):
            rag.get_source(kb.id, "share")
        assert [d.name for d in rag.list_documents(kb.id).documents] == ["a.md"]
