"""The whole retrieval path at scale, query embedding excluded; the embedded store's exact vector search
and its approximate (HNSW) index side by side on the same index.

    .venv/bin/python benchmarks/retrieval_bench.py --n 100000 --queries 200
    .venv/bin/python benchmarks/retrieval_bench.py --n 1000000      # issue 32: a million chunks

Builds ``--n`` chunks of English-like text (a Zipf vocabulary of real words,
analysed by ragloom's own analyzer) with unit vectors around topics (each
document has one of ``--n / 400`` topics; a chunk's vector is its topic's plus
noise, a question's is a topic's plus more noise: structure as real embeddings
have, which an HNSW graph relies on) in one knowledge base of ``--n / 40``
documents whose versions are active in the metadata DB, then times
``ragloom.retrieval.retriever.retrieve`` — query analysis with IDF
from the index, the engine call, prune against the DB, token similarity,
fusion, threshold and page — with a precomputed query vector, for hybrid,
keyword-only and vector-only, with and without explain — once with exact
vector search, once with the approximate index at the default parameters
(``RAGLOOM_ANN_*``; its graph built first, timed), with the two engines'
recall@10 of vector-only results against each other, the process's memory (RSS)
after each and the index's size on disk, and the time of the build's index writes (batches of 5,000) by
tenth of the build with their trend, and a document's write (100 chunks, one upsert, as ingestion writes
it) into the built index against one into a new index in the same run, alternately (``--n / 1000``
documents each way, from 100 to 1,000). Goals: hybrid p50 ≤ 30 ms, p95 ≤ 80 ms
at 100k chunks (issue 4); hybrid p95 ≤ 150 ms at a million, and the last batch's write no dearer than the
first's (issue 32).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase
from ragloom.docstore.base import DocStore
from ragloom.nlp import analyze_chunk
from ragloom.retrieval.retriever import retrieve
from ragloom.retrieval.types import RetrievalParams, Scope
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.accounts import identity
from ragloom.service.search.retrieval import active_versions_fn

_COMMON = ("pump valve turbine compressor sensor controller bearing gearbox filter exchanger motor inverter battery "
           "cooling hydraulic press pressure temperature maintenance inspection warranty installation safety "
           "calibration lubrication cycle hour month interval replace clean test service manual operator shift "
           "alarm fault error reset voltage current frequency speed torque flow level tank pipe seal gasket bolt "
           "nut spring shaft rotor stator winding fuse relay switch panel display menu setting parameter value "
           "limit threshold warning emergency shutdown startup procedure step check record report log site plant "
           "line hall room deck north south east west unit model series version firmware software update network "
           "cable connector port address signal noise vibration wear crack leak corrosion paint coating surface")
WORDS = _COMMON.split()
VOCAB = WORDS + [f"part{i}" for i in range(20_000)]  # common words first, then a long tail of codes


class PrecomputedQuery:
    """An embedder stand-in whose query vectors cost nothing: the benchmark excludes query embedding.
    A question's vector is near one of the corpus's topics (``centers``), as a real question's is."""

    name = "bench"

    def __init__(self, centers: np.ndarray, seed: int) -> None:
        self.dim = centers.shape[1]
        self.centers = centers
        self._rng = np.random.default_rng(seed)

    def embed_query(self, text: str) -> np.ndarray:
        center = self.centers[int(self._rng.integers(len(self.centers)))]
        v = center + self._rng.normal(scale=QUERY_NOISE / np.sqrt(self.dim), size=self.dim).astype(np.float32)
        out: np.ndarray = (v / np.linalg.norm(v)).astype(np.float32)
        return out

    def embed_passages(self, texts: list[str]) -> list[np.ndarray]:  # not used
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        return len(text.split())


TEXTS = 50_000  # distinct chunk texts; a larger index repeats them (analysing each costs more than indexing it)
CHUNK_NOISE = 0.9  # the noise's norm against a topic's unit vector: chunks of a topic are far from identical
QUERY_NOISE = 1.1


def topics(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    c = rng.normal(size=(max(1, n // 400), dim)).astype(np.float32)
    out: np.ndarray = c / np.linalg.norm(c, axis=1, keepdims=True)
    return out


PROBS = 1.0 / np.arange(1, len(VOCAB) + 1)  # Zipf: a word's chance falls with its rank
PROBS /= PROBS.sum()


def chunk_text(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(VOCAB, size=90, p=PROBS))


def near(center: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A chunk's unit vector: its topic's plus noise."""
    v = center + rng.normal(scale=CHUNK_NOISE / np.sqrt(center.size), size=center.size).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v)
    return out


def record(id_: str, kb_id: str, doc: str, version: str, name: str, order: int, text: str, terms: Any,
           vector: np.ndarray) -> ChunkRecord:
    return ChunkRecord(id=id_, kb_id=kb_id, doc_id=doc, version_id=version, content=text, vector=vector,
                       document_name=name, content_terms=terms.content_terms,
                       content_fine_terms=terms.content_fine_terms, title_terms=terms.title_terms, order=order,
                       positions=[(1 + order // 4, 50.0, 500.0, 100.0, 140.0)])


def build(ctx: Context, tenant: str, n: int, centers: np.ndarray, rng: np.random.Generator) -> str:
    dim = centers.shape[1]
    docs = max(1, n // 40)
    with ctx.db.session() as s:
        kb = KnowledgeBase(tenant_id=tenant, name="bench", embedding_model="bench", embedding_dim=dim)
        s.add(kb)
        s.flush()
        kb_id = str(kb.id)
        for d in range(docs):
            doc = Document(id=f"d{d:06d}", kb_id=kb_id, tenant_id=tenant, name=f"doc{d}.pdf", status="done")
            s.add(doc)
            s.add(DocumentVersion(id=f"v{d:06d}", document_id=doc.id, number=1, content_hash="0" * 64, size=1,
                                  status="ready"))
            doc.active_version_id = doc.latest_version_id = f"v{d:06d}"
    ctx.docstore.create_index(tenant, dim)
    batch: list[ChunkRecord] = []
    pool: list[tuple[str, Any]] = []  # texts and their analysis, reused past TEXTS chunks (the build's time)
    for i in track(range(n), description=f"indexing {n} chunks"):
        if len(pool) < TEXTS:
            text = chunk_text(rng)
            pool.append((text, analyze_chunk(ctx.analyzer, text, title="doc")))
        text, terms = pool[i % TEXTS]
        d = i // 40
        batch.append(record(f"c{i}", kb_id, f"d{d:06d}", f"v{d:06d}", f"doc{d}.pdf", i % 40, text, terms,
                            near(centers[d % len(centers)], rng)))
        if len(batch) == BATCH:
            t0 = time.perf_counter()
            ctx.docstore.upsert(tenant, batch)
            WRITES.append(time.perf_counter() - t0)
            batch = []
    if batch:
        ctx.docstore.upsert(tenant, batch)
    return kb_id


BATCH = 5000
WRITES: list[float] = []  # seconds of each full batch's upsert, in order


def write_trend(writes: list[float]) -> str:
    """The batches' write time by tenth of the build, and its trend: a least-squares line through every batch
    (two tenths alone mislead: tantivy's merges land in some and not others, ±10 % from one tenth to the next)."""
    k = len(writes) // 10
    tenths = [statistics.mean(writes[i * k:(i + 1) * k]) * 1000 for i in range(10)]
    x = np.arange(len(writes), dtype=np.float64)
    slope, start = np.polyfit(x, np.array(writes) * 1000, 1)
    end = start + slope * (len(writes) - 1)
    return (f"index writes, ms a batch of {BATCH:,} chunks by tenth of the build: "
            + " ".join(f"{t:,.0f}" for t in tenths)
            + f"; trend {start:,.0f} ms at the first batch, {end:,.0f} at the last ({(end / start - 1) * 100:+.0f} %)")


DOC_CHUNKS = 100  # a document's chunks, written by one upsert as ingestion writes a document


def document_writes(store: DocStore, ctx: Context, tenant: str, kb_id: str, centers: np.ndarray,
                    rng: np.random.Generator, docs: int) -> str:
    """One document's write as ingestion makes it (``DOC_CHUNKS`` chunks, one upsert) into the built index and
    into a new index of the same store (its first chunks: the thousandth chunk's cost), alternately; medians."""
    texts = [chunk_text(rng) for _ in range(DOC_CHUNKS)]
    terms = [analyze_chunk(ctx.analyzer, t, title="doc") for t in texts]
    empty = f"{tenant}-empty"
    store.create_index(empty, centers.shape[1])
    times: dict[str, list[float]] = {tenant: [], empty: []}
    for d in range(docs):
        for target in (tenant, empty):
            rows = [record(f"w{d}-{i}", kb_id, f"w{d:06d}", f"w{d:06d}", f"new{d}.pdf", i, texts[i], terms[i],
                           near(centers[d % len(centers)], rng)) for i in range(DOC_CHUNKS)]
            t0 = time.perf_counter()
            store.upsert(target, rows)
            times[target].append(time.perf_counter() - t0)
    store.drop_index(empty)
    big, small = statistics.median(times[tenant]) * 1000, statistics.median(times[empty]) * 1000
    big_mean, small_mean = statistics.mean(times[tenant]) * 1000, statistics.mean(times[empty]) * 1000
    return (f"a document's write ({DOC_CHUNKS} chunks, one upsert, {docs} of them): median {big:,.1f} ms into this "
            f"index, {small:,.1f} ms into a new one (its first {docs * DOC_CHUNKS:,} chunks): "
            f"{(big / small - 1) * 100:+.0f} %; mean {big_mean:,.1f} against {small_mean:,.1f} ms "
            f"({(big_mean / small_mean - 1) * 100:+.0f} %)")


def pct(values: list[float], q: int) -> float:
    return float(statistics.quantiles(values, n=100)[q - 1])


def rss_mib() -> float:
    """The process's resident memory now (MiB)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def disk_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def measure(store: DocStore, ctx: Context, scope: Scope, questions: list[str], centers: np.ndarray,
            table: Table, engine: str) -> dict[str, list[list[str]]]:
    """Time each mode over ``questions`` with ``store``; the vector-only results' ids, per question."""
    found_ids: dict[str, list[list[str]]] = {}
    for mode, explain in (("hybrid", False), ("keyword", False), ("vector", False), ("hybrid", True)):
        params = RetrievalParams(RetrievalOptions(mode=mode, page_size=10))
        embedder = PrecomputedQuery(centers, 9)  # the same question vectors for both engines
        for q in questions[:5]:  # warm up
            retrieve(q, scope, params, docstore=store, embedder=PrecomputedQuery(centers, 1), analyzer=ctx.analyzer,
                     active_versions=active_versions_fn(ctx))
        lat, found, ids = [], [], []
        for q in questions:
            t = time.perf_counter()
            res = retrieve(q, scope, params, docstore=store, embedder=embedder, analyzer=ctx.analyzer,
                           active_versions=active_versions_fn(ctx), explain=explain)
            lat.append((time.perf_counter() - t) * 1000)
            found.append(len(res.chunks))
            ids.append([c.record.id for c in res.chunks])
        found_ids[mode + (" + explain" if explain else "")] = ids
        table.add_row(engine, mode + (" + explain" if explain else ""), f"{pct(lat, 50):.1f}", f"{pct(lat, 95):.1f}",
                      f"{statistics.mean(found):.1f}")
    return found_ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--exact-only", action="store_true", help="leave the approximate index out")
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    console = Console()
    defaults = Settings(_env_file=None)
    with tempfile.TemporaryDirectory() as tmp:
        # the exact engine: no approximate index whatever the size
        ctx = Context(Settings(home=Path(tmp) / "home", ann_min_rows=0, _env_file=None))
        ctx.init_storage()
        with ctx.db.session() as s:
            tenant = identity.bootstrap(s).principal.tenant_id
        centers = topics(args.n, 384, rng)
        t0 = time.perf_counter()
        kb_id = build(ctx, tenant, args.n, centers, rng)
        build_s = time.perf_counter() - t0
        scope = Scope(tenant_id=tenant, kb_ids=[kb_id], embedding_model="bench")
        mid = VOCAB[20:3000]  # question words from the common-but-not-stop-word range
        questions = [" ".join(rng.choice(mid, size=int(rng.integers(4, 9)))) for _ in range(args.queries)]
        table = Table(title=f"retrieve() at {args.n:,} chunks, {args.queries} queries, query embedding excluded")
        for col in ("engine", "mode", "p50 ms", "p95 ms", "mean results"):
            table.add_column(col, justify="right")
        exact = measure(ctx.docstore, ctx, scope, questions, centers, table, "exact")
        notes = [f"index built in {build_s:.0f} s ({args.n / build_s:,.0f} chunks/s), "
                 f"{disk_mib(ctx.settings.index_dir):,.0f} MiB on disk; RSS with the exact engine {rss_mib():,.0f} MiB"]
        if len(WRITES) >= 10:
            notes.append(write_trend(WRITES))
        if not args.exact_only:
            from ragloom.docstore._ann import AnnConfig, expansion_for
            from ragloom.docstore.tantivy_store import TantivyDocStore

            ctx.docstore.close()
            ann = AnnConfig(min_rows=1, connectivity=defaults.ann_connectivity,
                            expansion_add=defaults.ann_expansion_add, expansion_search=defaults.ann_expansion_search,
                            expansion_rows=defaults.ann_expansion_rows, background=False)
            store = TantivyDocStore(ctx.settings.index_dir, ann=ann)
            t0 = time.perf_counter()
            with console.status("building the approximate index"):
                retrieve(questions[0], scope, RetrievalParams(RetrievalOptions(mode="vector", page_size=10)),
                         docstore=store, embedder=PrecomputedQuery(centers, 1), analyzer=ctx.analyzer,
                         active_versions=active_versions_fn(ctx))
            graph_s = time.perf_counter() - t0
            approx = measure(store, ctx, scope, questions, centers, table, "approximate")
            recall = statistics.mean(len(set(a) & set(e)) / max(1, len(e))
                                     for a, e in zip(approx["vector"], exact["vector"], strict=True))
            hybrid = statistics.mean(len(set(a) & set(e)) / max(1, len(e))
                                     for a, e in zip(approx["hybrid"], exact["hybrid"], strict=True))
            notes.append(f"approximate index (M={ann.connectivity}, ef_add={ann.expansion_add}, "
                         f"ef={expansion_for(ann, args.n)}) built in {graph_s:.0f} s on one thread; RSS with both "
                         f"{rss_mib():,.0f} MiB; vector-only recall@10 against exact {recall:.3f}, hybrid top 10 "
                         f"overlap {hybrid:.3f}")
            store.close()
        # last: the documents it writes stay in the index
        with console.status("timing document writes"):
            # a thousand documents (100,000 chunks each way) at a million: the writes that a merge or a grown
            # array lands in are rare, and a mean over fewer misses them
            notes.append(document_writes(ctx.docstore, ctx, tenant, kb_id, centers, rng,
                                         docs=min(1000, max(100, args.n // 1000))))
        ctx.close()
    console.print(table)
    for note in notes:
        console.print(note)


if __name__ == "__main__":
    main()
