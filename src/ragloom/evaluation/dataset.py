"""Labelled retrieval sets: ``corpus.jsonl`` + ``queries.jsonl`` in one directory.

``corpus.jsonl``: one object per line, ``{"id": str, "text": str}`` or
``{"id": str, "path": str}`` (relative to the directory, or to ``corpus_root`` when one is given —
``ragloom eval --corpus DIR``, a set over documents kept elsewhere; any format the parsers
read); an empty text is allowed (the item is not ingested and can never be found).
``queries.jsonl``: ``{"id": str, "query": str, "relevant": [ids]}`` with an
optional ``"grades": {id: number}`` (graded nDCG; an id missing from ``grades``
has grade 1; a grade <= 0 is not relevant; by default a higher grade is more relevant, as in TREC —
``grade_order="lower"`` reads sets whose grade 1 is the most relevant, as Cranfield's codes 1-4, with
gain ``top + 1 - grade``) and an optional ``"answer": [str]`` — gold answers, short spans of the text
(``ragloom eval --answers``: an answer is right when it contains one of them after
normalisation; a single string is taken as a list of one). ``"unanswerable": true`` marks a question
the documents do not answer: its ``relevant`` is empty (or absent) and it has no gold answers; it is
left out of the retrieval scores and, with ``--answers``, is right when the answer is a refusal.
Other keys are ignored. Every problem is an
:class:`~ragloom.errors.InvalidRequestError` naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragloom.errors import InvalidRequestError

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"


@dataclass(frozen=True, slots=True)
class CorpusItem:
    """One passage or file. ``document_name`` is the name it has in the knowledge base."""

    id: str
    text: str | None = None
    path: Path | None = None

    @property
    def is_empty(self) -> bool:
        return self.path is None and not (self.text or "").strip()

    @property
    def document_name(self) -> str:
        return self.path.name if self.path is not None else f"{self.id}.txt"

    def data(self) -> bytes:
        """The bytes to upload."""
        if self.path is not None:
            return self.path.read_bytes()
        return (self.text or "").encode("utf-8")


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    id: str
    query: str
    relevant: frozenset[str]
    grades: dict[str, float] = field(default_factory=dict)
    answers: tuple[str, ...] = ()  # gold answers (``"answer"``), duplicates dropped; empty: none given
    unanswerable: bool = False  # the documents do not answer it: no relevant ids, a refusal is right

    def gain(self, doc_id: str) -> float:
        """The nDCG gain of a corpus id: its grade (1 when ungraded), 0 when not relevant or graded <= 0."""
        if doc_id not in self.relevant:
            return 0.0
        return max(self.grades.get(doc_id, 1.0), 0.0)


@dataclass(frozen=True, slots=True)
class Dataset:
    directory: Path
    corpus: list[CorpusItem]
    queries: list[LabelledQuery]

    def by_document_name(self) -> dict[str, str]:
        """Document name -> corpus id."""
        return {c.document_name: c.id for c in self.corpus}


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InvalidRequestError(f"{path}: file not found (an evaluation directory holds {CORPUS_FILE} "
                                  f"and {QUERIES_FILE})")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidRequestError(f"{path.name} line {no}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise InvalidRequestError(f"{path.name} line {no}: expected a JSON object")
            rows.append((no, obj))
    if not rows:
        raise InvalidRequestError(f"{path.name}: no entries")
    return rows


def _str_field(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and key == "id":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequestError(f"{where}: {key!r} must be a non-empty string")
    return value


def load_corpus(directory: Path, corpus_root: Path | None = None) -> list[CorpusItem]:
    """Read and check ``corpus.jsonl``: unique ids, exactly one of text/path, paths inside the directory
    (inside ``corpus_root`` when given: the paths are relative to it)."""
    path = directory / CORPUS_FILE
    items: list[CorpusItem] = []
    seen: dict[str, int] = {}
    names: dict[str, int] = {}
    base = directory if corpus_root is None else corpus_root
    if not base.is_dir():
        raise InvalidRequestError(f"{base}: corpus root is not a directory")
    root = base.resolve()
    leaves = "the evaluation directory" if corpus_root is None else f"the corpus root {corpus_root}"
    for no, obj in _lines(path):
        where = f"{CORPUS_FILE} line {no}"
        cid = _str_field(obj, "id", where)
        if "/" in cid or "\\" in cid:
            raise InvalidRequestError(f"{where}: id {cid!r} may not contain a slash")
        if cid in seen:
            raise InvalidRequestError(f"{where}: duplicate id {cid!r} (first on line {seen[cid]})")
        seen[cid] = no
        if ("text" in obj) == ("path" in obj):
            raise InvalidRequestError(f"{where}: give exactly one of 'text' and 'path'")
        if "text" in obj:
            if not isinstance(obj["text"], str):
                raise InvalidRequestError(f"{where}: 'text' must be a string")
            item = CorpusItem(id=cid, text=obj["text"])
        else:
            file = (root / _str_field(obj, "path", where)).resolve()
            if not file.is_relative_to(root):
                raise InvalidRequestError(f"{where}: path {obj['path']!r} leaves {leaves}")
            if not file.is_file():
                raise InvalidRequestError(f"{where}: file {obj['path']!r} not found")
            item = CorpusItem(id=cid, path=file)
        if item.document_name in names:
            raise InvalidRequestError(f"{where}: document name {item.document_name!r} is also used on line "
                                      f"{names[item.document_name]}")
        names[item.document_name] = no
        items.append(item)
    return items


def _grades(obj: dict[str, Any], where: str) -> dict[str, float]:
    raw = obj.get("grades", {})
    if not isinstance(raw, dict):
        raise InvalidRequestError(f"{where}: 'grades' must be an object of id -> number")
    out = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidRequestError(f"{where}: grade of {key!r} must be a number")
        out[str(key)] = float(value)
    return out


def _answers(obj: dict[str, Any], where: str) -> tuple[str, ...]:
    raw = obj.get("answer", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        raise InvalidRequestError(f"{where}: 'answer' must be a list of strings (gold answers)")
    return tuple(dict.fromkeys(a.strip() for a in raw if a.strip()))


def load_queries(directory: Path, corpus_ids: set[str]) -> list[LabelledQuery]:
    """Read and check ``queries.jsonl``: unique ids, a non-empty ``relevant`` list of known corpus ids
    (empty and no gold answers for an ``unanswerable`` question)."""
    path = directory / QUERIES_FILE
    out: list[LabelledQuery] = []
    seen: dict[str, int] = {}
    for no, obj in _lines(path):
        where = f"{QUERIES_FILE} line {no}"
        qid = _str_field(obj, "id", where)
        if qid in seen:
            raise InvalidRequestError(f"{where}: duplicate id {qid!r} (first on line {seen[qid]})")
        seen[qid] = no
        text = _str_field(obj, "query", where)
        unanswerable = obj.get("unanswerable", False)
        if not isinstance(unanswerable, bool):
            raise InvalidRequestError(f"{where}: 'unanswerable' must be true or false")
        rel = obj.get("relevant", [] if unanswerable else None)
        if unanswerable:
            if rel != []:
                raise InvalidRequestError(f"{where}: an unanswerable question has no 'relevant' ids")
            if obj.get("answer"):
                raise InvalidRequestError(f"{where}: an unanswerable question has no gold 'answer'")
        elif not isinstance(rel, list) or not rel:
            raise InvalidRequestError(f"{where}: 'relevant' must be a non-empty list of corpus ids")
        relevant = [str(r) for r in rel]
        unknown = sorted(set(relevant) - corpus_ids)
        if unknown:
            raise InvalidRequestError(f"{where}: relevant ids not in {CORPUS_FILE}: {', '.join(unknown[:5])}")
        out.append(LabelledQuery(id=qid, query=text, relevant=frozenset(relevant), grades=_grades(obj, where),
                                answers=_answers(obj, where), unanswerable=unanswerable))
    return out


GRADE_ORDERS = ("higher", "lower")


def _reverse_grades(queries: list[LabelledQuery]) -> list[LabelledQuery]:
    """Grades where 1 is the most relevant, turned into gains where higher is: ``top + 1 - grade``."""
    top = max((g for q in queries for g in q.grades.values() if g > 0), default=1.0)
    return [replace(q, grades={d: (top + 1 - g if g > 0 else g) for d, g in q.grades.items()}) for q in queries]


def load_dataset(directory: Path | str, *, max_queries: int | None = None,
                 max_corpus: int | None = None, grade_order: str = "higher",
                 corpus_root: Path | str | None = None) -> Dataset:
    """Load and validate a labelled set; ``max_corpus`` keeps the first N corpus items and only the
    queries whose relevant items are all among them, then ``max_queries`` the first N queries.
    ``corpus_root``: the directory the corpus's ``path`` entries are relative to (default: the set's)."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidRequestError(f"{root}: not a directory")
    if grade_order not in GRADE_ORDERS:
        raise InvalidRequestError(f"grade order: one of {list(GRADE_ORDERS)}")
    corpus = load_corpus(root, None if corpus_root is None else Path(corpus_root))
    queries = load_queries(root, {c.id for c in corpus})
    if grade_order == "lower":
        queries = _reverse_grades(queries)
    if max_corpus is not None:
        corpus = corpus[:max_corpus]
        kept = {c.id for c in corpus}
        queries = [q for q in queries if q.relevant <= kept]
        if not queries:
            raise InvalidRequestError(f"{root}: no query is answered by the first {max_corpus} corpus items")
    if max_queries is not None:
        queries = queries[:max_queries]
    return Dataset(directory=root, corpus=corpus, queries=queries)
