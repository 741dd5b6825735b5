"""The whole retrieval path at scale, query embedding excluded.

    .venv/bin/python benchmarks/retrieval_bench.py --n 100000 --queries 200

Builds ``--n`` chunks of English-like text (a Zipf vocabulary of real words,
analysed by ragloom's own analyzer) with random unit vectors in one knowledge
base of ``--n / 40`` documents whose versions are active in the metadata DB,
then times ``ragloom.retrieval.retriever.retrieve`` — query analysis with IDF
from the index, the engine call, prune against the DB, token similarity,
fusion, threshold and page — with a precomputed query vector, for hybrid,
keyword-only and vector-only, with and without explain. Goal (issue 4):
hybrid p50 ≤ 30 ms, p95 ≤ 80 ms at 100k chunks.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import Document, DocumentVersion, KnowledgeBase
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
    """An embedder stand-in whose query vectors cost nothing: the benchmark excludes query embedding."""

    name = "bench"

    def __init__(self, dim: int, seed: int) -> None:
        self.dim = dim
        self._rng = np.random.default_rng(seed)

    def embed_query(self, text: str) -> np.ndarray:
        v = self._rng.normal(size=self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_passages(self, texts):  # noqa: ANN001, ANN201 - not used
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def build(ctx: Context, tenant: str, n: int, dim: int, rng: np.random.Generator) -> str:
    probs = 1.0 / np.arange(1, len(VOCAB) + 1) ** 1.0
    probs /= probs.sum()
    docs = max(1, n // 40)
    with ctx.db.session() as s:
        kb = KnowledgeBase(tenant_id=tenant, name="bench", embedding_model="bench", embedding_dim=dim)
        s.add(kb)
        s.flush()
        kb_id = kb.id
        for d in range(docs):
            doc = Document(id=f"d{d:06d}", kb_id=kb_id, tenant_id=tenant, name=f"doc{d}.pdf", status="done")
            s.add(doc)
            s.add(DocumentVersion(id=f"v{d:06d}", document_id=doc.id, number=1, content_hash="0" * 64, size=1,
                                  status="ready"))
            doc.active_version_id = doc.latest_version_id = f"v{d:06d}"
    ctx.docstore.create_index(tenant, dim)
    batch: list[ChunkRecord] = []
    for i in track(range(n), description=f"indexing {n} chunks"):
        text = " ".join(rng.choice(VOCAB, size=90, p=probs))
        terms = analyze_chunk(ctx.analyzer, text, title=f"doc{i // 40}")
        v = rng.normal(size=dim).astype(np.float32)
        d = i // 40
        batch.append(ChunkRecord(
            id=f"c{i}", kb_id=kb_id, doc_id=f"d{d:06d}", version_id=f"v{d:06d}", content=text,
            vector=v / np.linalg.norm(v), document_name=f"doc{d}.pdf", content_terms=terms.content_terms,
            content_fine_terms=terms.content_fine_terms, title_terms=terms.title_terms, order=i % 40,
            positions=[(1 + (i % 40) // 4, 50.0, 500.0, 100.0, 140.0)]))
        if len(batch) == 5000:
            ctx.docstore.upsert(tenant, batch)
            batch = []
    if batch:
        ctx.docstore.upsert(tenant, batch)
    return kb_id


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(Settings(home=Path(tmp) / "home", _env_file=None))
        ctx.init_storage()
        with ctx.db.session() as s:
            tenant = identity.bootstrap(s).principal.tenant_id
        kb_id = build(ctx, tenant, args.n, 384, rng)
        scope = Scope(tenant_id=tenant, kb_ids=[kb_id], embedding_model="bench")
        embedder = PrecomputedQuery(384, 9)
        mid = VOCAB[20:3000]  # question words from the common-but-not-stop-word range
        questions = [" ".join(rng.choice(mid, size=int(rng.integers(4, 9)))) for _ in range(args.queries)]
        table = Table(title=f"retrieve() at {args.n} chunks, {args.queries} queries, query embedding excluded")
        for col in ("mode", "p50 ms", "p95 ms", "mean results"):
            table.add_column(col, justify="right")
        for mode, explain in (("hybrid", False), ("keyword", False), ("vector", False), ("hybrid", True)):
            params = RetrievalParams(RetrievalOptions(mode=mode, page_size=6))
            for q in questions[:5]:  # warm up
                retrieve(q, scope, params, docstore=ctx.docstore, embedder=embedder, analyzer=ctx.analyzer,
                         active_versions=active_versions_fn(ctx))
            lat, found = [], []
            for q in questions:
                t = time.perf_counter()
                res = retrieve(q, scope, params, docstore=ctx.docstore, embedder=embedder, analyzer=ctx.analyzer,
                               active_versions=active_versions_fn(ctx), explain=explain)
                lat.append((time.perf_counter() - t) * 1000)
                found.append(len(res.chunks))
            table.add_row(mode + (" + explain" if explain else ""), f"{pct(lat, 50):.1f}", f"{pct(lat, 95):.1f}",
                          f"{statistics.mean(found):.1f}")
        ctx.close()
    console.print(table)


if __name__ == "__main__":
    main()
