"""Knowledge-graph evidence for a question: one text block, cited like a chunk (REFERENCE §9, KGSearch).

:func:`graph_evidence` is a pure function of the question, a :class:`~ragloom.knowledge.graph.index.GraphIndex`
and the communities:

1. **entities of the question**: :meth:`GraphIndex.match` (names and aliases in the question, the analyser's
   terms, optionally the chat model and vectors); those at ``min_similarity`` or more are the *seeds*;
2. **paths**: from each seed, the n-hop paths (``hops``, default 2). A relation at hop ``i`` (0-based) of a
   seed's path gains ``similarity / (2 + i)`` (the best over that seed's paths, summed over seeds); doubled
   when both its ends are seeds; scaled by ``0.5 + 0.5 × weight / heaviest weight``. An entity reached at
   distance ``d`` from a seed gains ``similarity / (1 + d)`` (the best over the seeds) on top of its own
   similarity, so a question entity linked to another one ranks first;
3. **ranking**: entities by ``score × (0.5 + 0.5 × pagerank / highest pagerank)``, relations by their score,
   paths by the seed's similarity × the scaled weights of their relations, doubled when they end at
   another seed (ties always by name);
4. **community**: the report of the community holding the most score among the ranked entities (a deeper,
   more specific one on a tie, then the better rated);
5. **text**, within ``max_tokens``: ``Entities:``, ``Relations:``, ``Paths:`` and ``Community:`` sections;
   an item that does not fit is left out. ``chunk_ids``: up to ``chunks_per_item`` source chunks of every
   entity shown (those where a relation shown was found first) and of every relation shown; ``doc_ids``
   their documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.knowledge.graph.index import EntityMatch, GraphIndex
from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Community, Entity, Relation
from ragloom.knowledge.graph.paths import GraphPath, n_hop_paths
from ragloom.knowledge.graph.text import CountTokens, clip, rough_tokens

MIN_SIMILARITY = 0.3
TOP_ENTITIES = 6
TOP_RELATIONS = 6
MAX_PATHS = 3
MAX_TOKENS = 1200
ITEM_TOKENS = 60
CHUNKS_PER_ITEM = 3
HEADER = "Knowledge graph evidence"


@dataclass(frozen=True, slots=True)
class ScoredEntity:
    key: str
    entity: Entity
    similarity: float  # to the question (0 for an entity only reached by a path)
    score: float
    how: str  # name, alias, terms, llm, vector, or path


@dataclass(frozen=True, slots=True)
class ScoredRelation:
    relation: Relation
    score: float
    hop: int  # the nearest hop at which a path met it (0 = next to a seed)


@dataclass(slots=True)
class GraphEvidence:
    """What the graph says about a question: the ranked parts, and ``text``, the evidence block (empty
    when no entity of the question was found) with the ``chunk_ids`` and ``doc_ids`` it comes from."""

    question: str
    text: str = ""
    tokens: int = 0
    chunk_ids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    entities: list[ScoredEntity] = field(default_factory=list)
    relations: list[ScoredRelation] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)
    community: Community | None = None

    @property
    def is_empty(self) -> bool:
        return not self.text

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "text": self.text, "tokens": self.tokens, "chunk_ids": self.chunk_ids,
                "doc_ids": self.doc_ids,
                "entities": [{"name": e.entity.name, "type": e.entity.type, "similarity": e.similarity,
                              "score": e.score, "how": e.how} for e in self.entities],
                "relations": [{"source": r.relation.source, "target": r.relation.target, "score": r.score,
                               "hop": r.hop} for r in self.relations],
                "paths": self.paths, "community": self.community.to_dict() if self.community else None}


def _scaled(weight: float, heaviest: float) -> float:
    return 0.5 + 0.5 * (weight / heaviest if heaviest > 0 else 0.0)


def _walk(graph: Graph, seeds: Sequence[EntityMatch], hops: int, fanout: int
          ) -> tuple[dict[tuple[str, str], tuple[float, int]], dict[str, float], list[tuple[float, GraphPath]]]:
    """Relation scores (and nearest hop), reached-entity scores and scored paths of the seeds' walks."""
    heaviest = max((r.weight for r in graph.relations.values()), default=1.0)
    seed_keys = {s.key for s in seeds}
    relations: dict[tuple[str, str], tuple[float, int]] = {}
    reached: dict[str, float] = {}
    paths: list[tuple[float, GraphPath]] = []
    for seed in seeds:
        best: dict[tuple[str, str], tuple[float, int]] = {}
        for path in n_hop_paths(graph, seed.key, hops=hops, fanout=fanout):
            for i, (a, b) in enumerate(zip(path.keys, path.keys[1:], strict=False)):
                pair = (a, b) if a <= b else (b, a)
                gain = seed.similarity / (2 + i)
                if pair not in best or best[pair][0] < gain:
                    best[pair] = (gain, i)
            end = path.keys[-1]
            reached[end] = max(reached.get(end, 0.0), seed.similarity / (1 + path.hops))
            score = seed.similarity * (2.0 if end in seed_keys else 1.0)
            for r in path.relations:
                score *= _scaled(r.weight, heaviest)
            paths.append((score, path))
        for pair, (gain, hop) in best.items():
            old = relations.get(pair, (0.0, hop))
            relations[pair] = (old[0] + gain, min(old[1], hop))
    for pair, (gain, hop) in list(relations.items()):
        both = 2.0 if pair[0] in seed_keys and pair[1] in seed_keys else 1.0
        relations[pair] = (gain * both * _scaled(graph.relations[pair].weight, heaviest), hop)
    return relations, reached, paths


def _rank_entities(graph: Graph, seeds: Sequence[EntityMatch], reached: dict[str, float]) -> list[ScoredEntity]:
    top_rank = max((e.pagerank for e in graph.entities.values()), default=0.0)
    by_key = {s.key: s for s in seeds}
    out = []
    for key in set(by_key) | set(reached):
        e = graph.entities[key]
        seed = by_key.get(key)
        base = (seed.similarity if seed else 0.0) + reached.get(key, 0.0)
        factor = 0.5 + 0.5 * (e.pagerank / top_rank if top_rank > 0 else 0.0)
        out.append(ScoredEntity(key, e, seed.similarity if seed else 0.0, round(base * factor, 6),
                                seed.how if seed else "path"))
    return sorted(out, key=lambda s: (-s.score, s.entity.name, s.key))


def _unique_paths(graph: Graph, scored: list[tuple[float, GraphPath]], limit: int) -> list[list[str]]:
    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for _, path in sorted(scored, key=lambda p: (-p[0], -p[1].hops, p[1].keys)):
        if path.hops < 2:
            continue  # a single relation is shown under Relations
        if path.keys in seen or tuple(reversed(path.keys)) in seen:
            continue
        seen.add(path.keys)
        out.append(path.names(graph))
        if len(out) >= limit:
            break
    return out


def best_community(graph: Graph, communities: Sequence[Community], entities: Sequence[ScoredEntity]
                   ) -> Community | None:
    """The community (with a report) holding the most score among ``entities``; None if none holds any."""
    scores = {s.key: s.score for s in entities}
    ranked: list[tuple[float, int, float, str, Community]] = []
    for c in communities:
        held = sum(scores.get(graph.key_of(n), 0.0) for n in c.entities)
        if held > 0 and (c.title or c.summary):
            ranked.append((-held, -c.level, -c.rating, c.id, c))
    return min(ranked, key=lambda t: t[:4])[4] if ranked else None


class _Budget:
    def __init__(self, limit: int, count: CountTokens) -> None:
        self.limit = limit
        self.count = count
        self.used = 0
        self.lines: list[str] = []

    def add(self, line: str) -> bool:
        n = self.count(line)
        if self.used + n > self.limit:
            return False
        self.lines.append(line)
        self.used += n
        return True


def _entity_line(e: Entity) -> str:
    description = " ".join(e.description.split())
    return f"- {e.name} ({e.type})" + (f": {clip(description, ITEM_TOKENS)}" if description else "")


def _relation_line(r: Relation) -> str:
    line = f"- {r.source} — {r.target}"
    if r.description:
        line += f": {clip(' '.join(r.description.split()), ITEM_TOKENS)}"
    return line + (f" (keywords: {', '.join(r.keywords[:5])})" if r.keywords else "")


def graph_evidence(
    question: str,
    index: GraphIndex,
    communities: Sequence[Community] = (),
    *,
    hops: int = 2,
    fanout: int = 8,
    top_entities: int = TOP_ENTITIES,
    top_relations: int = TOP_RELATIONS,
    max_paths: int = MAX_PATHS,
    max_tokens: int = MAX_TOKENS,
    min_similarity: float = MIN_SIMILARITY,
    vector_weight: float = 0.5,
    chunks_per_item: int = CHUNKS_PER_ITEM,
    count_tokens: CountTokens = rough_tokens,
    runner: LlmRunner | None = None,
) -> GraphEvidence:
    """The graph's evidence for ``question`` (see the module docstring)."""
    graph = index.graph
    out = GraphEvidence(question=question)
    seeds = [m for m in index.match(question, runner=runner, vector_weight=vector_weight)
             if m.similarity >= min_similarity and m.key in graph.entities]
    if not seeds:
        return out
    relation_scores, reached, scored_paths = _walk(graph, seeds, hops, fanout)
    out.entities = _rank_entities(graph, seeds, reached)[:top_entities]
    ranked = sorted(relation_scores.items(), key=lambda p: (-p[1][0], p[0]))[:top_relations]
    out.relations = [ScoredRelation(graph.relations[pair], round(score, 6), hop) for pair, (score, hop) in ranked]
    out.paths = _unique_paths(graph, scored_paths, max_paths)
    out.community = best_community(graph, communities, out.entities)
    _render(out, index.chunk_docs, max_tokens, count_tokens, chunks_per_item)
    return out


def _pick(chunks: Sequence[str], preferred: set[str], k: int) -> list[str]:
    """Up to ``k`` of ``chunks``: those in ``preferred`` first, then the others, each in their order."""
    first = [c for c in chunks if c in preferred][:k]
    return first + [c for c in chunks if c not in preferred][: k - len(first)]


def _render(out: GraphEvidence, chunk_docs: Mapping[str, str], max_tokens: int, count: CountTokens,
            chunks_per_item: int) -> None:
    budget = _Budget(max_tokens, count)
    budget.add(HEADER)
    entities: list[Entity] = []
    relations: list[Relation] = []
    if out.entities and budget.add("Entities:"):
        entities = [e.entity for e in out.entities if budget.add(_entity_line(e.entity))]
    if out.relations and budget.add("Relations:"):
        relations = [r.relation for r in out.relations if budget.add(_relation_line(r.relation))]
    if out.paths and budget.add("Paths:"):
        for names in out.paths:
            budget.add("- " + " → ".join(names))
    c = out.community
    if c is not None and budget.add(f"Community: {c.title}"):
        rest = max_tokens - budget.used
        body = clip(c.report.partition("\n")[2] if c.title else c.report, rest - 1, count)
        if body:
            budget.add(body)
    out.text = "\n".join(budget.lines) if len(budget.lines) > 1 else ""
    out.tokens = budget.used if out.text else 0
    # an entity named in many chunks cites those where the relations shown were found first
    related = {ch for r in relations for ch in r.source_chunk_ids}
    cited = [ch for e in entities for ch in _pick(e.source_chunk_ids, related, chunks_per_item)]
    cited += [ch for r in relations for ch in r.source_chunk_ids[:chunks_per_item]]
    out.chunk_ids = list(dict.fromkeys(cited))
    out.doc_ids = sorted({chunk_docs[ch] for ch in out.chunk_ids if ch in chunk_docs})
