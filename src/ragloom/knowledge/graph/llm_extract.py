"""The ``light`` and ``general`` extraction methods: the chat model writes the records (REFERENCE §9).

1. The document's chunks, in order, are packed into batches of at most ``batch_tokens`` tokens (a chunk
   is never split; a larger one goes alone).
2. Each batch gets the extraction prompt (:func:`~ragloom.knowledge.graph.prompts.extraction_prompt`).
   ``general`` then *gleans*: up to ``max_gleanings`` rounds of "many entities were missed, add them",
   each but the last followed by a Y/N question whether more are missing (N stops). ``light`` makes a
   single pass. Batches run in parallel, ``max_workers`` at a time, through the runner (cached).
3. The replies are read by :func:`~ragloom.knowledge.graph.records.parse_records` (bad lines skipped and
   counted). ``general`` keeps only entities of its ``entity_types``; ``light`` keeps every type.
   Relations whose endpoints are not entities of the same batch, self-relations and "no relationship"
   descriptions are dropped.
4. Per document: an entity's type is the one most records give it; its weight counts its records; its
   descriptions are merged by :func:`~ragloom.knowledge.graph.describe.merge_descriptions` (summarised by
   the model when long). A relation's weight sums its strengths. Source chunks: the chunks of the batch
   whose text names the entity (both endpoints for a relation), or every chunk of the batch when none does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragloom.knowledge.graph.describe import DescriptionPolicy, language_of, merge_descriptions
from ragloom.knowledge.graph.llm import LlmCache, LlmRunner, LlmUsage
from ragloom.knowledge.graph.model import (
    ChunkText,
    Entity,
    ExtractionStats,
    ProgressFn,
    Relation,
    Subgraph,
    entity_key,
    single_document,
    undirected,
    unique,
)
from ragloom.knowledge.graph.prompts import (
    CONTINUE_PROMPT,
    DEFAULT_ENTITY_TYPES,
    LOOP_PROMPT,
    extraction_prompt,
)
from ragloom.knowledge.graph.records import Records, is_no_relation, parse_records, says_yes
from ragloom.knowledge.graph.text import CountTokens, rough_tokens
from ragloom.knowledge.toc_llm import make_batches
from ragloom.models.chat import ChatModel

METHODS = ("light", "general")
BATCH_TOKENS = 2048
MAX_GLEANINGS = 2


@dataclass(slots=True)
class _Batch:
    chunk_ids: list[str]
    texts: list[str]

    @property
    def text(self) -> str:
        return "\n\n".join(self.texts)


@dataclass(slots=True)
class _BatchResult:
    batch: _Batch
    records: Records
    gleanings: int
    usage: LlmUsage


@dataclass(slots=True)
class _Gathered:
    names: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    descriptions: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    chunk_ids: list[str] = field(default_factory=list)
    weight: float = 0.0


class LlmExtractor:
    """``extract(chunks) -> Subgraph`` by the chat model (see the module docstring).

    Give ``chat`` (a :class:`~ragloom.models.chat.ChatModel`; calls then go through a new
    :class:`LlmRunner` with ``cache`` and ``max_workers``) or a ready ``runner`` to share one cache and
    one concurrency bound between documents. ``language``: the language of the descriptions,
    ``"auto"`` = Chinese for a batch with Chinese text, else English.
    """

    def __init__(
        self,
        chat: ChatModel | None = None,
        *,
        method: str = "light",
        runner: LlmRunner | None = None,
        cache: LlmCache | None = None,
        max_workers: int = 4,
        entity_types: Sequence[str] | None = None,
        max_gleanings: int | None = None,
        batch_tokens: int = BATCH_TOKENS,
        count_tokens: CountTokens = rough_tokens,
        language: str = "auto",
        descriptions: DescriptionPolicy | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown chat-model extraction method {method!r}; choose one of {METHODS}")
        if runner is None:
            if chat is None:
                raise ValueError("an LLM extractor needs a chat model or a runner")
            runner = LlmRunner(chat, cache=cache, max_workers=max_workers, count_tokens=count_tokens)
        self.method = method
        self.runner = runner
        general = method == "general"
        self.entity_types = [t.upper() for t in (entity_types or DEFAULT_ENTITY_TYPES)] if general else None
        self.max_gleanings = (MAX_GLEANINGS if max_gleanings is None else max_gleanings) if general else 0
        self.batch_tokens = batch_tokens
        self.count_tokens = count_tokens
        self.language = language
        self.descriptions = descriptions or DescriptionPolicy(count_tokens=count_tokens)

    # -- one batch ----------------------------------------------------------------------------------
    def _prompt(self, text: str) -> str:
        language = language_of(text) if self.language == "auto" else self.language
        types = [t.lower() for t in self.entity_types] if self.entity_types else None
        return extraction_prompt(text, method=self.method, entity_types=types, language=language)

    def _run_batch(self, batch: _Batch) -> _BatchResult:
        usage = LlmUsage()
        messages = [{"role": "user", "content": self._prompt(batch.text)}]
        reply = self.runner.ask(messages, tally=usage)
        records = parse_records(reply)
        rounds = 0
        for i in range(self.max_gleanings):
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": CONTINUE_PROMPT}]
            reply = self.runner.ask(messages, tally=usage)
            records.extend(parse_records(reply))
            rounds += 1
            if i == self.max_gleanings - 1:
                break
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": LOOP_PROMPT}]
            if not says_yes(self.runner.ask(messages, max_tokens=4, tally=usage)):
                break
        return _BatchResult(batch, records, rounds, usage)

    # -- the document -------------------------------------------------------------------------------
    def extract(self, chunks: Sequence[ChunkText], *, progress: ProgressFn | None = None) -> Subgraph:
        """The document's subgraph. Raises :class:`~ragloom.errors.ModelError` when the model keeps
        failing (after the runner's retries); replies already received stay in the cache."""
        doc_id = single_document(chunks)
        kept = [(cid, text) for cid, _, text in chunks if text.strip()]
        texts = [t for _, t in kept]
        batches = [_Batch([kept[i][0] for i in idx], [texts[i] for i in idx])
                   for idx in make_batches(texts, self.count_tokens, self.batch_tokens)]
        results = self.runner.map(self._run_batch, batches, progress)
        stats = ExtractionStats(chunks=len(chunks), batches=len(batches))
        entities, relations = self._gather(results, stats)
        usage = LlmUsage()
        for r in results:
            usage.calls += r.usage.calls
            usage.cache_hits += r.usage.cache_hits
        graph = self._assemble(doc_id, entities, relations, stats, usage)
        stats.llm_calls, stats.cache_hits = usage.calls, usage.cache_hits
        graph.stats = stats
        return graph

    def _gather(self, results: list[_BatchResult],
                stats: ExtractionStats) -> tuple[dict[str, _Gathered], dict[tuple[str, str], _Gathered]]:
        entities: dict[str, _Gathered] = {}
        relations: dict[tuple[str, str], _Gathered] = {}
        allowed = set(self.entity_types) if self.entity_types else None
        for result in results:
            records, batch = result.records, result.batch
            stats.records += records.total
            stats.bad_records += records.bad
            stats.gleaning_rounds += result.gleanings
            names: set[str] = set()
            for e in records.entities:
                if allowed is not None and e.type not in allowed:
                    stats.dropped_entities += 1
                    continue
                g = entities.setdefault(entity_key(e.name), _Gathered())
                g.names[e.name] += 1
                g.types[e.type] += 1
                g.descriptions.append(e.description)
                g.chunk_ids.extend(_naming(batch, [e.name]))
                g.weight += 1
                names.add(entity_key(e.name))
            for r in records.relations:
                a, b = entity_key(r.source), entity_key(r.target)
                if a not in names or b not in names or a == b or is_no_relation(r.description):
                    stats.dropped_relations += 1
                    continue
                g = relations.setdefault((a, b) if a <= b else (b, a), _Gathered())
                g.descriptions.append(r.description)
                g.keywords.extend(r.keywords)
                g.chunk_ids.extend(_naming(batch, [r.source, r.target]))
                g.weight += r.weight
        return entities, relations

    def _assemble(self, doc_id: str, entities: dict[str, _Gathered], relations: dict[tuple[str, str], _Gathered],
                  stats: ExtractionStats, usage: LlmUsage) -> Subgraph:
        names = {k: _top(g.names) for k, g in entities.items()}
        work: list[tuple[str, str, list[str]]] = [("entity", names[k], g.descriptions) for k, g in entities.items()]
        work += [("relationship", f"{names[a]} - {names[b]}", g.descriptions) for (a, b), g in relations.items()]

        def merge(item: tuple[str, str, list[str]]) -> tuple[str, bool]:
            what, name, fragments = item
            return merge_descriptions(fragments, name=name, what=what, runner=self.runner,
                                      policy=self.descriptions, tally=usage)

        merged = self.runner.map(merge, work)
        stats.summaries = sum(1 for _, summarised in merged if summarised)
        out = Subgraph(doc_id=doc_id, method=self.method)
        for (key, g), (description, _) in zip(entities.items(), merged[: len(entities)], strict=True):
            out.entities.append(Entity(name=names[key], type=_top(g.types), description=description,
                                       source_chunk_ids=unique(g.chunk_ids), doc_ids=[doc_id], weight=g.weight))
        for ((a, b), g), (description, _) in zip(relations.items(), merged[len(entities):], strict=True):
            source, target = undirected(names[a], names[b])
            out.relations.append(Relation(source=source, target=target, description=description,
                                          keywords=unique(g.keywords), weight=g.weight,
                                          source_chunk_ids=unique(g.chunk_ids), doc_ids=[doc_id]))
        return out


def _top(counts: Counter[str]) -> str:
    best = max(counts.values())
    return next(k for k, v in counts.items() if v == best)


def _naming(batch: _Batch, names: Sequence[str]) -> list[str]:
    """The chunks of ``batch`` whose text names all ``names`` (case-insensitive); all of them if none does."""
    wanted = [n.casefold() for n in names]
    hits = [cid for cid, text in zip(batch.chunk_ids, batch.texts, strict=True)
            if all(n in text.casefold() for n in wanted)]
    return hits or list(batch.chunk_ids)
