from __future__ import annotations

from dataclasses import asdict, fields

import numpy as np

from ragloom.dataflow import ChunkRecord
from ragloom.nlp import Analyzer, ChunkTerms, analyze_chunk


def test_analyze_chunk_fields(analyzer: Analyzer) -> None:
    terms = analyze_chunk(
        analyzer,
        "中华人民共和国成立于1949年。Running shoes cost $99.",
        title="历史 History",
        important_keywords=["建国", "  Founding Date ", "建国"],
        questions=["新中国是哪一年成立的？"],
    )
    assert terms.content_terms == analyzer.tokenize("中华人民共和国成立于1949年。Running shoes cost $99.")
    assert terms.content_fine_terms == analyzer.fine_grained(terms.content_terms)
    assert "中华人民共和国" in terms.content_terms and "中华" in terms.content_fine_terms
    assert terms.title_terms == ["历史", "histori"]
    assert terms.title_fine_terms == ["历史", "histori"]
    assert terms.important_keywords == ["建国", "founding date"]
    assert terms.important_terms == ["建国", "found", "date"]
    assert "成立" in terms.question_terms and "新" in terms.question_terms


def test_chunk_terms_are_chunk_record_fields(analyzer: Analyzer) -> None:
    names = {f.name for f in fields(ChunkTerms)}
    assert names <= {f.name for f in fields(ChunkRecord)}
    terms = analyze_chunk(analyzer, "text", title="title")
    record = ChunkRecord(
        id="c1",
        kb_id="kb",
        doc_id="d",
        version_id="v",
        content="text",
        vector=np.zeros(4, dtype=np.float32),
        **asdict(terms),
    )
    assert record.content_terms == ["text"] and record.title_terms == ["titl"]


def test_empty_chunk(analyzer: Analyzer) -> None:
    assert analyze_chunk(analyzer, "") == ChunkTerms()
