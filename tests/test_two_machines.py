"""Two "machines" share the work (issue 15): an API process (``ragloom serve --no-workers``) and two
``ragloom worker`` processes, each with a data directory of its own and nothing shared but a real
PostgreSQL (metadata DB and pgvector search store) and a real S3 server. 200 documents are uploaded
through the API; machine B is killed (supervisor and worker, SIGKILL) while it runs tasks, and machine
A takes them back when their lease runs out. Every document ends done, once: one version, one chunk
in the search store, no task lost, none run twice at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from ragloom.config import Settings
from ragloom.db.models import Document, DocumentVersion, Task
from ragloom.db.session import Database
from ragloom.docstore.base import Filters
from ragloom.docstore.registry import open_docstore
from tests.pg import PgServer
from tests.processes import admin_key, descendants, served, wait
from tests.storage.engines import ACCESS_KEY, SECRET_KEY, S3Server, s3_server

pytestmark = pytest.mark.slow
DOCUMENTS = 200
WORDS = ["pump", "valve", "harbor", "crane", "tide", "ledger", "permit", "rope", "winch", "hull", "cargo", "berth"]


def note(i: int) -> bytes:
    words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(12))
    return f"Note {i}: the {words} log of shift {i}.".encode()


@pytest.fixture
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


def machine(home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    home.mkdir(parents=True)
    with (home.parent / f"{home.parent.name}.log").open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "ragloom.cli", "worker", "--processes", "1"],
                                env={**os.environ, **env, "RAGLOOM_HOME": str(home)}, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def test_two_machines_share_the_queue_and_one_takes_over_from_the_other(pg: PgServer, s3: S3Server,
                                                                         tmp_path: Path) -> None:
    url = pg.new_database()
    shared = {"RAGLOOM_DATABASE_URL": url, "RAGLOOM_DOCSTORE": "pgvector", "RAGLOOM_DOCSTORE_URL": url,
              "RAGLOOM_OBJECT_STORE": "s3", "RAGLOOM_S3_BUCKET": s3.new_bucket(), "RAGLOOM_S3_PREFIX": "rl/",
              "RAGLOOM_S3_ENDPOINT_URL": s3.endpoint_url, "RAGLOOM_S3_REGION": "us-east-1",
              "RAGLOOM_S3_ACCESS_KEY_ID": ACCESS_KEY, "RAGLOOM_S3_SECRET_ACCESS_KEY": SECRET_KEY,
              "RAGLOOM_SECRET_KEY": "one key for every machine", "RAGLOOM_EMBEDDING_THREADS": "1",
              "RAGLOOM_WORKER_HEARTBEAT_SECONDS": "0.5", "RAGLOOM_TASK_LEASE_SECONDS": "6",
              "RAGLOOM_INGEST_BATCH_DOCUMENTS": "4"}
    api_home = tmp_path / "api" / "home"
    api_home.mkdir(parents=True)
    with served(api_home, workers_=0, **shared) as (_proc, api):
        headers = {"Authorization": f"Bearer {admin_key(api_home, api)}"}
        kb = httpx.post(f"{api}/api/v1/datasets", headers=headers, json={"name": "shared"}, timeout=30).json()["id"]
        for start in range(0, DOCUMENTS, 50):
            files = [("file", (f"note-{i:03d}.txt", note(i), "text/plain")) for i in range(start, start + 50)]
            r = httpx.post(f"{api}/api/v1/datasets/{kb}/documents", headers=headers, files=files, timeout=60)
            assert r.status_code == 201, r.text[:500]

        a = machine(tmp_path / "a" / "home", shared)
        b = machine(tmp_path / "b" / "home", shared)
        db = Database(url)
        try:
            def running_on_b() -> list[str]:
                pids = {str(p) for p in descendants(b.pid)}
                with db.session() as s:
                    rows = s.execute(select(Task.id, Task.claimed_by).where(Task.status == "running")).all()
                return [t for t, by in rows if (by or "").split(":")[1:2] and by.split(":")[1] in pids]

            held = wait(running_on_b, 120, "machine B to run a task", poll=0.05)
            b_pids = {str(p) for p in descendants(b.pid)}
            os.killpg(b.pid, signal.SIGKILL)  # the whole machine: its supervisor and its worker
            b.wait(10)

            def finished() -> bool:
                with db.session() as s:
                    return not s.scalar(select(func.count()).select_from(Task)
                                        .where(Task.status.in_(("queued", "running"))))
            wait(finished, 240, "every task to finish", poll=0.5)
            health = httpx.get(f"{api}/api/v1/health", timeout=10, headers=headers).json()
            assert health["workers"]["alive"] == 1  # A only; B's row is gone or stale

            with db.session() as s:
                docs = s.execute(select(Document.status, Document.chunk_count)).all()
                versions = s.scalar(select(func.count()).select_from(DocumentVersion))
                tasks = {t.id: t for t in s.scalars(select(Task))}
                tenant = s.scalar(select(Document.tenant_id).limit(1))
        finally:
            for proc in (a, b):
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(60)  # past the supervisor's own 30 s grace for a worker that is slow to stop
            db.dispose()

    assert len(docs) == DOCUMENTS and {st for st, _ in docs} == {"done"}  # none lost
    assert versions == DOCUMENTS and all(n == 1 for _, n in docs)  # none twice
    assert len(tasks) == DOCUMENTS and all(t.status == "done" for t in tasks.values())
    taken_over = [tasks[t] for t in held]  # type: ignore[union-attr]
    assert taken_over and all(t.attempts == 2 for t in taken_over)  # B's claim, then A's
    assert all((t.claimed_by or "").split(":")[1] not in b_pids for t in taken_over)  # finished by A
    twice = [t for t in tasks.values() if t.attempts != 1]
    assert all(t.attempts == 2 for t in twice) and len(twice) <= 2 * 4  # only what B held when it died

    settings = Settings(home=tmp_path / "reader", database_url=url, docstore="pgvector", docstore_url=url,
                        _env_file=None)
    store = open_docstore(settings)
    try:
        rows, total = store.list_chunks(tenant, Filters([kb]), limit=1000)
    finally:
        store.close()
    assert total == DOCUMENTS and len({r.doc_id for r in rows}) == DOCUMENTS  # one chunk each, in the store
