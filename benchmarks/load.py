"""Concurrent retrieval when nothing ingests: the server beside the engine alone, in one run.

    .venv/bin/python benchmarks/load.py --clients 8 --seconds 30

Seeds a scratch data directory through a real ``ragloom serve`` (the soak's generated Markdown, text
and PDF files, ``--docs`` of them), then runs hybrid ``/retrieval`` calls for ``--seconds`` from
``--clients`` concurrent clients:

- **engine alone**: the server stopped, ``--clients`` threads in this process call the retrieval use
  case itself (``ragloom.service.search.retrieval.search``: query analysis, query embedding, the
  search store, prune, fusion, relevance) on the same data directory — no HTTP, no authentication;
- **server**: ``--clients`` HTTP clients against ``ragloom serve`` (no worker, rate limits off), one
  request at a time each.

Both phases ask the same questions in the same order (a client's questions repeat across the run,
so query embeddings come from the server's cache after their first use, in both phases alike). The
table gives queries/s and p50 / p95 / p99 latency per phase; the goal (issue 32) is at least 40
queries/s at p95 ≤ 300 ms through the server with 8 clients on two cores.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import soak  # noqa: E402  (the soak's server start, generated files and questions)

console = Console()


def _run_clients(clients: int, seconds: float, ask: object) -> tuple[list[float], int, float]:
    """Run ``ask(client_index, question)`` from ``clients`` threads for ``seconds``: latencies, errors, time."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop = threading.Event()
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        nonlocal errors
        rng = random.Random(i)
        start.wait()
        while not stop.is_set():
            q = soak.question(rng)
            t0 = time.perf_counter()
            ok = ask(i, q)  # type: ignore[operator]
            with lock:
                latencies.append(time.perf_counter() - t0)
                errors += 0 if ok else 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join()
    return latencies, errors, time.perf_counter() - t0


def _server_phase(url: str, key: str, clients: int, seconds: float) -> tuple[list[float], int, float]:
    apis = [httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=120)
            for _ in range(clients)]

    def ask(i: int, q: str) -> bool:
        res = apis[i].post("/retrieval", json={"question": q, "dataset_ids": ["soak"], "page_size": 6})
        return res.is_success

    ask(0, "warm up the server")
    try:
        return _run_clients(clients, seconds, ask)
    finally:
        for api in apis:
            api.close()


def _engine_phase(home: Path, clients: int, seconds: float) -> tuple[list[float], int, float]:
    os.environ["RAGLOOM_HOME"] = str(home)
    from ragloom.config import Settings
    from ragloom.context import Context
    from ragloom.schemas.options import RetrievalOptions
    from ragloom.service.accounts import identity
    from ragloom.service.search.retrieval import search

    ctx = Context(Settings(workers=0))
    with ctx.db.session() as s:
        principal = identity.bootstrap(s).principal

    def ask(i: int, q: str) -> bool:
        search(ctx, principal=principal, kb_ids=["soak"], question=q, options=RetrievalOptions(page_size=6))
        return True

    ask(0, "warm up the engine")
    return _run_clients(clients, seconds, ask)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--docs", type=int, default=30, help="documents ingested before the clock starts")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragloom-load-") as tmp:
        home = Path(tmp) / "home"
        proc, url, key = soak.start_server(home, soak.free_port(), 1)
        try:
            api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=120)
            api.post("/datasets", json={"name": "soak", "parser_config": {"chunk_token_num": 128}}).raise_for_status()
            rng = random.Random(0)
            with console.status(f"seeding {args.docs} documents"):
                for i in range(args.docs):
                    name, data, mime = soak.make_file(rng, i)
                    api.post("/datasets/soak/documents", files=[("file", (name, data, mime))]).raise_for_status()
                soak.wait_ingested(api, timeout=600)
            chunks = sum(d["chunk_count"] for d in api.get("/datasets/soak/documents",
                                                           params={"page_size": 1000}).json()["documents"])
        finally:
            soak.stop_server(proc)
        with console.status("engine alone"):
            rows.append(("engine alone (in-process use case)", *_engine_phase(home, args.clients, args.seconds)))
        proc, url, key = soak.start_server(home, soak.free_port(), 0)
        try:
            with console.status("server"):
                rows.append(("server (HTTP, authenticated)", *_server_phase(url, key, args.clients, args.seconds)))
        finally:
            soak.stop_server(proc)
    table = Table(title=f"hybrid retrieval, {args.clients} clients, {args.seconds:.0f} s each, "
                        f"{args.docs} documents ({chunks} chunks), {os.cpu_count()} cores")
    for col in ("phase", "queries", "q/s", "p50 ms", "p95 ms", "p99 ms", "errors"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for label, lat, errors, elapsed in rows:
        table.add_row(label, str(len(lat)), f"{len(lat) / elapsed:.1f}",
                      *(f"{soak.percentile(lat, q) * 1000:.0f}" for q in (0.5, 0.95, 0.99)), str(errors))
    console.print(table)


if __name__ == "__main__":
    main()
