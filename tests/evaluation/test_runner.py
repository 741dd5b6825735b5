"""``run_eval`` end to end on a tiny labelled set, plus the ranking helpers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.db.models import KnowledgeBase
from ragloom.errors import InvalidRequestError, MissingDependencyError
from ragloom.evaluation import EvalReport, ModeResult, load_dataset, run_eval, shipped_set
from ragloom.evaluation.runner import rank_ids
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog

# obvious answers: each query shares its key words with exactly one passage
TINY = ["e10", "e11", "e12", "e13", "e14", "e16", "e26", "e27", "e35", "e36"]
TINY_QUERIES = ["en-q08", "en-q11", "en-q22", "en-q29"]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    src = shipped_set("en")
    keep_c = [line for line in (src / "corpus.jsonl").read_text().splitlines() if json.loads(line)["id"] in TINY]
    keep_q = [line for line in (src / "queries.jsonl").read_text().splitlines()
              if json.loads(line)["id"] in TINY_QUERIES]
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "corpus.jsonl").write_text("\n".join(keep_c) + "\n")
    (tmp_path / "tiny" / "queries.jsonl").write_text("\n".join(keep_q) + "\n")
    return tmp_path / "tiny"


def _cand(name: str, content: str = "", term: float = 0.0) -> Candidate:
    rec = ChunkRecord(id=name + content, kb_id="k", doc_id=name, version_id="v", content=content,
                      vector=np.zeros(4, dtype=np.float32), document_name=name)
    return Candidate(record=rec, term_similarity=term)


def test_rank_ids_dedupes_chunks_of_one_document_and_marks_strangers() -> None:
    names = {"a.txt": "a", "b.txt": "b"}
    cands = [_cand("a.txt"), _cand("other.pdf"), _cand("a.txt", "2"), _cand("b.txt")]
    assert rank_ids(cands, names, 10) == ["a", None, "b"]
    assert rank_ids(cands, names, 2) == ["a", None]


def test_run_eval_end_to_end(ctx, principal, tiny: Path, tmp_path: Path) -> None:
    seen: list[str] = []
    report = run_eval(ctx, principal, tiny, top_k=5, progress=lambda stage, done, total: seen.append(stage))
    assert [m.name for m in report.modes] == ["keyword", "vector", "hybrid", "hybrid-weighted"]
    assert "hybrid+rerank skipped: no reranker configured" in report.notes
    assert {"upload", "ingest", "query"} <= set(seen)
    assert report.corpus_size == len(TINY) and report.query_count == len(TINY_QUERIES)
    assert report.candidate_window >= 5 and not report.graded
    hybrid = report.mode("hybrid")
    assert hybrid.metrics["hit@1"] == 1.0 and hybrid.metrics["nDCG@5"] == pytest.approx(1.0)
    assert set(hybrid.metrics) == {"hit@1", "hit@5", "MRR@5", "nDCG@5", "Recall@5"}
    assert all(m.metrics["hit@5"] == 1.0 for m in report.modes)
    assert 0 < hybrid.latency_p50_ms <= hybrid.latency_p95_ms
    assert all(len(o.ranked) <= 5 for m in report.modes for o in m.outcomes)
    data = json.loads(json.dumps(report.to_dict(per_query=True)))
    assert data["modes"][2]["mode"] == "hybrid" and len(data["modes"][2]["per_query"]) == len(TINY_QUERIES)
    assert report.table().row_count == 4
    with ctx.db.session() as s:  # the scratch knowledge base is gone
        assert s.get(KnowledgeBase, report.knowledge_base) is None
        assert all(kb.name != report.knowledge_base for kb in knowledgebases.list_visible(s, principal=principal))


class Contrarian:
    """A stand-in rerank model (the Reranker protocol): high scores for passages sharing no word with the query."""

    name = "contrarian"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def score(self, query: str, documents: list[str]) -> np.ndarray:
        self.calls.append(len(documents))
        words = {w.strip("?,.").lower() for w in query.split()}
        return np.array([0.0 if words & set(d.lower().split()) else 1.0 for d in documents])


def test_reranker_mode_and_existing_kb(ctx, principal, tiny: Path) -> None:
    kept = run_eval(ctx, principal, tiny, modes=["keyword"], keep=True)  # a knowledge base holding the corpus
    assert f"scratch knowledge base kept: {kept.knowledge_base}" in kept.notes
    with ctx.db.session() as s:
        before = {d.id for d in catalog.list_documents(s, principal=principal, kb_id=kept.knowledge_base)[0]}
    model = Contrarian()
    first = run_eval(ctx, principal, tiny, kb=kept.knowledge_base, modes=["hybrid", "hybrid+rerank"],
                     reranker=model)
    assert [m.name for m in first.modes] == ["hybrid", "hybrid+rerank"] and not first.notes
    assert len(model.calls) == len(TINY_QUERIES) + 1 and all(n >= len(TINY) for n in model.calls)  # whole window
    assert first.mode("hybrid+rerank").metrics["hit@1"] < first.mode("hybrid").metrics["hit@1"]
    assert first.knowledge_base == kept.knowledge_base and not first.scratch
    with ctx.db.session() as s:  # measured as it stands: no document added, none re-parsed
        docs, total = catalog.list_documents(s, principal=principal, kb_id=kept.knowledge_base)
        assert total == len(TINY) and {d.id for d in docs} == before and all(d.status == "done" for d in docs)
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="mine"))
    empty = run_eval(ctx, principal, tiny, kb="mine", modes=["keyword"])
    assert empty.mode("keyword").metrics["hit@1"] == 0.0
    assert any(n.startswith(f"{len(TINY)} corpus documents are not in mine") for n in empty.notes), empty.notes
    with pytest.raises(InvalidRequestError, match="scratch knowledge base only"):
        run_eval(ctx, principal, tiny, kb="mine", modes=["hybrid"], enrich=["kg"])
    with ctx.db.session() as s:
        assert catalog.list_documents(s, principal=principal, kb_id="mine")[1] == 0


def _report() -> EvalReport:
    modes = [ModeResult(name=n, metrics={"hit@1": v, "nDCG@10": v / 2}, latency_p50_ms=10 * v,
                        latency_p95_ms=20 * v, queries=3) for n, v in (("keyword", 0.5), ("hybrid", 0.9))]
    return EvalReport(dataset="demo", knowledge_base="kb", scratch=True, corpus_size=5, query_count=3, top_k=10,
                      candidate_window=70, graded=False, modes=modes, notes=["a note"])


def test_report_table_and_plot(tmp_path: Path) -> None:
    report = _report()
    assert report.table().row_count == 2 and report.to_dict()["modes"][1]["hit@1"] == 0.9
    pytest.importorskip("matplotlib")
    out = report.plot(tmp_path / "chart.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if it were not installed
    with pytest.raises(MissingDependencyError, match=r"ragloom\[plot\]"):
        _report().plot(tmp_path / "chart.png")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"modes": ["fuzzy"]}, "unknown mode"),
    ({"modes": []}, "at least one mode"),
    ({"top_k": 0}, "top_k"),
    ({"modes": ["hybrid+rerank"]}, "needs a reranker"),
])
def test_bad_arguments(ctx, principal, tiny: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        run_eval(ctx, principal, tiny, **kwargs)


def test_tiny_fixture_is_consistent(tiny: Path) -> None:
    ds = load_dataset(tiny)
    assert len(ds.corpus) == len(TINY) and len(ds.queries) == len(TINY_QUERIES)


def test_plot_without_matplotlib_fails_before_any_work(ctx, principal, tiny: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragloom\[plot\]'"):
        run_eval(ctx, principal, tiny, modes=["keyword"], plot=tmp_path / "chart.png")
    with ctx.db.session() as s:
        assert not knowledgebases.list_visible(s, principal=principal)  # nothing was ingested
