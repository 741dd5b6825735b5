"""Source syncs at scale: a generated folder of small Markdown files synced into a knowledge base.

    .venv/bin/python benchmarks/sources_sync.py --files 2000 [--ingest --workers 2]

1. upload alone: the same files added as an upload adds them (``add_documents``, 100 a request), no
   parsing — what a sync cannot avoid doing for new files;
2. first sync of the folder (list, read each file into a spool file, add its document, write its item
   row): documents right after;
3. incremental sync with nothing changed (goal: under 5 % of the first: only a listing and one
   comparison per item, nothing read);
4. after 2 % of the files changed, 1 % deleted and 1 % added: the incremental sync, its counts, and the
   documents right after.

With ``--ingest`` the documents of (1) and (2) are also parsed, chunked, embedded and indexed by
``--workers`` worker processes, and the times include it (first sync + ingestion vs upload + ingestion).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from ingesting import ingest_all  # benchmarks/ run as scripts: their folder is on sys.path
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import Document, SourceSync
from ragloom.schemas.datasets import KBCreate
from ragloom.schemas.sources import SourceCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.sources import manage
from ragloom.supervisor import WorkerPool
from ragloom.worker import run_one_sync

WORDS = ["pump", "valve", "grease", "torque", "bearing", "sensor", "filter", "motor", "cycle", "hours", "inspect",
         "replace", "calibrate", "clean", "plant", "line", "harbor", "crane", "vessel", "berth", "tide", "cargo"]
GOAL = 0.05


def text(rng: random.Random, title: str) -> str:
    body = " ".join(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(6))
    return f"# {title}\n\n{body}\n"


def documents(ctx: Context, kb_id: str) -> int:
    with ctx.db.session() as s:
        return s.scalar(select(func.count()).select_from(Document).where(Document.kb_id == kb_id)) or 0


def wait_parsed(ctx: Context, workers: int) -> None:
    pool = WorkerPool(ctx.settings, workers).start()
    try:
        while True:
            with ctx.db.session() as s:
                if not s.scalar(select(func.count()).select_from(Document)
                                .where(Document.status.in_(("queued", "running")))):
                    return
            time.sleep(0.2)
    finally:
        pool.stop()


def timed_sync(ctx: Context, principal: Principal, kb_id: str, source_id: str) -> tuple[float, dict[str, int]]:
    t0 = time.perf_counter()
    with ctx.db.session() as s:
        job_id = manage.request_sync(s, principal=principal, kb_id=kb_id, source_id=source_id).id
    assert run_one_sync(ctx, "bench") == job_id
    seconds = time.perf_counter() - t0
    with ctx.db.session() as s:
        job = s.get(SourceSync, job_id)
        assert job is not None and job.status == "done", (job.status, job.message) if job else None
        return seconds, dict(job.stats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--ingest", action="store_true", help="also parse, chunk, embed and index the documents")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    console, rng = Console(), random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="rl-sources-") as tmp:
        root = Path(tmp) / "shared"
        folder = root / "handbook"
        for i in range(args.files):
            sub = folder / f"part-{i % 20:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"note-{i:05d}.md").write_text(text(rng, f"Note {i}"))
        files = sorted(folder.rglob("*.md"))
        # two data directories: the uploads' and the sync's, each with its own (cold) embedding cache
        up_ctx = Context(Settings(home=Path(tmp) / "uploaded", workers=0, _env_file=None))
        up_ctx.init_storage()
        ctx = Context(Settings(home=Path(tmp) / "synced", workers=0, source_roots=[root], _env_file=None))
        ctx.init_storage()
        with up_ctx.db.session() as s:
            up_principal = identity.bootstrap(s).principal
            upload_kb = knowledgebases.create(up_ctx, s, principal=up_principal, spec=KBCreate(name="uploaded")).id
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
            synced_kb = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="synced")).id
        rows: list[tuple[str, str, str, str]] = []
        payload = [(p.name, p.read_bytes()) for p in files]
        if args.ingest:
            upload_s, _, _ = ingest_all(up_ctx, up_principal, upload_kb, payload, args.workers, console)
            label = "upload + ingestion"
        else:
            from ragloom.service.documents.catalog import Upload, add_documents

            t0 = time.perf_counter()
            for i in range(0, len(payload), 100):
                with up_ctx.db.session() as s:
                    add_documents(up_ctx, s, principal=up_principal, kb_id=upload_kb,
                                  uploads=[Upload(filename=n, data=d) for n, d in payload[i:i + 100]])
            upload_s, label = time.perf_counter() - t0, "upload alone (no parsing)"
        rows.append((label, f"{upload_s:.1f}", "", str(documents(up_ctx, upload_kb))))
        up_ctx.close()

        with ctx.db.session() as s:
            source = manage.add(ctx, s, principal=principal, kb_id=synced_kb, spec=SourceCreate(
                name="handbook", type="folder", settings={"path": str(folder)})).id
        first_s, first = timed_sync(ctx, principal, synced_kb, source)
        if args.ingest:
            t0 = time.perf_counter()
            wait_parsed(ctx, args.workers)
            first_s += time.perf_counter() - t0
        rows.append(("first sync" + (" + ingestion" if args.ingest else ""), f"{first_s:.1f}",
                     f"{first['new']} new", str(documents(ctx, synced_kb))))

        same_s, same = timed_sync(ctx, principal, synced_kb, source)
        rows.append(("incremental, nothing changed", f"{same_s:.2f}", f"{same['unchanged']} unchanged",
                     str(documents(ctx, synced_kb))))

        n = len(files)
        picked = rng.sample(files, int(n * 0.03))
        changed, deleted = picked[:int(n * 0.02)], picked[int(n * 0.02):]
        for p in changed:
            p.write_text(text(rng, p.stem + " (revised)") + "Revised.\n")
        for p in deleted:
            p.unlink()
        for i in range(int(n * 0.01)):
            (folder / "new").mkdir(exist_ok=True)
            (folder / "new" / f"added-{i:05d}.md").write_text(text(rng, f"Added {i}"))
        delta_s, delta = timed_sync(ctx, principal, synced_kb, source)
        rows.append(("incremental, 2 % changed, 1 % deleted, 1 % added", f"{delta_s:.2f}",
                     f"{delta['changed']} changed, {delta['deleted']} deleted, {delta['new']} new",
                     str(documents(ctx, synced_kb))))
        ctx.close()

    table = Table(title=f"source sync of {n} files" + (f", {args.workers} workers" if args.ingest else ""))
    for column in ("step", "seconds", "items", "documents after"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    ratio = same_s / first_s
    console.print(f"nothing changed: {ratio:.1%} of the first sync (goal under {GOAL:.0%}): "
                  + ("[green]met[/]" if ratio < GOAL else "[red]missed[/]"))


if __name__ == "__main__":
    main()
