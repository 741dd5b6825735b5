"""`ragloom eval` from the command line, on a tiny labelled set written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import ragloom

pytestmark = pytest.mark.slow


def test_eval_prints_every_mode_side_by_side(tmp_path: Path) -> None:
    data = tmp_path / "set"
    data.mkdir()
    corpus = [
        {"id": "p1", "text": "The lighthouse on Skerry Point was automated in 1987 and its keeper retired."},
        {"id": "p2", "text": "Sea kayaks should be rinsed with fresh water after every trip in salt water."},
        {"id": "p3", "text": "The ferry timetable changes in October, when the winter schedule begins."},
    ]
    queries = [
        {"id": "q1", "query": "when was the Skerry Point lighthouse automated", "relevant": ["p1"]},
        {"id": "q2", "query": "how to clean a kayak after salt water", "relevant": ["p2"]},
    ]
    (data / "corpus.jsonl").write_text("\n".join(json.dumps(c) for c in corpus))
    (data / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    out = json.loads(ragloom(tmp_path / "home", "--json", "eval", str(data), "--mode", "keyword", "--mode", "vector",
                             "--mode", "hybrid").stdout)
    text = json.dumps(out)
    for mode in ("keyword", "vector", "hybrid"):
        assert mode in text
    assert "ndcg" in text.lower() and "mrr" in text.lower()
    bad = ragloom(tmp_path / "home", "eval", str(tmp_path / "missing"), check=False)
    assert bad.returncode != 0


def test_eval_enrich_prints_each_enrichment_beside_hybrid(tmp_path: Path) -> None:
    out = json.loads(ragloom(tmp_path / "home", "--json", "eval", "builtin:multidoc", "--mode", "hybrid",
                             "--corpus-limit", "6", "--enrich", "kg").stdout)
    (kg,) = out["enrichments"]
    assert kg["enrichment"] == "kg" and kg["mode"] == "hybrid +kg" and kg["llm_calls"] == 0
    assert kg["Recall@10"] >= out["modes"][0]["Recall@10"]
    bad = ragloom(tmp_path / "home", "eval", "builtin:multidoc", "--enrich", "summaries", check=False)
    assert bad.returncode != 0 and "unknown enrichment" in bad.stdout + bad.stderr
