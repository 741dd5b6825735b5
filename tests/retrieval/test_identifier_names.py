"""A file name that is an identifier is not a title (issue 26): nothing of it goes into a chunk's
vector or title terms, so a corpus named by hex digests scores as the same corpus named by numbers."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ragloom.nlp.names import telling_name
from ragloom.retrieval.rerank import rerank_text
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.search.retrieval import search
from tests.test_retrieval import _ingest

TEXTS = [
    "The Orion pump runs 450 hours between services and takes synthetic grease type K7.",
    "Sourdough starters are fed twice a day with equal weights of flour and water.",
    "Reset the AX-3000 router by holding the recessed button for ten seconds.",
    "Venus rotates backwards, so the Sun rises in the west there.",
]


@pytest.mark.parametrize("name", [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.txt",
    "9f1c2e3a-4b5d-4c6e-8f70-1a2b3c4d5e6f.pdf", "IMG_0042.jpg", "scan_000123.pdf", "0042.txt",
    "DEV_17.txt", "kq8ZxP2mT9vLw3Rb.pdf", "a3f9c2.md",
])
def test_identifier_names_are_not_titles(name: str) -> None:
    assert telling_name(name) is None


@pytest.mark.parametrize("name", ["orion-manual.pdf", "年度报告.docx", "HX-220 manual.pdf", "Q3-report.pdf"])
def test_telling_names_stay_titles(name: str) -> None:
    assert telling_name(name) == name


def test_a_corpus_named_by_hex_ids_scores_as_the_same_corpus_named_by_numbers(ctx, principal) -> None:
    hexed = {hashlib.sha256(t.encode()).hexdigest() + ".txt": t for t in TEXTS}
    numbered = {f"{i + 1}.txt": t for i, t in enumerate(TEXTS)}
    _ingest(ctx, principal, "hexed", hexed)
    _ingest(ctx, principal, "numbered", numbered)
    for question in ("how often does the pump need service", "how do I feed a starter", "router reset"):
        runs = [search(ctx, principal=principal, kb_ids=[kb], question=question,
                       options=RetrievalOptions(page_size=10, explain=True)) for kb in ("hexed", "numbered")]
        a, b = ([(c.record.content, c.vector_similarity, c.term_similarity, c.similarity, c.relevance)
                 for c in r.chunks] for r in runs)
        assert [x[0] for x in a] == [x[0] for x in b]
        assert np.allclose([x[1:4] for x in a], [x[1:4] for x in b], atol=1e-6)
        assert [x[4] for x in a] == pytest.approx([x[4] for x in b], abs=1e-6)
        for c in runs[0].chunks:
            assert not c.record.title_terms
            assert rerank_text(c.record) == c.record.content
