"""Keyword-mode ranking on a small generated corpus, through the real analyser, query builder and
tantivy engine (no embeddings).

Each test reproduces one way the full-text query used to lose ranking quality against plain BM25
on long English questions (Cranfield nDCG@10 0.290 against 0.331):

* the 30 % minimum-should-match gate dropped relevant rows holding only the question's few rare
  terms, however well BM25 scored them;
* the adjacent-pair phrases, boosted ``2 × max(w_i, w_j)`` on top of a phrase score that already
  sums both terms' idf, let a pair of common words outweigh the rare terms;
* a hyphenated compound in the question (``boundary-layer``) stayed one term, matching only rows
  that hyphenate it the same way.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from ragloom.dataflow import ChunkRecord
from ragloom.docstore.base import Filters, SearchRequest
from ragloom.docstore.tantivy_store import TantivyDocStore
from ragloom.nlp import Analyzer, TermWeigher, analyze_chunk, build_fulltext_query

FILLER = ["pressure", "wing", "flow", "speed", "high", "aircraft", "data", "results", "method", "test", "model",
          "body", "surface", "wind", "tunnel", "number", "measured", "theory", "shown", "obtained", "values",
          "effect", "range", "given"]


def _filler_doc(rng: random.Random, n: int = 30) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(n)) + " ."


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _search(tmp_path: Path, analyzer: Analyzer, docs: dict[str, str], question: str, k: int = 10) -> list[str]:
    """Ids of the ``k`` best rows by full-text score, as keyword mode ranks them (retry included)."""
    store = TantivyDocStore(tmp_path / "index")
    vec = np.array([1.0, 0.0], dtype=np.float32)
    records = []
    for id_, text in docs.items():
        terms = analyze_chunk(analyzer, text)
        records.append(ChunkRecord(id=id_, kb_id="kb", doc_id=id_, version_id="v", content=text, vector=vec,
                                   content_terms=terms.content_terms, content_fine_terms=terms.content_fine_terms))
    store.upsert("t", records)
    weigher = TermWeigher(analyzer, doc_freq=lambda ts: store.doc_freq("t", "content_terms", ts))
    qa = build_fulltext_query(question, analyzer, weigher)
    req = SearchRequest(filters=Filters(kb_ids=["kb"]), text=qa.fulltext, text_top_k=k)
    hits = store.search("t", req)
    if not hits:  # the retriever's retry
        req.text = qa.with_min_match(0.1).fulltext
        hits = store.search("t", req)
    store.close()
    return [h.record.id for h in sorted(hits, key=lambda h: -(h.text_score or 0.0))]


def test_long_question_recalls_a_row_holding_only_its_rare_terms(tmp_path: Path, analyzer: Analyzer) -> None:
    rng = random.Random(1)
    docs = {f"f{i}": _filler_doc(rng) for i in range(150)}
    # 2 of the question's 10 terms, both rare: below a 30 % gate (3 terms), first by BM25
    docs["rel"] = "flutter of aeroelastic models in the wind tunnel : aeroelastic scaling of the models ."
    question = ("what similarity laws must be obeyed when constructing aeroelastic models "
                "of heated high speed aircraft .")
    ranked = _search(tmp_path, analyzer, docs, question)
    assert ranked[0] == "rel", ranked


def test_an_adjacent_pair_does_not_outweigh_more_of_the_question(tmp_path: Path, analyzer: Analyzer) -> None:
    rng = random.Random(2)
    docs = {f"f{i}": _filler_doc(rng) for i in range(150)}
    # two rare terms of the question, adjacent as in it
    docs["pair"] = "the swept panels were tested in the wind tunnel ."
    # three rare terms of the question, none next to another
    docs["spread"] = "flutter was seen in the tunnel ; damping came from a cavity behind it ."
    question = "what flutter boundaries were measured for swept panels with cavity damping ?"
    ranked = _search(tmp_path, analyzer, docs, question)
    assert ranked[:2] == ["spread", "pair"], ranked


def test_hyphenated_question_term_matches_the_words_written_apart(tmp_path: Path, analyzer: Analyzer) -> None:
    rng = random.Random(3)
    docs = {f"f{i}": _filler_doc(rng) for i in range(150)}
    # the same words, one more of the question's terms (cone), the compound written apart
    docs["apart"] = "boundary layer transition on a cone was observed ."
    docs["hyphen"] = "boundary-layer transition was observed in these tests ."
    question = "what is known about boundary-layer transition on a cone at supersonic speed ?"
    ranked = _search(tmp_path, analyzer, docs, question)
    assert ranked[:2] == ["apart", "hyphen"], ranked
