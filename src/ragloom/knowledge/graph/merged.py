"""A knowledge base's graph: the per-document subgraphs merged, incrementally and reversibly.

:class:`Graph` keeps every document's :class:`~ragloom.knowledge.graph.model.Subgraph` and, derived from
them, the merged :attr:`Graph.entities` (by canonical key) and :attr:`Graph.relations` (by the ordered
pair of canonical keys). Only what a change touches is recomputed:

* :meth:`Graph.merge` adds (or replaces) one document's subgraph; :meth:`Graph.remove` takes it out:
  an entity or relation whose only source was that document disappears, a shared one loses that
  document's chunks, descriptions and weight. Both return a :class:`GraphChange`.
* :meth:`Graph.add_aliases` records that some entity keys are one entity (entity resolution); the merge
  of everything that names them follows, and keeps following when documents come and go.

A merged entity gets the name with the most weight (the first, in document-id order, on a tie), the
other names as ``aliases``, the most weighty specific type (``ENTITY`` only when nothing else is known),
the distinct descriptions in document-id order (or their summary: :func:`summarize_long_descriptions`),
the source chunks in document-id order, the sorted document ids and the summed weight. Relations
likewise (keywords merged, weights summed); a relation whose endpoints became one entity is dropped.
Everything is ordered by document id, so the result does not depend on the order documents came in.

``to_dict`` stores the subgraphs, aliases, summaries and PageRank values; ``from_dict`` recomputes the rest.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragloom.knowledge.graph.describe import DescriptionPolicy, merge_descriptions
from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.knowledge.graph.model import (
    DESCRIPTION_SEP,
    GENERIC_TYPE,
    Community,
    Entity,
    Relation,
    Subgraph,
    entity_key,
    join_descriptions,
    split_descriptions,
    undirected,
    unique,
)

FORMAT = "ragloom-graph/1"
Pair = tuple[str, str]


@dataclass(slots=True)
class GraphChange:
    """Keys of the merged entities added, updated and removed by one change, and relation counts."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    relations_added: int = 0
    relations_removed: int = 0

    @property
    def touched(self) -> list[str]:
        """Keys of the entities added or updated (the ones entity resolution should look at)."""
        return [*self.added, *self.updated]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


class Graph:
    """The merged knowledge graph of a knowledge base (see the module docstring). Not thread-safe:
    one builder changes it at a time."""

    def __init__(self) -> None:
        self._subgraphs: dict[str, Subgraph] = {}
        self._aliases: dict[str, str] = {}
        self._members: dict[str, set[str]] = {}
        self._summaries: dict[str, str] = {}
        self._pagerank: dict[str, float] = {}
        self.pagerank_stale = False
        self.entities: dict[str, Entity] = {}
        self.relations: dict[Pair, Relation] = {}
        self._ent_docs: dict[str, set[str]] = defaultdict(set)
        self._rel_docs: dict[Pair, set[str]] = defaultdict(set)
        self._adjacent: dict[str, set[Pair]] = defaultdict(set)
        self._doc_ents: dict[str, dict[str, list[Entity]]] = {}
        self._doc_rels: dict[str, dict[Pair, list[Relation]]] = {}

    # -- reading ------------------------------------------------------------------------------------
    @property
    def doc_ids(self) -> list[str]:
        return sorted(self._subgraphs)

    def subgraph(self, doc_id: str) -> Subgraph | None:
        return self._subgraphs.get(doc_id)

    @property
    def aliases(self) -> dict[str, str]:
        """Entity keys merged into another one: ``{alias key: canonical key}``."""
        return dict(self._aliases)

    def key_of(self, name: str) -> str:
        """The canonical key of the entity called ``name`` (an alias leads to its entity)."""
        key = entity_key(name)
        return self._aliases.get(key, key)

    def entity(self, name: str) -> Entity | None:
        """The merged entity called ``name`` (or one of its aliases)."""
        return self.entities.get(self.key_of(name))

    def relation(self, a: str, b: str) -> Relation | None:
        """The merged relation between the entities called ``a`` and ``b``."""
        return self.relations.get(_pair(self.key_of(a), self.key_of(b)))

    def neighbours(self, key: str) -> list[tuple[str, Relation]]:
        """``(other key, relation)`` of the relations of the entity ``key``, heaviest first (then by key)."""
        out = [(b if a == key else a, self.relations[(a, b)]) for a, b in self._adjacent.get(key, ())]
        return sorted(out, key=lambda p: (-p[1].weight, p[0]))

    def degree(self, key: str) -> int:
        return len(self._adjacent.get(key, ()))

    def fragments(self, key: str) -> list[str]:
        """The distinct descriptions of the entity ``key`` before any summary."""
        return _fragments(e for _, e in self._entity_parts(key))

    def relation_fragments(self, pair: Pair) -> list[str]:
        """The distinct descriptions of the relation ``pair`` (ordered canonical keys) before any summary."""
        return _fragments(r for _, r in self._relation_parts(pair))

    def __len__(self) -> int:
        return len(self.entities)

    # -- changing -----------------------------------------------------------------------------------
    def merge(self, subgraph: Subgraph) -> GraphChange:
        """Add ``subgraph`` (replacing the same document's previous one). The graph keeps the object:
        do not change it afterwards. ValueError for a subgraph without a document id (an extraction of
        no chunks: remove the document instead)."""
        if not subgraph.doc_id:
            raise ValueError("a subgraph needs the id of its document")
        roots, pairs = self._unindex(subgraph.doc_id) if subgraph.doc_id in self._subgraphs else (set(), set())
        self._subgraphs[subgraph.doc_id] = subgraph
        new_roots, new_pairs = self._index(subgraph)
        return self._refresh(roots | new_roots, pairs | new_pairs)

    def remove(self, doc_id: str) -> GraphChange:
        """Take document ``doc_id``'s contribution out (nothing happens for an unknown document)."""
        if doc_id not in self._subgraphs:
            return GraphChange()
        roots, pairs = self._unindex(doc_id)
        del self._subgraphs[doc_id]
        return self._refresh(roots, pairs)

    def without(self, doc_ids: Collection[str]) -> Graph:
        """A copy without the contributions of documents ``doc_ids``: every entity and relation merged again
        from the other documents alone (what a reader who may not read those documents may see). A summary
        written over fragments of the left-out documents no longer matches, so it is not used."""
        data = self.to_dict()
        data["subgraphs"] = [sg for sg in data["subgraphs"] if sg.get("doc_id") not in doc_ids]
        return Graph.from_dict(data)

    def add_aliases(self, aliases: Mapping[str, str]) -> GraphChange:
        """Merge entities: each ``alias key → canonical key`` makes the alias's entity part of the canonical
        one from now on (keys as :func:`~ragloom.knowledge.graph.model.entity_key` gives them)."""
        affected: set[str] = set()
        for alias, target in sorted(aliases.items()):
            a, t = self.key_of(alias), self.key_of(target)
            if a == t:
                continue
            moved = self._members.pop(a, set()) | {a}
            for m in moved:
                self._aliases[m] = t
            self._members.setdefault(t, set()).update(moved)
            affected |= {a, t}
        if not affected:
            return GraphChange()
        old_pairs = {p for r in affected for p in self._adjacent.get(r, ())}
        self._reindex()
        new_pairs = {p for p, docs in self._rel_docs.items() if docs and (p[0] in affected or p[1] in affected)}
        return self._refresh(affected, old_pairs | new_pairs)

    def set_summary(self, fragments: list[str], summary: str) -> None:
        """Use ``summary`` for an entity or relation whose distinct descriptions are ``fragments`` (from the
        next :meth:`recompute` on, or the next change that touches it)."""
        self._summaries[_digest(join_descriptions(fragments))] = summary

    def recompute(self) -> None:
        """Recompute every merged entity and relation from the subgraphs (texts only: PageRank stays)."""
        stale = self.pagerank_stale
        self._reindex()
        self._refresh(set(self._ent_docs) | set(self.entities), set(self._rel_docs) | set(self.relations))
        self.pagerank_stale = stale

    def set_pagerank(self, values: Mapping[str, float]) -> None:
        """Store PageRank values by canonical key (see :func:`~ragloom.knowledge.graph.rank.compute_pagerank`)."""
        self._pagerank = {k: float(v) for k, v in values.items() if k in self.entities}
        for key, entity in self.entities.items():
            entity.pagerank = self._pagerank.get(key, 0.0)
        self.pagerank_stale = False

    # -- indexing -----------------------------------------------------------------------------------
    def _index(self, sg: Subgraph) -> tuple[set[str], set[Pair]]:
        ents: dict[str, list[Entity]] = defaultdict(list)
        rels: dict[Pair, list[Relation]] = defaultdict(list)
        for e in sg.entities:
            ents[self.key_of(e.name)].append(e)
        for r in sg.relations:
            a, b = self.key_of(r.source), self.key_of(r.target)
            if a != b and a in ents and b in ents:
                rels[_pair(a, b)].append(r)
        self._doc_ents[sg.doc_id], self._doc_rels[sg.doc_id] = dict(ents), dict(rels)
        for root in ents:
            self._ent_docs[root].add(sg.doc_id)
        for pair in rels:
            self._rel_docs[pair].add(sg.doc_id)
        return set(ents), set(rels)

    def _unindex(self, doc_id: str) -> tuple[set[str], set[Pair]]:
        ents, rels = self._doc_ents.pop(doc_id, {}), self._doc_rels.pop(doc_id, {})
        for root in ents:
            self._ent_docs[root].discard(doc_id)
        for pair in rels:
            self._rel_docs[pair].discard(doc_id)
        return set(ents), set(rels)

    def _reindex(self) -> None:
        self._ent_docs.clear()
        self._rel_docs.clear()
        for sg in self._subgraphs.values():
            self._index(sg)

    # -- recomputing --------------------------------------------------------------------------------
    def _refresh(self, roots: set[str], pairs: set[Pair]) -> GraphChange:
        change = GraphChange()
        renamed: set[str] = set()
        for root in sorted(roots):
            entity = self._merged_entity(root)
            previous = self.entities.get(root)
            if entity is None:
                self._ent_docs.pop(root, None)
                if self.entities.pop(root, None) is not None:
                    change.removed.append(root)
                continue
            self.entities[root] = entity
            if previous is None:
                change.added.append(root)
            else:
                change.updated.append(root)
                if previous.name != entity.name:
                    renamed.add(root)
        # a relation names its ends: those of a renamed entity are redone (the others changed only if touched)
        pairs = pairs | {p for r in renamed for p in self._adjacent.get(r, ())}
        for pair in sorted(pairs):
            relation = self._merged_relation(pair)
            if relation is None:
                self._rel_docs.pop(pair, None)
                if self.relations.pop(pair, None) is not None:
                    change.relations_removed += 1
                for k in pair:
                    links = self._adjacent.get(k)
                    if links is not None:
                        links.discard(pair)
                        if not links:
                            del self._adjacent[k]
                continue
            if pair not in self.relations:
                change.relations_added += 1
            self.relations[pair] = relation
            for k in pair:
                self._adjacent[k].add(pair)
        if roots or pairs:
            self.pagerank_stale = True
        return change

    def _entity_parts(self, root: str) -> list[tuple[str, Entity]]:
        return [(d, e) for d in sorted(self._ent_docs.get(root, ())) for e in self._doc_ents[d].get(root, [])]

    def _relation_parts(self, pair: Pair) -> list[tuple[str, Relation]]:
        return [(d, r) for d in sorted(self._rel_docs.get(pair, ())) for r in self._doc_rels[d].get(pair, [])]

    def _described(self, fragments: list[str]) -> str:
        joined = fragments[0] if len(fragments) == 1 else join_descriptions(fragments)
        return self._summaries.get(_digest(joined), joined) if self._summaries else joined

    def _merged_entity(self, root: str) -> Entity | None:
        parts = self._entity_parts(root)
        if not parts:
            return None
        names: dict[str, float] = {}
        types: dict[str, float] = {}
        for _, e in parts:
            names[e.name] = names.get(e.name, 0.0) + e.weight
            types[e.type] = types.get(e.type, 0.0) + e.weight
        name = _heaviest(names)
        specific = {t: w for t, w in types.items() if t and t != GENERIC_TYPE}
        aliases = {entity_key(n): n for n in names if entity_key(n) != entity_key(name)}
        return Entity(
            name=name, type=_heaviest(specific or types),
            description=self._described(_fragments(e for _, e in parts)),
            source_chunk_ids=unique([c for _, e in parts for c in e.source_chunk_ids]),
            doc_ids=sorted({d for d, _ in parts}), weight=sum(e.weight for _, e in parts),
            aliases=list(dict.fromkeys(aliases.values())), pagerank=self._pagerank.get(root, 0.0))

    def _merged_relation(self, pair: Pair) -> Relation | None:
        parts = self._relation_parts(pair)
        if not parts or pair[0] not in self.entities or pair[1] not in self.entities:
            return None
        source, target = undirected(self.entities[pair[0]].name, self.entities[pair[1]].name)
        if len(parts) == 1:  # the common case, kept cheap
            d, r = parts[0]
            return Relation(source=source, target=target, description=self._described(_fragments([r])),
                            keywords=unique(r.keywords), weight=r.weight, source_chunk_ids=unique(r.source_chunk_ids),
                            doc_ids=[d])
        return Relation(
            source=source, target=target, description=self._described(_fragments(r for _, r in parts)),
            keywords=unique([k for _, r in parts for k in r.keywords]), weight=sum(r.weight for _, r in parts),
            source_chunk_ids=unique([c for _, r in parts for c in r.source_chunk_ids]),
            doc_ids=sorted({d for d, _ in parts}))

    # -- storing ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT,
                "subgraphs": [self._subgraphs[d].to_dict() for d in sorted(self._subgraphs)],
                "aliases": dict(sorted(self._aliases.items())),
                "summaries": dict(sorted(self._summaries.items())),
                "pagerank": dict(sorted(self._pagerank.items())),
                "pagerank_stale": self.pagerank_stale}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Graph:
        graph = cls()
        for alias, target in (data.get("aliases") or {}).items():
            graph._aliases[str(alias)] = str(target)
            graph._members.setdefault(str(target), set()).add(str(alias))
        graph._summaries = {str(k): str(v) for k, v in (data.get("summaries") or {}).items()}
        for item in data.get("subgraphs") or []:
            sg = Subgraph.from_dict(item)
            if sg.doc_id:
                graph._subgraphs[sg.doc_id] = sg
        graph.recompute()  # every entity and relation once, rather than once per document naming it
        graph.set_pagerank({str(k): float(v) for k, v in (data.get("pagerank") or {}).items()})
        graph.pagerank_stale = bool(data.get("pagerank_stale", False))
        return graph

    @classmethod
    def from_subgraphs(cls, subgraphs: Iterable[Subgraph]) -> Graph:
        """The graph of ``subgraphs`` (a later one of the same document replaces an earlier one)."""
        graph = cls()
        for sg in subgraphs:
            if not sg.doc_id:
                raise ValueError("a subgraph needs the id of its document")
            graph._subgraphs[sg.doc_id] = sg
        graph.recompute()
        graph.pagerank_stale = bool(graph.entities)
        return graph


def _fragments(items: Iterable[Entity | Relation]) -> list[str]:
    """The distinct parts of the items' descriptions, in order (a single description needs no split)."""
    descriptions = [i.description for i in items if i.description]
    if len(descriptions) == 1 and DESCRIPTION_SEP not in descriptions[0]:
        return [descriptions[0].strip()]
    return unique([p for d in descriptions for p in split_descriptions(d)])


def _heaviest(weights: Mapping[str, float]) -> str:
    """The key of the largest weight; a tie goes to the first key."""
    best = max(weights.values())
    return next(k for k, w in weights.items() if w == best)


def summarize_long_descriptions(graph: Graph, runner: LlmRunner, policy: DescriptionPolicy | None = None) -> int:
    """Summarise, with the chat model, the merged descriptions that are long (``policy``); the summaries
    are kept in the graph (and in the runner's cache). Returns how many were summarised."""
    policy = policy or DescriptionPolicy()
    work: list[tuple[str, str, list[str]]] = []
    for key in sorted(graph.entities):
        fragments = graph.fragments(key)
        if policy.is_long(fragments):
            work.append(("entity", graph.entities[key].name, fragments))
    for pair in sorted(graph.relations):
        fragments = graph.relation_fragments(pair)
        if policy.is_long(fragments):
            r = graph.relations[pair]
            work.append(("relationship", f"{r.source} - {r.target}", fragments))
    results = runner.map(lambda w: merge_descriptions(w[2], name=w[1], what=w[0], runner=runner, policy=policy), work)
    done = 0
    for (_, _, fragments), (summary, summarised) in zip(work, results, strict=True):
        if summarised:
            graph.set_summary(fragments, summary)
            done += 1
    if done:
        graph.recompute()
    return done


def readable_part(graph: Graph, communities: list[Community],
                  hidden: Collection[str]) -> tuple[Graph, list[Community]]:
    """What a reader who may not read documents ``hidden`` may see of a graph (source permissions): the
    graph merged again from the other documents alone, and none of the communities with an entity drawn
    from a hidden document (their reports were written over it)."""
    gone = set(hidden) & set(graph.doc_ids)
    if not gone:
        return graph, communities
    touched = {key for key, entity in graph.entities.items() if gone & set(entity.doc_ids)}
    kept = [c for c in communities if not any(graph.key_of(name) in touched for name in c.entities)]
    return graph.without(gone), kept
