"""`ragloom reindex` at scale: rebuilding the search index from the stored files, timed by the command itself.

    .venv/bin/python benchmarks/reindex.py --docs 100 --chunks 100

In a scratch data directory (``RAGLOOM_HOME`` under the system's temporary folder, deleted afterwards;
the embedding cache is its own too, so the first ingestion embeds every chunk), writes ``--docs``
Markdown files of ``--chunks`` sections each (a heading and 50 words of a Zipf vocabulary: about one
chunk each, at 128 tokens a chunk), then runs the user's commands and reads the times they report:

- ``ragloom add`` of the folder (parse, chunk, embed, index, publish: the first ingestion);
- ``ragloom reindex KB`` (every document re-parsed into a new version; its chunks' vectors come from the
  embedding cache, the text being the same);
- ``ragloom reindex --drop`` (the whole index deleted and created again first).

The table gives documents, chunks, seconds and chunks per second per phase, and the time the same rate
would take for a million chunks (10,000 documents of 100 chunks: a projection, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
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
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ragloom-reindex-"))
    try:
        folder = scratch / "docs"
        folder.mkdir()
        write_docs(folder, args.docs, args.chunks, np.random.default_rng(0))
        env = {**os.environ, "RAGLOOM_HOME": str(scratch / "home")}
        run(["kb", "create", "bench"], env)
        table = Table(title=f"{args.docs} documents of {args.chunks} sections, {os.cpu_count()} cores")
        for col in ("phase", "documents", "chunks", "seconds", "chunks/s", "1,000,000 chunks at this rate"):
            table.add_column(col, justify="left" if col == "phase" else "right")
        with console.status("ragloom add (the first ingestion: every chunk embedded)"):
            added, wall = run(["add", "bench", str(folder), "--batch", "64", "--config", '{"chunk_token_num": 128}'],
                              env)
        docs = added.get("documents", [])
        chunks = sum(int(d.get("chunk_count", 0)) for d in docs if isinstance(d, dict))
        table.add_row("ragloom add (first ingestion)", f"{len(docs):,}", f"{chunks:,}", f"{wall:,.1f}",
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
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
