"""Loading and checking labelled sets; the shipped sets are well formed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragloom.errors import InvalidRequestError
from ragloom.evaluation import load_dataset, shipped_set


def _write(d: Path, corpus: list, queries: list) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (d / name).write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return d


GOOD_CORPUS = [{"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}]
GOOD_QUERIES = [{"id": "q1", "query": "alpha?", "relevant": ["a"]}]


def test_loads_text_and_path_items(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text("# Manual\n\nHello.\n")
    corpus = [*GOOD_CORPUS, {"id": 7, "path": "docs/manual.md"}, {"id": "blank", "text": ""}]
    queries = [{"id": "q1", "query": "hello", "relevant": ["7", "a"], "grades": {"7": 2}, "extra": 1}]
    ds = load_dataset(_write(tmp_path, corpus, ["", *queries]))
    assert [c.id for c in ds.corpus] == ["a", "b", "7", "blank"]
    assert ds.by_document_name() == {"a.txt": "a", "b.txt": "b", "manual.md": "7", "blank.txt": "blank"}
    assert ds.corpus[2].data().startswith(b"# Manual") and ds.corpus[3].is_empty
    assert ds.queries[0].relevant == {"7", "a"} and ds.queries[0].grades == {"7": 2.0}


def test_grades_where_one_is_the_most_relevant_are_turned_into_gains(tmp_path: Path) -> None:
    """Cranfield's codes: 1 a complete answer ... 4 of minimal interest, -1 not relevant."""
    queries = [{"id": "q1", "query": "x", "relevant": ["a", "b"], "grades": {"a": 1, "b": 4}},
               {"id": "q2", "query": "y", "relevant": ["a", "b"], "grades": {"a": 3, "b": -1}}]
    folder = _write(tmp_path, GOOD_CORPUS, queries)
    higher = load_dataset(folder).queries
    assert higher[0].gain("a") == 1.0 and higher[0].gain("b") == 4.0
    lower = load_dataset(folder, grade_order="lower").queries
    assert lower[0].gain("a") == 4.0 and lower[0].gain("b") == 1.0
    assert lower[1].gain("a") == 2.0 and lower[1].gain("b") == 0.0
    with pytest.raises(InvalidRequestError, match="grade order"):
        load_dataset(folder, grade_order="sideways")


@pytest.mark.parametrize(("corpus", "queries", "message"), [
    (["{not json", *GOOD_CORPUS], GOOD_QUERIES, "corpus.jsonl line 1: not valid JSON"),
    ([*GOOD_CORPUS, {"text": "no id"}], GOOD_QUERIES, "corpus.jsonl line 3: 'id' must be a non-empty string"),
    ([*GOOD_CORPUS, {"id": "a", "text": "again"}], GOOD_QUERIES, "line 3: duplicate id 'a' (first on line 1)"),
    ([{"id": "a", "text": "x", "path": "y"}], GOOD_QUERIES, "line 1: give exactly one of 'text' and 'path'"),
    ([{"id": "a/b", "text": "x"}], GOOD_QUERIES, "may not contain a slash"),
    ([{"id": "a", "path": "../outside.txt"}], GOOD_QUERIES, "leaves the evaluation directory"),
    ([{"id": "a", "path": "missing.pdf"}], GOOD_QUERIES, "file 'missing.pdf' not found"),
    ([{"id": "a", "text": "x"}, {"id": "a.txt", "path": "a.txt"}], GOOD_QUERIES, "document name 'a.txt'"),
    (GOOD_CORPUS, [{"id": "q", "query": "x", "relevant": []}], "queries.jsonl line 1: 'relevant' must be"),
    (GOOD_CORPUS, [{"id": "q", "query": "x", "relevant": ["zz"]}], "line 1: relevant ids not in corpus.jsonl: zz"),
    (GOOD_CORPUS, [*GOOD_QUERIES, {"id": "q1", "query": "x", "relevant": ["a"]}], "line 2: duplicate id 'q1'"),
    (GOOD_CORPUS, [{"id": "q", "query": " ", "relevant": ["a"]}], "'query' must be a non-empty string"),
    (GOOD_CORPUS, [{"id": "q", "query": "x", "relevant": ["a"], "grades": {"a": "high"}}], "grade of 'a'"),
    (GOOD_CORPUS, [[1, 2]], "queries.jsonl line 1: expected a JSON object"),
    (GOOD_CORPUS, [], "queries.jsonl: no entries"),
])
def test_malformed_sets_name_file_and_line(tmp_path: Path, corpus: list, queries: list, message: str) -> None:
    directory = _write(tmp_path / "set", corpus, queries)
    (directory / "a.txt").write_text("x")
    with pytest.raises(InvalidRequestError, match=re.escape(message)):
        load_dataset(directory)


def test_missing_files_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="not a directory"):
        load_dataset(tmp_path / "nope")
    with pytest.raises(InvalidRequestError, match="corpus.jsonl: file not found"):
        load_dataset(tmp_path)


def test_max_queries_keeps_the_first(tmp_path: Path) -> None:
    queries = [{"id": f"q{i}", "query": "alpha", "relevant": ["a"]} for i in range(5)]
    ds = load_dataset(_write(tmp_path, GOOD_CORPUS, queries), max_queries=2)
    assert [q.id for q in ds.queries] == ["q0", "q1"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_shipped_sets_are_well_formed(language: str) -> None:
    ds = load_dataset(shipped_set(language))
    assert 40 <= len(ds.corpus) <= 60 and 25 <= len(ds.queries) <= 40
    relevant = set().union(*(q.relevant for q in ds.queries))
    assert len(set(c.id for c in ds.corpus) - relevant) >= 8  # passages no query wants: pure distractors
    assert all(c.text and len(c.text) > 25 for c in ds.corpus)
    assert all(c.id not in q.query for c in ds.corpus for q in ds.queries)  # ids never leak into questions


def test_unknown_shipped_language() -> None:
    with pytest.raises(ValueError, match="fr"):
        shipped_set("fr")


def test_a_corpus_root_holds_the_documents_the_set_names_by_path(tmp_path: Path) -> None:
    """``corpus_root`` (``ragloom eval --corpus``): the set names documents kept elsewhere, by path under the root."""
    root = tmp_path / "shared" / "corpus"
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "annual.md").write_text("# Annual report\n\nRevenue grew.\n")
    (tmp_path / "secret.md").write_text("outside")
    corpus = [{"id": "annual", "path": "reports/annual.md"}, *GOOD_CORPUS]
    folder = _write(tmp_path / "set", corpus, GOOD_QUERIES)
    ds = load_dataset(folder, corpus_root=root)
    assert ds.corpus[0].path == (root / "reports" / "annual.md").resolve()
    assert ds.by_document_name()["annual.md"] == "annual"
    with pytest.raises(InvalidRequestError, match="file 'reports/annual.md' not found"):
        load_dataset(folder)  # without the root, paths are the set folder's
    _write(tmp_path / "escape", [{"id": "s", "path": "../../secret.md"}],
           [{"id": "q", "query": "x", "relevant": ["s"]}])
    with pytest.raises(InvalidRequestError, match="leaves the corpus root"):
        load_dataset(tmp_path / "escape", corpus_root=root)
    with pytest.raises(InvalidRequestError, match="corpus root is not a directory"):
        load_dataset(folder, corpus_root=tmp_path / "missing")


def test_unanswerable_questions_have_no_relevant_ids_and_no_gold_answers(tmp_path: Path) -> None:
    queries = [*GOOD_QUERIES, {"id": "q2", "query": "warranty?", "unanswerable": True},
               {"id": "q3", "query": "refund?", "relevant": [], "unanswerable": True}]
    ds = load_dataset(_write(tmp_path / "ok", GOOD_CORPUS, queries))
    assert [(q.id, q.unanswerable, q.relevant) for q in ds.queries] == [
        ("q1", False, frozenset({"a"})), ("q2", True, frozenset()), ("q3", True, frozenset())]
    for i, (bad, message) in enumerate([
        ({"relevant": ["a"]}, "an unanswerable question has no 'relevant' ids"),
        ({"answer": ["x"]}, "an unanswerable question has no gold 'answer'"),
        ({"unanswerable": "yes"}, "'unanswerable' must be true or false"),
    ]):
        row = {"id": "q", "query": "x", "unanswerable": True, **bad}
        with pytest.raises(InvalidRequestError, match=re.escape(message)):
            load_dataset(_write(tmp_path / f"bad{i}", GOOD_CORPUS, [row]))
    with pytest.raises(InvalidRequestError, match="'relevant' must be a non-empty list"):
        load_dataset(_write(tmp_path / "plain", GOOD_CORPUS, [{"id": "q", "query": "x", "relevant": []}]))
