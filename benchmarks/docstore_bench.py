"""Benchmark of the embedded search store (TantivyDocStore).

Builds ``--n`` synthetic chunks (random unit vectors, Zipf-distributed synthetic vocabulary)
spread over ``--kbs`` knowledge bases in a temporary directory, then times hybrid,
text-only and vector-only searches with a kb filter and a realistic FullTextQuery
(5-8 single-term clauses, minimum_should_match 0.3, two phrases)::

    python benchmarks/docstore_bench.py --n 100000 --queries 300
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragloom.dataflow import ChunkRecord
from ragloom.docstore.base import Clause, Filters, FullTextQuery, SearchRequest
from ragloom.docstore.tantivy_store import TantivyDocStore

log = logging.getLogger("docstore_bench")


def _vocab(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    words = np.array([f"w{i}" for i in range(size)])
    weights = 1.0 / np.arange(1, size + 1) ** 1.07
    return words, weights / weights.sum()


def make_records(n: int, dim: int, kbs: int, seed: int) -> list[ChunkRecord]:
    rng = np.random.default_rng(seed)
    words, probs = _vocab(rng, 30_000)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    body = rng.choice(len(words), size=(n, 120), p=probs)
    title = rng.choice(len(words), size=(n, 6), p=probs)
    out = []
    for i in range(n):
        terms = words[body[i]].tolist()
        doc = i // 40
        out.append(
            ChunkRecord(
                id=f"c{i}", kb_id=f"kb{doc % kbs}", doc_id=f"d{doc}", version_id=f"v{doc}",
                content=" ".join(terms), vector=vecs[i], document_name=f"doc{doc}.pdf",
                content_terms=terms, content_fine_terms=terms[::2],
                title_terms=words[title[i]].tolist(), important_keywords=terms[:3],
                order=i % 40, positions=[(1 + i % 40 // 4, 50.0, 500.0, 100.0, 140.0)],
            )
        )
    return out


def make_requests(m: int, dim: int, kbs: int, seed: int, mode: str) -> list[SearchRequest]:
    rng = np.random.default_rng(seed + 1)
    words, probs = _vocab(rng, 30_000)
    out = []
    for _ in range(m):
        n_terms = int(rng.integers(5, 9))
        # mid-frequency words: what remains of a question after stop-word removal
        terms = words[rng.integers(10, 1000, size=n_terms)].tolist()
        clauses = [Clause((t,), boost=float(rng.uniform(0.5, 2.0))) for t in terms]
        clauses += [Clause((terms[0], terms[1]), boost=2.0), Clause((terms[2], terms[3]), slop=2, boost=1.0)]
        text = FullTextQuery(clauses, minimum_should_match=0.3)
        vec = rng.normal(size=dim).astype(np.float32)
        out.append(
            SearchRequest(
                Filters([f"kb{rng.integers(kbs)}"]),
                text=text if mode in ("hybrid", "text") else None,
                vector=vec / np.linalg.norm(vec) if mode in ("hybrid", "vector") else None,
            )
        )
    return out


def _read_similarity_terms(rec: ChunkRecord) -> int:
    return len(rec.content_terms) + len(rec.title_terms) + len(rec.important_keywords) + len(
        rec.important_terms) + len(rec.question_terms)


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="ragloom-bench-") as tmp:
        t0 = time.perf_counter()
        records = make_records(args.n, args.dim, args.kbs, args.seed)
        log.info("generated %d records in %.1f s", args.n, time.perf_counter() - t0)
        store = TantivyDocStore(Path(tmp))
        store.create_index("bench", args.dim)
        ingest = 0.0
        for b in range(0, args.n, args.batch):
            batch = records[b : b + args.batch]
            ingest += _timed(lambda batch=batch: store.upsert("bench", batch))
        rows = [("ingest rows/s", f"{args.n / ingest:,.0f}", f"batch {args.batch}")]
        records.clear()  # a serving process does not hold every chunk in memory (nor GC-scan it)
        batch.clear()
        gc.collect()
        cold = TantivyDocStore(Path(tmp))
        load = _timed(lambda: cold.count("bench", Filters(["kb0"])))
        rows.append(("cold open + vector sync (s)", f"{load:.2f}", f"{args.n} rows"))
        for mode in ("hybrid", "text", "vector"):
            reqs = make_requests(args.queries + 20, args.dim, args.kbs, args.seed, mode)
            for req in reqs[:20]:
                store.search("bench", req)
            times, with_terms, hits = [], [], 0
            for req in reqs[20:]:
                t = time.perf_counter()
                found = store.search("bench", req)
                times.append((time.perf_counter() - t) * 1000)
                for hit in found:  # what token similarity reads of every hit (stored rows decode lazily)
                    _read_similarity_terms(hit.record)
                with_terms.append((time.perf_counter() - t) * 1000)
                hits += len(found)
            p50, p95 = np.percentile(times, [50, 95])
            rows.append((f"{mode} search p50 / p95 (ms)", f"{p50:.2f} / {p95:.2f}", f"{hits / len(times):.0f} hits/q"))
            p50, p95 = np.percentile(with_terms, [50, 95])
            rows.append(("  + read term lists p50 / p95 (ms)", f"{p50:.2f} / {p95:.2f}", ""))
        store.close()
        cold.close()
    log.info("\n%-36s %-18s %s", "measure", "value", "note")
    for name, value, note in rows:
        log.info("%-36s %-18s %s", name, value, note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="number of chunks")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per mode")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--kbs", type=int, default=10, help="knowledge bases (queries filter on one)")
    parser.add_argument("--batch", type=int, default=1000, help="rows per upsert")
    parser.add_argument("--seed", type=int, default=0)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
