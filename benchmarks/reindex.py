"""`ragloom reindex` at scale: rebuilding the search index from the stored files, timed by the command itself.

    .venv/bin/python benchmarks/reindex.py --docs 100 --chunks 100
    .venv/bin/python benchmarks/reindex.py --docs 10000 --chunks 100 --embeddings loopback --workers 2  # a million

In a scratch data directory (``RAGLOOM_HOME`` under the system's temporary folder, deleted afterwards;
the embedding cache is its own too, so the first ingestion embeds every chunk), writes ``--docs``
Markdown files of ``--chunks`` sections each (a heading and 50 words of a Zipf vocabulary: about one
chunk each, at 128 tokens a chunk), then runs the user's commands and reads the times they report:

- ``ragloom add`` of the folder (parse, chunk, embed, index, publish: the first ingestion);
- ``ragloom reindex KB`` (every document re-parsed into a new version; its chunks' vectors come from the
  embedding cache, the text being the same);
- ``ragloom reindex --drop`` (the whole index deleted and created again first).

The table gives documents, chunks, seconds and chunks per second per phase, and the time the same rate
would take for a million chunks (10,000 documents of 100 chunks: a projection, unless that is the size run).

A million chunks: the local model embeds about 10 chunks a second here, so the first ingestion would take a
day. ``--embeddings loopback`` makes the knowledge base's model an OpenAI-compatible embeddings API the
benchmark serves on 127.0.0.1 (384 numbers a text, from a hash of it: what the local model gives, made at
once); the reindexes take their vectors from the embedding cache either way, as they do with the local
model, so their times do not depend on it. ``--workers N`` runs N ``ragloom worker`` processes beside
``ragloom add`` (whose own thread works too) to build the knowledge base sooner; the reindexes then run
alone, as a user runs them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
from retrieval_bench import VOCAB  # benchmarks/ run as scripts: their folder is on sys.path
from rich.console import Console
from rich.table import Table

console = Console()
RAGLOOM = [sys.executable, "-m", "ragloom.cli"]


def write_docs(folder: Path, docs: int, chunks: int, rng: np.random.Generator) -> None:
    weights = 1.0 / np.arange(1, len(VOCAB) + 1)
    weights /= weights.sum()
    for d in range(docs):
        sections = []
        for c in range(chunks):
            words = rng.choice(len(VOCAB), size=50, p=weights)
            sections.append(f"## Section {d}.{c}\n\n" + " ".join(VOCAB[w] for w in words).capitalize() + ".")
        (folder / f"manual-{d:05d}.md").write_text(f"# Manual {d}\n\n" + "\n\n".join(sections), encoding="utf-8")


class _Embeddings(BaseHTTPRequestHandler):
    """``POST /v1/embeddings``: a unit vector of 384 numbers a text, seeded by the text's hash."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = []
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            vec = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            data.append({"object": "embedding", "index": i, "embedding": (vec / np.linalg.norm(vec)).tolist()})
        out = json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def loopback_embeddings() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def run(args: list[str], env: dict[str, str]) -> tuple[dict[str, object], float]:
    """A ragloom command's ``--json`` output and its wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run([*RAGLOOM, *args, "--json"], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"ragloom {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    start = proc.stdout.find("{")
    return json.loads(proc.stdout[start:]), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--chunks", type=int, default=100, help="sections (chunks) per document")
    ap.add_argument("--embeddings", choices=("local", "loopback"), default="local",
                    help="the knowledge base's embedding model: the local one, or an API served on loopback")
    ap.add_argument("--workers", type=int, default=0, help="worker processes beside the first `ragloom add`")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ragloom-reindex-"))
    server, workers = None, None
    try:
        folder = scratch / "docs"
        folder.mkdir()
        with console.status(f"writing {args.docs:,} documents"):
            write_docs(folder, args.docs, args.chunks, np.random.default_rng(0))
        env = {**os.environ, "RAGLOOM_HOME": str(scratch / "home")}
        if args.embeddings == "loopback":
            server, url = loopback_embeddings()
            env |= {"RAGLOOM_EMBEDDING_MODEL": "openai", "RAGLOOM_EMBEDDING_BASE_URL": url,
                    "RAGLOOM_EMBEDDING_MODEL_NAME": "loopback-384"}
        run(["kb", "create", "bench"], env)
        table = Table(title=f"{args.docs:,} documents of {args.chunks} sections, {os.cpu_count()} cores, "
                            f"{args.embeddings} embeddings")
        for col in ("phase", "documents", "chunks", "seconds", "chunks/s", "1,000,000 chunks at this rate"):
            table.add_column(col, justify="left" if col == "phase" else "right")
        if args.workers:
            workers = subprocess.Popen([*RAGLOOM, "worker", "--processes", str(args.workers)], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with console.status("ragloom add (the first ingestion: every chunk embedded)"):
            added, wall = run(["add", "bench", str(folder), "--batch", "64", "--config", '{"chunk_token_num": 128}'],
                              env)
        if workers is not None:
            workers.terminate()  # drains and stops
            workers.wait()
            workers = None
        docs = added.get("documents", [])
        chunks = sum(int(d.get("chunk_count", 0)) for d in docs if isinstance(d, dict))
        table.add_row("ragloom add (first ingestion)" + (f" + {args.workers} worker processes" if args.workers else ""),
                      f"{len(docs):,}", f"{chunks:,}", f"{wall:,.1f}",
                      f"{chunks / wall:,.0f}", f"{1e6 / (chunks / wall) / 3600:,.1f} h")
        for label, cmd in (("ragloom reindex bench", ["reindex", "bench"]),
                           ("ragloom reindex --drop", ["reindex", "--drop"])):
            with console.status(label):
                out, wall = run(cmd, env)
            seconds, done = float(out["seconds"]), int(out["chunks"])  # type: ignore[arg-type]
            table.add_row(label, f"{out['reparsed']:,}", f"{done:,}", f"{seconds:,.1f} ({wall:,.1f} wall)",
                          f"{done / seconds:,.0f}", f"{1e6 / (done / seconds) / 3600:,.1f} h")
        console.print(table)
    finally:
        if workers is not None:
            workers.terminate()
            workers.wait()
        if server is not None:
            server.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
