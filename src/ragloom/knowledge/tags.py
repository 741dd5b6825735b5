"""Tag features (REFERENCE §5.5): tag a text with the tags of the tag-set rows it matches.

A *tag set* is a knowledge base of chunk method ``tag``: each row is a chunk whose
``tag_keywords`` hold its tags. For a tag set (or several) the **prior** of a tag
``t`` is ``(count_t + 1) / (total + S)``, ``S = 1000``, where ``count_t`` is the
number of rows carrying ``t`` and ``total`` the sum of all counts.

To tag a text (a chunk at ingestion, a question at query time), its weighted
terms search the tag sets' content (full text only); over the best
:data:`TAG_HITS` rows, ``c_t`` counts the rows carrying ``t`` and ``cnt`` sums
them, and::

    score(t) = 0.1 * (c_t + 1) / (cnt + S) / max(1e-6, prior(t))

The ``topn`` best tags are kept. **Departure from the reference:** it rounds
``score`` to an integer and drops zeros; ``score`` is below 0.1 × (c_t+1)/(count_t+1)
whenever ``cnt`` and ``total`` are far below ``S``, so every tag of a tag set
with fewer than about a thousand rows would round to 0 and nothing would ever
be tagged. The score is kept as a float here (4 significant digits); only its
direction matters to the cosine that ranks with it (:mod:`ragloom.retrieval.features`).

A chunk's text must match ``min(3, ceil(n / 10))`` of its ``n ≤ 30`` heaviest
terms (as the reference's ``paragraph`` query); a question, one term.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragloom.docstore.base import Clause, DocStore, Filters, FullTextQuery, SearchRequest
from ragloom.errors import ModelError
from ragloom.nlp import Analyzer, TermWeigher

if TYPE_CHECKING:
    from ragloom.models.chat import ChatModel

log = logging.getLogger(__name__)

S = 1000
TAG_HITS = 100  # tag-set rows whose tags are counted
MAX_TERMS = 30  # heaviest terms of a chunk that search the tag sets
EXAMPLES_KEPT = 50  # tag-set rows kept as examples for the LLM fallback
LIST_PAGE = 1000
# tag-set rows are matched on their content only (not on the tag file's name)
TAG_FIELDS: dict[str, float] = {"content_terms": 1.0, "content_fine_terms": 0.5}


@dataclass(frozen=True, slots=True)
class TagSets:
    """Resolved tag sets: the tag knowledge bases of one tenant and their active versions.

    ``key`` changes whenever a tag set changes (a document added, re-parsed or
    deleted changes the active versions), so caches keyed by it never go stale.
    """

    tenant_id: str
    kb_ids: tuple[str, ...]
    version_ids: tuple[str, ...]
    topn: int = 3

    @property
    def key(self) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        return self.tenant_id, self.kb_ids, self.version_ids

    @property
    def filters(self) -> Filters:
        return Filters(kb_ids=list(self.kb_ids), version_ids=list(self.version_ids))


@dataclass(slots=True)
class TagPrior:
    """Tag counts of the tag sets, their prior distribution, and a few example rows."""

    counts: dict[str, int]
    examples: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def prior(self, tag: str) -> float:
        return (self.counts.get(tag, 0) + 1) / (self.total + S)


def count_tags(docstore: DocStore, tenant_id: str, filters: Filters, *,
               examples: int = 0, seed: int = 0) -> TagPrior:
    """How many rows passing ``filters`` carry each tag (a row's ``tag_keywords`` and the keys of
    its ``tags``), and up to ``examples`` tag-set rows sampled uniformly (reservoir, seeded)."""
    counts: Counter[str] = Counter()
    sample: list[tuple[str, list[str]]] = []
    rng = random.Random(seed)
    seen = offset = 0
    while True:
        page, total = docstore.list_chunks(tenant_id, filters, offset=offset, limit=LIST_PAGE)
        for rec in page:
            counts.update(dict.fromkeys([*rec.tag_keywords, *rec.tags], 1))
            if examples and rec.tag_keywords:
                seen += 1
                if len(sample) < examples:
                    sample.append((rec.content, list(rec.tag_keywords)))
                elif (slot := rng.randrange(seen)) < examples:
                    sample[slot] = (rec.content, list(rec.tag_keywords))
        offset += len(page)
        if not page or offset >= total:
            return TagPrior(counts=dict(counts), examples=sample)


def score_tags(hit_counts: Counter[str] | dict[str, int], prior: TagPrior, topn: int) -> dict[str, float]:
    """The ``topn`` tags of some hits by ``score(t)`` (module docstring), best first."""
    cnt = sum(hit_counts.values())
    scored = [(t, 0.1 * (c + 1) / (cnt + S) / max(1e-6, prior.prior(t))) for t, c in hit_counts.items() if c > 0]
    scored.sort(key=lambda p: (-p[1], p[0]))
    return {t: float(f"{s:.4g}") for t, s in scored[:topn]}


def tag_query(analyzer: Analyzer, text: str, *, min_terms: int | None = None) -> FullTextQuery | None:
    """Full-text query of the ``MAX_TERMS`` heaviest terms of ``text`` over the tag rows' content.

    ``min_terms`` rows must match (default ``min(3, ceil(n / 10))``). None when the text has no term.
    """
    terms = list(dict.fromkeys(analyzer.remove_stop_words(analyzer.tokenize(text))))
    if not terms:
        return None
    weighted = sorted(TermWeigher(analyzer).weights(terms), key=lambda p: -p[1])[:MAX_TERMS]
    n = len(weighted)
    need = min(n, min_terms if min_terms is not None else min(3, math.ceil(n / 10)))
    return FullTextQuery(clauses=[Clause((t,), boost=w) for t, w in weighted], fields=dict(TAG_FIELDS),
                         minimum_should_match=(max(1, need) - 0.5) / n)


class Tagger:
    """Tags texts with one resolved set of tag sets (thread-safe; cheap to build)."""

    def __init__(self, docstore: DocStore, analyzer: Analyzer, sets: TagSets, prior: TagPrior) -> None:
        self.docstore = docstore
        self.analyzer = analyzer
        self.sets = sets
        self.prior = prior

    def tag(self, text: str, *, min_terms: int | None = None) -> dict[str, float]:
        """The ``topn`` tags of ``text`` with their scores; {} when no tag-set row matches."""
        query = tag_query(self.analyzer, text, min_terms=min_terms)
        if query is None or not self.prior.counts:
            return {}
        request = SearchRequest(filters=self.sets.filters, text=query, vector=None, text_top_k=TAG_HITS,
                                vector_top_k=0)
        hits = self.docstore.search(self.sets.tenant_id, request)
        counts = Counter(t for h in hits for t in dict.fromkeys(h.record.tag_keywords))
        return score_tags(counts, self.prior, self.sets.topn)


class TagCache:
    """Tag priors by :attr:`TagSets.key` (least recently used dropped beyond ``size``)."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[tuple[object, ...], TagPrior] = OrderedDict()
        self._lock = threading.Lock()

    def prior(self, docstore: DocStore, sets: TagSets) -> TagPrior:
        with self._lock:
            if sets.key in self._items:
                self._items.move_to_end(sets.key)
                return self._items[sets.key]
        prior = count_tags(docstore, sets.tenant_id, sets.filters, examples=EXAMPLES_KEPT)
        with self._lock:
            self._items[sets.key] = prior
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return prior


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_LLM_PROMPT = """You assign tags to a text. Use only tags from this list:
{tags}

Examples:
{examples}

Reply with only a JSON object mapping at most {topn} of the listed tags to their relevance to the text,
an integer from 1 (barely) to 10 (exactly), e.g. {{"tag": 8}}. Reply {{}} if no tag fits.

Text:
{text}"""


def llm_tags(chat: ChatModel, text: str, prior: TagPrior, topn: int, *, seed: int = 0,
             vocabulary: int = 300) -> dict[str, float]:
    """Tags for a text no tag-set row matched, chosen by a chat model (REFERENCE §5.5: two random
    tag-set rows as examples). Only tags of the tag sets are kept; a model failure or an
    unreadable reply leaves the text untagged (logged)."""
    tags = [t for t, _ in Counter(prior.counts).most_common(vocabulary)]
    if not tags or not text.strip():
        return {}
    picked = random.Random(seed).sample(prior.examples, min(2, len(prior.examples)))
    examples = "\n".join(f"Text: {c[:300]}\nTags: {json.dumps({t: 10 for t in ts}, ensure_ascii=False)}"
                         for c, ts in picked) or "(none)"
    prompt = _LLM_PROMPT.format(tags=", ".join(tags), examples=examples, topn=topn, text=text[:2000])
    try:
        reply = chat.chat([{"role": "user", "content": prompt}], temperature=0.1, max_tokens=200)
    except ModelError as exc:
        log.warning("LLM tagging failed, chunk left untagged: %s", exc.message)
        return {}
    return _parse_llm_tags(reply, set(tags), topn)


def _parse_llm_tags(reply: str, allowed: set[str], topn: int) -> dict[str, float]:
    match = _JSON_OBJECT.search(reply or "")
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        log.warning("LLM tagging: unreadable reply %r, chunk left untagged", (reply or "")[:200])
        return {}
    scored = [(t, float(v)) for t, v in data.items()
              if t in allowed and isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    scored.sort(key=lambda p: (-p[1], p[0]))
    return dict(scored[:topn])


def tag_all(tagger: Tagger, texts: Sequence[str], *, chat: ChatModel | None = None,
            seeds: Sequence[int] = ()) -> list[dict[str, float]]:
    """Tags of each text; texts no row matched go to the chat model when one is given."""
    out = []
    for i, text in enumerate(texts):
        found = tagger.tag(text)
        if not found and chat is not None:
            found = llm_tags(chat, text, tagger.prior, tagger.sets.topn, seed=seeds[i] if i < len(seeds) else i)
        out.append(found)
    return out
