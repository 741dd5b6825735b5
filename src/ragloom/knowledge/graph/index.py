"""Finding a question's entities in the merged graph.

A :class:`GraphIndex` is built once per version of a graph (it analyses every entity's names and
description) and answers :meth:`GraphIndex.match` for each question with a similarity in [0, 1] per
entity:

* ``name`` / ``alias`` (1.0 / 0.95): the entity's name or an alias occurs in the question as a phrase
  (whole words; inside a Chinese run, as a substring of two or more characters), after the analyser's
  normalisation (NFKC, lower case, traditional → simplified);
* ``llm`` (1.0): the chat model, when given, named the entity (see :data:`QUESTION_ENTITIES_PROMPT`);
* ``terms``: the analyser's terms (stop words removed): 0.9 × the share of the name's terms that the
  question holds (the question's Chinese words count with their pieces), or 0.35 × the weight
  (:class:`~ragloom.nlp.TermWeigher`) of the question's terms that the description holds, whichever is
  larger (so a description alone makes an entity a seed at ``min_similarity`` 0.3 only when it holds
  nearly all of the question);
* ``vector``: with an embedding function, ``(1 - vector_weight) × lexical + vector_weight × cosine``
  between the question and ``"name. description"`` of the entity (the 20 nearest entities join the
  candidates).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.knowledge.graph.merged import Graph
from ragloom.knowledge.graph.model import Entity
from ragloom.knowledge.graph.prompts import QUESTION_ENTITIES_PROMPT
from ragloom.knowledge.graph.text import clip
from ragloom.nlp import Analyzer, TermWeigher, is_han

EmbedFn = Callable[[Sequence[str]], np.ndarray]
"""Texts → an ``(n, d)`` array of L2-normalised vectors."""

_SURFACE = re.compile(r"[^\W_]+")
MAX_PHRASE_WORDS = 8
MAX_HAN_NAME = 24
NAME_SCORE, ALIAS_SCORE, TERM_FACTOR, DESCRIPTION_FACTOR = 1.0, 0.95, 0.9, 0.35
VECTOR_NEIGHBOURS = 20


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """An entity (canonical ``key``) found for a question, how similar, and how it was found."""

    key: str
    similarity: float
    how: str


def entity_text(entity: Entity) -> str:
    """What an entity's vector is computed from: its name and the start of its description."""
    description = " ".join(entity.description.split())
    return f"{entity.name}. {clip(description, 48)}" if description else entity.name


class GraphIndex:
    """Lookup structures over ``graph`` for questions (see the module docstring). ``embed`` computes the
    entities' vectors unless ``entity_vectors`` (by canonical key) are given; ``embed_query`` (default
    ``embed``) the question's."""

    def __init__(self, graph: Graph, analyzer: Analyzer, *, embed: EmbedFn | None = None,
                 embed_query: EmbedFn | None = None, entity_vectors: Mapping[str, np.ndarray] | None = None) -> None:
        self.graph = graph
        self.analyzer = analyzer
        self.weigher = TermWeigher(analyzer)
        self.phrases: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        self.name_terms: dict[str, frozenset[str]] = {}
        self._by_name_term: dict[str, set[str]] = defaultdict(set)
        self._by_description_term: dict[str, set[str]] = defaultdict(set)
        self._description_terms: dict[str, frozenset[str]] = {}
        for key in sorted(graph.entities):
            self._add(key, graph.entities[key])
        self.chunk_docs: dict[str, str] = {}
        """The document of every source chunk of the graph."""
        for doc_id in graph.doc_ids:
            sg = graph.subgraph(doc_id)
            for entity in sg.entities if sg else []:
                self.chunk_docs.update(dict.fromkeys(entity.source_chunk_ids, doc_id))
        self.embed_query = embed_query or embed
        self._vector_keys: list[str] = []
        self._vectors: np.ndarray | None = None
        if entity_vectors is not None or embed is not None:
            self._set_vectors(embed, entity_vectors or {})

    def surface(self, text: str) -> str:
        """``text`` as phrases are compared: normalised, words separated by single spaces."""
        return " ".join(_SURFACE.findall(self.analyzer.normalize(text)))

    def coarse_terms(self, text: str) -> list[str]:
        """The analyser's terms of ``text``, stop words removed."""
        return self.analyzer.remove_stop_words(self.analyzer.tokenize(text))

    def terms(self, text: str) -> set[str]:
        """:meth:`coarse_terms` and their finer pieces (a Chinese word's parts)."""
        coarse = self.coarse_terms(text)
        return set(coarse) | set(self.analyzer.remove_stop_words(self.analyzer.fine_grained(coarse)))

    def _add(self, key: str, entity: Entity) -> None:
        for i, name in enumerate(entity.names):
            surface = self.surface(name)
            if len(surface) > 1:
                self.phrases[surface].append((key, i > 0))
        terms = frozenset(t for name in entity.names for t in self.coarse_terms(name))
        self.name_terms[key] = terms
        for t in terms:
            self._by_name_term[t].add(key)
        described = frozenset(self.terms(entity.description)) if entity.description else frozenset()
        self._description_terms[key] = described
        for t in described:
            self._by_description_term[t].add(key)

    def _set_vectors(self, embed: EmbedFn | None, given: Mapping[str, np.ndarray]) -> None:
        keys = sorted(self.graph.entities)
        missing = [k for k in keys if k not in given]
        computed: dict[str, np.ndarray] = {}
        if missing and embed is not None:
            rows = embed([entity_text(self.graph.entities[k]) for k in missing])
            computed = {k: np.asarray(rows[i], dtype=np.float32) for i, k in enumerate(missing)}
        self._vector_keys = [k for k in keys if k in given or k in computed]
        if self._vector_keys:
            self._vectors = np.stack([np.asarray(given[k] if k in given else computed[k], dtype=np.float32)
                                      for k in self._vector_keys])

    # -- matching -----------------------------------------------------------------------------------
    def phrase_matches(self, question: str) -> dict[str, EntityMatch]:
        """Entities whose name or alias occurs in ``question``."""
        words = self.surface(question).split()
        found: dict[str, EntityMatch] = {}
        grams: list[str] = []
        for n in range(1, MAX_PHRASE_WORDS + 1):
            grams += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
        for word in words:
            if is_han(word):
                n = len(word)
                grams += [word[i:j] for i in range(n) for j in range(i + 2, min(n, i + MAX_HAN_NAME) + 1) if j - i < n]
        for gram in grams:
            for key, alias in self.phrases.get(gram, ()):
                score = ALIAS_SCORE if alias else NAME_SCORE
                if key not in found or found[key].similarity < score:
                    found[key] = EntityMatch(key, score, "alias" if alias else "name")
        return found

    def term_matches(self, question: str) -> dict[str, EntityMatch]:
        """Entities sharing analysed terms with ``question`` (see the module docstring)."""
        coarse = list(dict.fromkeys(self.analyzer.remove_stop_words(self.analyzer.tokenize(question))))
        asked = self.terms(question)
        weights = dict(self.weigher.weights(coarse))
        scores: dict[str, float] = {}
        for key in sorted({k for t in asked for k in self._by_name_term.get(t, ())}):
            terms = self.name_terms[key]
            scores[key] = TERM_FACTOR * len(terms & asked) / len(terms)
        for key in sorted({k for t in coarse for k in self._by_description_term.get(t, ())}):
            covered = sum(w for t, w in weights.items() if t in self._description_terms[key])
            scores[key] = max(scores.get(key, 0.0), DESCRIPTION_FACTOR * covered)
        return {k: EntityMatch(k, round(s, 6), "terms") for k, s in scores.items() if s > 0}

    def llm_matches(self, question: str, runner: LlmRunner) -> dict[str, EntityMatch]:
        """Entities the chat model names in ``question`` that the graph knows."""
        reply = runner.ask_text(QUESTION_ENTITIES_PROMPT.format(question=question))
        found: dict[str, EntityMatch] = {}
        for line in reply.splitlines():
            name = line.strip().lstrip("-*•0123456789.) ").strip().strip("\"'")
            if not name or name.lower() == "none":
                continue
            keys = [self.graph.key_of(name)] + [k for k, _ in self.phrases.get(self.surface(name), ())]
            for key in keys:
                if key in self.graph.entities:
                    found[key] = EntityMatch(key, NAME_SCORE, "llm")
        return found

    def vector_similarities(self, question: str) -> dict[str, float]:
        """Cosine of the question with every entity that has a vector (empty without vectors)."""
        if self._vectors is None or self.embed_query is None:
            return {}
        q = np.asarray(self.embed_query([question]), dtype=np.float32)[0]
        sims = self._vectors @ q
        return {k: float(s) for k, s in zip(self._vector_keys, sims, strict=True)}

    def match(self, question: str, *, runner: LlmRunner | None = None,
              vector_weight: float = 0.5) -> list[EntityMatch]:
        """The question's entities by every available way, best first (ties by key)."""
        lexical = self.term_matches(question)
        for found in (self.phrase_matches(question), self.llm_matches(question, runner) if runner else {}):
            for key, m in found.items():
                if key not in lexical or lexical[key].similarity <= m.similarity:
                    lexical[key] = m
        vectors = self.vector_similarities(question)
        if vectors:
            near = sorted(vectors, key=lambda k: (-vectors[k], k))[:VECTOR_NEIGHBOURS]
            combined: dict[str, EntityMatch] = {}
            for key in set(lexical) | set(near):
                lex = lexical[key].similarity if key in lexical else 0.0
                score = (1 - vector_weight) * lex + vector_weight * max(0.0, vectors.get(key, 0.0))
                how = lexical[key].how if key in lexical and lex >= vectors.get(key, 0.0) else "vector"
                combined[key] = EntityMatch(key, round(score, 6), how)
            lexical = combined
        return sorted(lexical.values(), key=lambda m: (-m.similarity, m.key))
