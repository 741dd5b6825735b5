"""The knowledge graph's data types: :class:`Entity`, :class:`Relation`, :class:`Subgraph` (one document's),
:class:`Community` with its :class:`Finding` s, and the extraction counters :class:`ExtractionStats`.

Every type turns into plain JSON values with ``to_dict`` and back with ``from_dict`` (unknown keys are
ignored, missing ones take their defaults), so a job can store a document's subgraph, the merged graph
(:class:`ragloom.knowledge.graph.merged.Graph`) and the communities wherever it likes.

**Names and keys.** An entity is known by its *name* as written (``"Orion Pump"``, or upper-cased
``"ORION PUMP"`` when a chat model extracted it, as the reference does); two names are the same entity
when their :func:`entity_key` (NFKC, whitespace collapsed, surrounding quotes and punctuation dropped,
case-folded) is equal. Relations are undirected: :meth:`Relation.pair` orders the endpoints' keys.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

ChunkText = tuple[str, str, str]
"""A chunk given to an extractor: ``(chunk_id, doc_id, text)``."""

ProgressFn = Callable[[int, int], None]
"""``progress(done, total)``: called as work units finish; it may raise (e.g. a cancellation) to stop."""

GENERIC_TYPE = "ENTITY"
"""The type of an entity whose kind is not known."""

DESCRIPTION_SEP = "\n"
"""Joins the distinct descriptions of one entity or relation."""

_PUNCT = "\\s\"'`“”‘’«»()\\[\\]{}<>*#:;,!?。，；：！？、"
_EDGE_PUNCT = re.compile(f"^[{_PUNCT}.]+|[{_PUNCT}]+$")  # a trailing "." is handled apart

_INITIALS = re.compile(r"(?:^|[\s(])(?:\w\.){2,}$")


def canonical_name(name: str) -> str:
    """``name`` as stored: NFKC, whitespace collapsed, surrounding quotes, brackets and punctuation removed
    (a trailing ``.`` is kept only after dotted initials, so ``Acme Inc.`` → ``Acme Inc``, ``U.S.`` stays)."""
    text = " ".join(unicodedata.normalize("NFKC", name).split())
    text = _EDGE_PUNCT.sub("", text)
    while text.endswith(".") and not _INITIALS.search(text):
        text = text[:-1].rstrip()
    return text


@functools.lru_cache(maxsize=1 << 18)
def entity_key(name: str) -> str:
    """The identity of an entity name: :func:`canonical_name`, case-folded."""
    return canonical_name(name).casefold()


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _kwargs(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass(slots=True)
class Entity:
    """A thing the documents speak of.

    ``description`` joins the distinct descriptions with :data:`DESCRIPTION_SEP` (or is a chat model's
    summary of them); ``weight`` counts mentions (offline) or records (chat model); ``aliases`` are
    the other names merged into this one (merged graph only); ``pagerank`` is set on the merged graph
    by :func:`ragloom.knowledge.graph.rank.compute_pagerank`.
    """

    name: str
    type: str = GENERIC_TYPE
    description: str = ""
    source_chunk_ids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    weight: float = 1.0
    aliases: list[str] = field(default_factory=list)
    pagerank: float = 0.0

    @property
    def key(self) -> str:
        return entity_key(self.name)

    @property
    def names(self) -> list[str]:
        """The name and the aliases."""
        return [self.name, *self.aliases]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "description": self.description,
                "source_chunk_ids": list(self.source_chunk_ids), "doc_ids": list(self.doc_ids),
                "weight": self.weight, "aliases": list(self.aliases), "pagerank": self.pagerank}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entity:
        out = cls(**_kwargs(cls, data))
        out.source_chunk_ids, out.doc_ids, out.aliases = (
            list(out.source_chunk_ids), list(out.doc_ids), list(out.aliases))
        out.weight, out.pagerank = float(out.weight), float(out.pagerank)
        return out


@dataclass(slots=True)
class Relation:
    """An undirected link between two entities (``source`` and ``target`` are entity names, in
    :func:`entity_key` order). ``weight`` is the summed strength (chat model) or co-occurrence count."""

    source: str
    target: str
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    weight: float = 1.0
    source_chunk_ids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)

    @property
    def pair(self) -> tuple[str, str]:
        """The endpoints' keys, ordered."""
        a, b = entity_key(self.source), entity_key(self.target)
        return (a, b) if a <= b else (b, a)

    def other(self, key: str) -> str:
        """The name of the endpoint whose key is not ``key``."""
        return self.target if entity_key(self.source) == key else self.source

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "description": self.description,
                "keywords": list(self.keywords), "weight": self.weight,
                "source_chunk_ids": list(self.source_chunk_ids), "doc_ids": list(self.doc_ids)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Relation:
        out = cls(**_kwargs(cls, data))
        out.keywords, out.source_chunk_ids, out.doc_ids = (
            list(out.keywords), list(out.source_chunk_ids), list(out.doc_ids))
        out.weight = float(out.weight)
        return out


def undirected(source: str, target: str) -> tuple[str, str]:
    """``(source, target)`` ordered by :func:`entity_key` (names kept as given)."""
    return (source, target) if entity_key(source) <= entity_key(target) else (target, source)


@dataclass(slots=True)
class ExtractionStats:
    """What an extraction did: records read, lines that could not be read (``bad_records``), entities of
    unwanted types and relations with a missing endpoint dropped, chat calls made and answered from
    the cache, gleaning rounds, descriptions summarised by the model."""

    chunks: int = 0
    batches: int = 0
    records: int = 0
    bad_records: int = 0
    dropped_entities: int = 0
    dropped_relations: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    gleaning_rounds: int = 0
    summaries: int = 0

    def to_dict(self) -> dict[str, int]:
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractionStats:
        return cls(**{k: int(v) for k, v in _kwargs(cls, data).items()})


@dataclass(slots=True)
class Subgraph:
    """The entities and relations extracted from one document (``doc_id``) by ``method``.

    Entity names are unique by :func:`entity_key`; every relation's endpoints are entities of the
    subgraph. Merged into a knowledge base's graph by :meth:`Graph.merge`.
    """

    doc_id: str
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    method: str = ""
    stats: ExtractionStats = field(default_factory=ExtractionStats)

    def entity(self, name: str) -> Entity | None:
        key = entity_key(name)
        return next((e for e in self.entities if e.key == key), None)

    def relation(self, a: str, b: str) -> Relation | None:
        pair = tuple(sorted((entity_key(a), entity_key(b))))
        return next((r for r in self.relations if r.pair == pair), None)

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "method": self.method, "stats": self.stats.to_dict(),
                "entities": [e.to_dict() for e in self.entities],
                "relations": [r.to_dict() for r in self.relations]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Subgraph:
        return cls(doc_id=str(data.get("doc_id", "")), method=str(data.get("method", "")),
                   stats=ExtractionStats.from_dict(data.get("stats") or {}),
                   entities=[Entity.from_dict(e) for e in data.get("entities") or []],
                   relations=[Relation.from_dict(r) for r in data.get("relations") or []])


@dataclass(slots=True)
class Finding:
    """One point of a community report."""

    summary: str
    explanation: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"summary": self.summary, "explanation": self.explanation}


@dataclass(slots=True)
class Community:
    """A group of closely related entities (Leiden), with its report.

    ``level`` 0 is the top of the hierarchy; ``parent`` the id of the level above. ``entities`` are
    entity names, most central first. ``method`` says who wrote the report: ``"llm"`` (the chat
    model, REFERENCE §9: title, summary, findings, rating 0–10 and its explanation) or ``"offline"``
    (built from the top entities by PageRank and their strongest relations; ``rating`` 0, not rated).
    ``weight`` is the share of the graph's source chunks its entities come from (the largest = 1).
    """

    id: str
    level: int
    entities: list[str]
    title: str = ""
    summary: str = ""
    findings: list[Finding] = field(default_factory=list)
    rating: float = 0.0
    rating_explanation: str = ""
    weight: float = 0.0
    parent: str | None = None
    method: str = ""

    @property
    def report(self) -> str:
        """The report as text: title, summary and findings."""
        lines = [f"# {self.title}"] if self.title else []
        if self.summary:
            lines.append(self.summary)
        for f in self.findings:
            lines.append(f"- {f.summary}" + (f": {f.explanation}" if f.explanation else ""))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "entities": list(self.entities), "title": self.title,
                "summary": self.summary, "findings": [f.to_dict() for f in self.findings],
                "rating": self.rating, "rating_explanation": self.rating_explanation, "weight": self.weight,
                "parent": self.parent, "method": self.method}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Community:
        parent = data.get("parent")
        return cls(id=str(data["id"]), level=int(data.get("level", 0)), entities=list(data.get("entities") or []),
                   title=str(data.get("title", "")), summary=str(data.get("summary", "")),
                   findings=[Finding(str(f.get("summary", "")), str(f.get("explanation", "")))
                             for f in data.get("findings") or [] if isinstance(f, dict)],
                   rating=float(data.get("rating", 0.0)), rating_explanation=str(data.get("rating_explanation", "")),
                   weight=float(data.get("weight", 0.0)), parent=None if parent is None else str(parent),
                   method=str(data.get("method", "")))


def single_document(chunks: Sequence[ChunkText]) -> str:
    """The one document id of ``chunks`` (``""`` when there are none); ValueError if they span several."""
    docs = {doc for _, doc, _ in chunks}
    if len(docs) > 1:
        raise ValueError(f"an extraction covers one document, these chunks come from {len(docs)}")
    return next(iter(docs), "")


def join_descriptions(descriptions: Sequence[str]) -> str:
    """The distinct non-empty descriptions, in order, joined by :data:`DESCRIPTION_SEP`."""
    return DESCRIPTION_SEP.join(_unique([d.strip() for d in descriptions]))


def split_descriptions(description: str) -> list[str]:
    """The parts of a joined description."""
    return [d for d in (p.strip() for p in description.split(DESCRIPTION_SEP)) if d]


def unique(items: Sequence[str]) -> list[str]:
    """``items`` without empty strings and repeats, order kept."""
    return _unique(items)
