"""Ingestion and query benchmark on generated documents.

    .venv/bin/python benchmarks/ingest_query.py --docs 1000 --queries 200 --workers 2

Ingests N generated documents through the real pipeline (object store -> task
queue -> worker processes -> parse -> chunk -> embed -> index -> publish) into a
scratch data directory, then runs M queries through the retrieval service and
prints docs/s, chunks/s and query latency (p50/p95, with and without the query
embedding).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from ingesting import ingest_all  # benchmarks/ run as scripts: their folder is on sys.path
from rich.console import Console
from rich.table import Table

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.schemas.datasets import KBCreate
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.search.retrieval import search

SUBJECTS = ["pump", "valve", "turbine", "compressor", "sensor", "controller", "bearing", "gearbox", "filter",
            "heat exchanger", "motor", "inverter", "battery pack", "cooling loop", "hydraulic press"]
VERBS = ["must be inspected", "is replaced", "is calibrated", "is lubricated", "is tested", "is cleaned"]
PERIODS = ["every 500 hours", "each month", "after 2,000 cycles", "every spring", "weekly", "after each overhaul"]
PLACES = ["in hall A", "on line 3", "at the north plant", "in the clean room", "on deck 2", "at site Lyon"]
TOPICS = ["maintenance", "safety", "warranty", "installation", "troubleshooting", "storage"]


def make_doc(rng: random.Random, i: int) -> tuple[str, bytes, str]:
    """A markdown document of ~6 paragraphs; returns (name, bytes, a question it answers)."""
    topic = rng.choice(TOPICS)
    model = f"RX-{1000 + i}"
    lines = [f"# {topic.title()} manual for model {model}", ""]
    question = ""
    for p in range(6):
        sents = []
        for _ in range(4):
            s, v, per, pl = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(PERIODS), rng.choice(PLACES)
            sents.append(f"The {s} of unit {model} {v} {per} {pl}.")
            if not question:
                question = f"How often is the {s} of unit {model} {v.split()[-1]}?"
        lines += [f"## Section {p + 1}", " ".join(sents), ""]
    return f"doc-{i:05d}.md", "\n".join(lines).encode(), question


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--home", type=Path, default=None, help="data directory (default: a temporary one)")
    args = ap.parse_args()
    console = Console()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=args.home or Path(tmp) / "home", workers=args.workers, _env_file=None)
        ctx = Context(settings)
        ctx.init_storage()
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        with ctx.db.session() as s:
            kb = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="bench"))
            kb_id = kb.id
        docs = [make_doc(rng, i) for i in range(args.docs)]
        ingest_s, chunks, failed = ingest_all(ctx, principal, kb_id, [(n, d) for n, d, _ in docs], args.workers,
                                              console)
        questions = [q for _, _, q in docs]
        rng.shuffle(questions)
        questions = (questions * (args.queries // max(1, len(questions)) + 1))[: args.queries]
        search(ctx, principal=principal, kb_ids=[kb_id], question="warm up")
        emb = ctx.embedder(kb.embedding_model)
        lat, emb_lat = [], []
        for q in questions:
            t = time.perf_counter()
            emb.embed_query(q)
            emb_lat.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            search(ctx, principal=principal, kb_ids=[kb_id], question=q, options=RetrievalOptions(page_size=6))
            lat.append((time.perf_counter() - t) * 1000)
        ctx.close()
    no_emb = [a - b for a, b in zip(lat, emb_lat, strict=True)]
    table = Table(title=f"ragloom ingest + query, N={args.docs} docs, M={args.queries} queries, "
                        f"{args.workers} workers")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, val in [
        ("documents (failed)", f"{args.docs} ({failed})"),
        ("chunks", f"{chunks}"),
        ("ingest wall time, s", f"{ingest_s:.1f}"),
        ("docs/s", f"{args.docs / ingest_s:.2f}"),
        ("chunks/s", f"{chunks / ingest_s:.2f}"),
        ("query p50 / p95, ms (end to end)", f"{pct(lat, 50):.1f} / {pct(lat, 95):.1f}"),
        ("query embedding p50, ms", f"{pct(emb_lat, 50):.1f}"),
        ("query p50 / p95, ms (excl. embedding)", f"{pct(no_emb, 50):.1f} / {pct(no_emb, 95):.1f}"),
    ]:
        table.add_row(name, val)
    console.print(table)


if __name__ == "__main__":
    main()
