"""What the ingestion benchmarks share: upload files, run a worker pool until every document is
finished, and count what came out."""

from __future__ import annotations

import time

from rich.console import Console
from sqlalchemy import func, select

from ragloom.context import Context, Principal
from ragloom.db.models import Document
from ragloom.service.documents import catalog
from ragloom.supervisor import WorkerPool


def ingest_all(ctx: Context, principal: Principal, kb_id: str, files: list[tuple[str, bytes]], workers: int,
               console: Console) -> tuple[float, int, int]:
    """Upload ``files`` (100 a request) and run ``workers`` worker processes until no document is queued
    or running. Returns the wall seconds from the first upload, the chunks published and the
    documents that did not end ``done``."""
    t0 = time.perf_counter()
    for i in range(0, len(files), 100):
        with ctx.db.session() as s:
            catalog.add_documents(ctx, s, principal=principal, kb_id=kb_id, uploads=[
                catalog.Upload(filename=n, data=d) for n, d in files[i : i + 100]])
    pool = WorkerPool(ctx.settings, workers).start()
    try:
        with console.status("ingesting") as status:
            while True:
                with ctx.db.session() as s:
                    open_ = s.scalar(select(func.count()).select_from(Document)
                                     .where(Document.status.in_(("queued", "running")))) or 0
                status.update(f"ingesting: {len(files) - open_}/{len(files)} documents finished")
                if open_ == 0:
                    break
                time.sleep(0.2)
        seconds = time.perf_counter() - t0
    finally:
        pool.stop()
    with ctx.db.session() as s:
        chunks = s.scalar(select(func.sum(Document.chunk_count))) or 0
        failed = s.scalar(select(func.count()).select_from(Document).where(Document.status != "done")) or 0
    return seconds, int(chunks), int(failed)
