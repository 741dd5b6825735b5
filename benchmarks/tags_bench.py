"""Cost of tag features (REFERENCE §5.5): the tag prior, tagging a chunk, tagging a question.

    .venv/bin/python benchmarks/tags_bench.py --rows 2000 --queries 200

Ingests a generated tag set of ``--rows`` rows (12 random words, 2 of 200 tags)
through the real pipeline, then times: the tag prior of the set (cold = read
every row, cached = DB lookup only), tagging one 80-word chunk (what ingestion
adds per chunk), and the question tags the search service computes per query.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import tempfile
import time
from pathlib import Path

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.documents import catalog
from ragloom.service.search.tags import question_tags, tagger_for
from ragloom.worker import run_until


def tag_file(rows: int, rng: random.Random, words: list[str]) -> bytes:
    tags = [f"tag{i}" for i in range(200)]
    buf = io.StringIO()
    writer = csv.writer(buf)
    for _ in range(rows):
        writer.writerow([" ".join(rng.choices(words, k=12)), ",".join(rng.sample(tags, 2))])
    return buf.getvalue().encode()


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)] + ["router", "network", "printer", "firmware", "tea", "bread"]
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(Settings(home=Path(tmp) / "home", _env_file=None))
        ctx.init_storage()
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
            tag_kb = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
                name="tags", chunk_method="tag")).id
            docs = catalog.add_documents(ctx, s, principal=principal, kb_id=tag_kb, uploads=[
                catalog.Upload(filename="tags.csv", data=tag_file(args.rows, rng, words))])
        started = time.perf_counter()
        run_until(ctx, lambda: _done(ctx, docs[0].id), poll=0.05)
        print(f"ingest a {args.rows}-row tag set: {time.perf_counter() - started:.1f} s (embedding included)")
        for label in ("cold", "cached"):
            started = time.perf_counter()
            tagger = tagger_for(ctx, tenant_id=principal.tenant_id, kb_ids=[tag_kb], topn=3)
            print(f"tag prior ({label}): {ms(time.perf_counter() - started)} ms")
        assert tagger is not None
        texts = [" ".join(rng.choices(words, k=80)) for _ in range(args.queries)]
        started = time.perf_counter()
        for text in texts:
            tagger.tag(text)
        print(f"tag one 80-word chunk: {ms((time.perf_counter() - started) / len(texts))} ms")
        with ctx.db.session() as s:
            notes = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
                name="notes", tag_kb_ids=[tag_kb]))
        times = []
        for _ in range(args.queries):
            question = " ".join(rng.choices(words, k=8))
            started = time.perf_counter()
            question_tags(ctx, [notes], question)
            times.append(time.perf_counter() - started)
        times.sort()
        print(f"question tags: p50 {ms(times[len(times) // 2])} ms, p95 {ms(times[int(len(times) * 0.95)])} ms")
        ctx.close()


def _done(ctx: Context, doc_id: str) -> bool:
    from ragloom.db.models import Document

    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        return doc is not None and doc.status in ("done", "failed")


if __name__ == "__main__":
    main()
