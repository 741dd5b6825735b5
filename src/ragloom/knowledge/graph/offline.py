"""The ``offline`` extraction method: entities and co-occurrence relations without a chat model.

**English** (any Latin text): capitalised noun phrases are entities — runs of capitalised words,
joined by ``of``/``and``/``for``/``the``/``de``/``&`` and followed by numbers (``Bank of England``,
``Procter & Gamble``, ``Orion X-200``, ``Windows 11``), acronyms (``NASA``). A capital at the start of a
sentence proves nothing, so a sentence's first word is dropped when it is a stop word, when the
documents use it in lower case, when it stands alone and is never capitalised inside a sentence,
or when the next word is a known name (``Yesterday Acme Corp`` → ``Acme Corp``). Courtesy titles are
dropped and make the entity a ``PERSON`` (``Dr. Ann Berg`` → ``Ann Berg``); names ending in
``Inc``/``Ltd``/``Company``/``Bank``/``University``... are ``ORGANIZATION`` s; month and weekday names,
and title-case heading lines, are skipped.

**Chinese**: the project's analyser segments the text (jieba's dictionary, as for search) and the
part-of-speech tags of jieba's dictionary — the same table :class:`~ragloom.nlp.TermWeigher` weights
query terms with — decide: person names (``nr``) are ``PERSON``, place names (``ns``) ``GEO``,
organisation names (``nt``) ``ORGANIZATION``, other proper nouns (``nz``) ``ENTITY``, a title in
book-title marks (《战国无双3》) ``WORK``; a name followed
by an organisation word (公司, 集团, 大学, 银行...) is merged with it into one ``ORGANIZATION``.
Words outside the dictionary (found by jieba's HMM: new names, mostly) and common nouns (``n``) that
are not among the most frequent words become entities (``ENTITY``, ``CONCEPT``) only when they recur
in the document. The analyser gives tags only for dictionary words: jieba's HMM tagger
(``jieba.posseg``) is not part of the analyser, so unknown words are judged by recurrence instead.

**Relations**: two entities named in the same sentence (or chunk: ``window="chunk"``) are related; the
weight counts the sentences, the description quotes the first two of them. An entity's description
quotes the first two sentences that name it; its weight counts its mentions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from ragloom.knowledge.graph.model import (
    GENERIC_TYPE,
    ChunkText,
    Entity,
    ExtractionStats,
    ProgressFn,
    Relation,
    Subgraph,
    canonical_name,
    entity_key,
    join_descriptions,
    single_document,
    undirected,
)
from ragloom.knowledge.graph.text import clip, sentences, words_set
from ragloom.nlp import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, Analyzer, is_han
from ragloom.nlp._lexicon import load_lexicon

ORGANIZATION, PERSON, GEO, CONCEPT, WORK = "ORGANIZATION", "PERSON", "GEO", "CONCEPT", "WORK"
ORG_SUFFIXES = words_set(
    "inc ltd llc llp plc corp corporation company co gmbh ag sa bv limited group holdings bank university "
    "institute association foundation agency ministry department council committee laboratory laboratories "
    "labs college school hospital")
TITLES = words_set("mr mrs ms miss dr prof sir madam")
_CONNECTORS = words_set("of and for the de du von van da del")
_CALENDAR = words_set(
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday")
_EXTRA_STARTERS = words_set(
    "however therefore thus moreover furthermore although though because since while after before during "
    "yes many most some every each both either neither one two three first second third next finally "
    "today yesterday tomorrow our their its")
_STOP = ENGLISH_STOP_WORDS | _EXTRA_STARTERS | _CALENDAR
_WORD = re.compile(r"(?:[A-Za-z]\.){2,}|[A-Za-z0-9\u00c0-\u024f]+(?:[-'’&.][A-Za-z0-9\u00c0-\u024f]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_BOOK_TITLE = re.compile(r"《([^《》\n]{1,40})》")  # a Chinese title of a book, film, law, game...
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CN_ORG_WORDS = words_set(
    "公司 有限公司 股份有限公司 集团 集团公司 大学 学院 银行 研究院 研究所 医院 协会 委员会 基金会 实验室 中心 "
    "部 局 厅 署 院")
_CN_TAG_TYPES = {"nr": PERSON, "nrt": PERSON, "nrfg": PERSON, "ns": GEO, "nt": ORGANIZATION, "nz": GENERIC_TYPE}
MAX_PHRASE_WORDS = 6
MAX_PER_SENTENCE = 12


@dataclass(slots=True)
class _Mention:
    name: str
    type: str
    sentence: int  # index into the extraction's sentence list


@dataclass(slots=True)
class _Sentence:
    text: str
    chunk_id: str
    position: int  # index of the chunk


@dataclass(slots=True)
class _Acc:
    """Mentions of one entity (by key) gathered over the document."""

    names: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    sentences: list[int] = field(default_factory=list)
    first: int = 0


class OfflineExtractor:
    """``extract(chunks) -> Subgraph`` without a chat model (see the module docstring).

    ``window``: ``"sentence"`` (default) or ``"chunk"``: where two entities must both be named to be
    related. ``min_recurrence``: mentions a Chinese common noun or unknown word needs.
    ``common_noun_max_freq``: Chinese common nouns more frequent than this in jieba's dictionary
    (公司, 中心...) are never entities on their own."""

    method = "offline"

    def __init__(self, analyzer: Analyzer | None = None, *, window: str = "sentence", min_recurrence: int = 2,
                 common_noun_max_freq: int = 20000, description_sentences: int = 2,
                 sentence_tokens: int = 60) -> None:
        if window not in ("sentence", "chunk"):
            raise ValueError(f"window must be 'sentence' or 'chunk', not {window!r}")
        self.analyzer = analyzer or Analyzer()
        self.window = window
        self.min_recurrence = min_recurrence
        self.common_noun_max_freq = common_noun_max_freq
        self.description_sentences = description_sentences
        self.sentence_tokens = sentence_tokens

    def extract(self, chunks: Sequence[ChunkText], *, progress: ProgressFn | None = None) -> Subgraph:
        doc_id = single_document(chunks)
        units: list[_Sentence] = []
        for position, (chunk_id, _, text) in enumerate(chunks):
            units.extend(_Sentence(s, chunk_id, position) for s in sentences(text))
        confirmed, lower = _capital_evidence(s.text for s in units)
        mentions: list[_Mention] = []
        for i, unit in enumerate(units):
            mentions.extend(_Mention(n, t, i) for n, t in english_phrases(unit.text, confirmed, lower))
            mentions.extend(_Mention(n, t, i) for n, t in self._chinese_words(unit.text))
            mentions.extend(_Mention(canonical_name(n), WORK, i) for n in _BOOK_TITLE.findall(unit.text))
        mentions = self._recurring(mentions)
        graph = self._build(doc_id, units, mentions)
        graph.stats = ExtractionStats(chunks=len(chunks), batches=len(chunks))
        if progress:
            progress(len(chunks), len(chunks))
        return graph

    # -- Chinese ------------------------------------------------------------------------------------
    def _chinese_words(self, text: str) -> list[tuple[str, str]]:
        """``(name, type)`` candidates of the Han runs of ``text``; types ``CONCEPT?``/``ENTITY?`` mark
        the words that must recur (checked by :meth:`_recurring`)."""
        lexicon = load_lexicon()
        out: list[tuple[str, str]] = []
        for run in _HAN_RUN.findall(text):
            words = [w for w in self.analyzer.tokenize(run) if is_han(w)]
            i = 0
            while i < len(words):
                word = words[i]
                tag = lexicon.tags.get(word)
                kind = self._chinese_kind(word, tag, lexicon.freq.get(word))
                nxt = words[i + 1] if i + 1 < len(words) else ""
                if kind is not None and nxt in _CN_ORG_WORDS and kind != CONCEPT + "?":
                    out.append((word + nxt, ORGANIZATION))
                    i += 2
                    continue
                if kind is not None:
                    out.append((word, kind))
                i += 1
        return out

    def _chinese_kind(self, word: str, tag: str | None, freq: int | None) -> str | None:
        if len(word) < 2 or word in CHINESE_STOP_WORDS:
            return None
        if tag in _CN_TAG_TYPES:
            return _CN_TAG_TYPES[tag]
        if freq is None:
            return GENERIC_TYPE + "?"  # unknown to the dictionary: a new name, if it recurs
        if tag == "n" and freq <= self.common_noun_max_freq:
            return CONCEPT + "?"
        return None

    def _recurring(self, mentions: list[_Mention]) -> list[_Mention]:
        counts = Counter(entity_key(m.name) for m in mentions)
        kept = []
        for m in mentions:
            if m.type.endswith("?"):
                if counts[entity_key(m.name)] < self.min_recurrence:
                    continue
                m.type = m.type[:-1]
            kept.append(m)
        return kept

    # -- assembling ---------------------------------------------------------------------------------
    def _build(self, doc_id: str, units: list[_Sentence], mentions: list[_Mention]) -> Subgraph:
        accs: dict[str, _Acc] = {}
        for m in mentions:
            acc = accs.setdefault(entity_key(m.name), _Acc(first=len(accs)))
            acc.names[m.name] += 1
            acc.types[m.type] += 1
            acc.sentences.append(m.sentence)
        entities = [self._entity(doc_id, units, acc) for acc in sorted(accs.values(), key=lambda a: a.first)]
        names = {e.key: e.name for e in entities}
        by_window: dict[int, list[str]] = {}
        for m in mentions:
            window = m.sentence if self.window == "sentence" else units[m.sentence].position
            keys = by_window.setdefault(window, [])
            if entity_key(m.name) not in keys and len(keys) < MAX_PER_SENTENCE:
                keys.append(entity_key(m.name))
        pairs: dict[tuple[str, str], list[int]] = {}
        for window, keys in by_window.items():
            for a, b in combinations(keys, 2):
                pairs.setdefault((a, b) if a <= b else (b, a), []).append(window)
        relations = [self._relation(doc_id, units, names[a], names[b], windows) for (a, b), windows in pairs.items()]
        return Subgraph(doc_id=doc_id, entities=entities, relations=relations, method=self.method)

    def _quotes(self, units: list[_Sentence], indices: Iterable[int]) -> str:
        picked = list(dict.fromkeys(units[i].text for i in indices))[: self.description_sentences]
        return join_descriptions([clip(s, self.sentence_tokens) for s in picked])

    def _entity(self, doc_id: str, units: list[_Sentence], acc: _Acc) -> Entity:
        name = _most_common(acc.names)
        types = Counter({t: n for t, n in acc.types.items() if t != GENERIC_TYPE}) or acc.types
        chunk_ids = list(dict.fromkeys(units[i].chunk_id for i in acc.sentences))
        return Entity(name=name, type=_most_common(types), description=self._quotes(units, acc.sentences),
                      source_chunk_ids=chunk_ids, doc_ids=[doc_id], weight=float(sum(acc.names.values())))

    def _relation(self, doc_id: str, units: list[_Sentence], a: str, b: str, windows: list[int]) -> Relation:
        if self.window == "sentence":
            indices = windows
            chunk_ids = list(dict.fromkeys(units[i].chunk_id for i in windows))
        else:  # windows are chunk positions: quote the sentences of those chunks that name both
            wanted = set(windows)
            inside = [i for i, u in enumerate(units) if u.position in wanted]
            indices = [i for i in inside if _names_both(units[i].text, a, b)]
            chunk_ids = list(dict.fromkeys(units[i].chunk_id for i in inside))
        source, target = undirected(a, b)
        description = self._quotes(units, indices) or f"{source} and {target} are named in the same passage."
        return Relation(source=source, target=target, description=description, weight=float(len(windows)),
                        source_chunk_ids=chunk_ids, doc_ids=[doc_id])


def _names_both(text: str, a: str, b: str) -> bool:
    low = text.casefold()
    return a.casefold() in low and b.casefold() in low


def _most_common(counts: Counter[str]) -> str:
    """The most frequent item; ties go to the one counted first."""
    best = max(counts.values())
    return next(k for k, v in counts.items() if v == best)


# -- English ----------------------------------------------------------------------------------------

def _capital_evidence(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """Words seen capitalised at the start of a capitalised run inside a sentence (not first), and words
    seen in lower case."""
    confirmed: set[str] = set()
    lower: set[str] = set()
    for text in texts:
        previous: re.Match[str] | None = None
        for m in _WORD.finditer(text):
            word = m.group(0)
            if word[0].islower():
                lower.add(word)
            elif previous is not None and word[0].isupper() and not (
                    previous.group(0)[0].isupper() and not text[previous.end() : m.start()].strip()):
                confirmed.add(_POSSESSIVE.sub("", word))
            previous = m
    return confirmed, lower


def _is_capital(word: str) -> bool:
    return word[0].isupper() and len(word.strip(".")) > 1 or (len(word) == 1 and word.isupper() and word != "I")


def _is_heading(words: list[str], text: str) -> bool:
    alpha = [w for w in words if w[0].isalpha()]
    caps = sum(1 for w in alpha if w[0].isupper() or w.lower() in _CONNECTORS)
    return len(alpha) >= 3 and caps == len(alpha) and not re.search(r"[.!?;,:]\s*$", text.strip())


def english_phrases(text: str, confirmed: set[str] | None = None,
                    lower: set[str] | None = None) -> list[tuple[str, str]]:
    """``(name, type)`` of the capitalised noun phrases of one sentence (see the module docstring).
    ``confirmed``: words known capitalised inside sentences; ``lower``: words known in lower case."""
    confirmed = confirmed or set()
    lower = lower or set()
    matches = list(_WORD.finditer(text))
    if not matches or _is_heading([m.group(0) for m in matches], text):
        return []
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(matches):
        if not _is_capital(matches[i].group(0)):
            i += 1
            continue
        j = _run_end(text, matches, i)
        phrase = _trim(matches, i, j, confirmed, lower)
        if phrase is not None:
            out.append(_named(text, matches, *phrase))
        i = j
    return [p for p in out if p[0]]


def _run_end(text: str, matches: list[re.Match[str]], i: int) -> int:
    """The index after the last word of the capitalised run that starts at ``i``."""
    j = i + 1
    while j < len(matches) and j - i < MAX_PHRASE_WORDS:
        gap = text[matches[j - 1].end() : matches[j].start()]
        after_title = gap.strip() == "." and j - 1 == i and matches[i].group(0).lower() in TITLES
        if gap.strip() not in ("", "&") and not after_title:
            break
        word = matches[j].group(0)
        if _is_capital(word) or word.isdigit():
            j += 1
        elif (word in _CONNECTORS or gap.strip() == "&") and j + 1 < len(matches) and _is_capital(
                matches[j + 1].group(0)) and not text[matches[j].end() : matches[j + 1].start()].strip():
            j += 2
        else:
            break
    while j - 1 > i and matches[j - 1].group(0).lower() in _CONNECTORS:
        j -= 1
    return j


def _trim(matches: list[re.Match[str]], i: int, j: int, confirmed: set[str],
          lower: set[str]) -> tuple[int, int, bool] | None:
    """The kept part ``(start, end, person)`` of the run ``[i, j)``, or None."""
    words = [_POSSESSIVE.sub("", m.group(0)) for m in matches[i:j]]
    person = False
    start = 0
    if words[0].lower().rstrip(".") in TITLES:
        person, start = True, 1
    while start < len(words) and (words[start].lower() in _STOP or words[start].lower() in _CONNECTORS):
        start += 1
    if start >= len(words):
        return None
    if i + start == 0 and not person and not _sentence_start_ok(words[start:], confirmed, lower):
        start += 1
        while start < len(words) and words[start].lower() in _CONNECTORS:
            start += 1
        if start >= len(words):
            return None
    kept = words[start:]
    if all(w.lower() in _CALENDAR or w.isdigit() for w in kept):
        return None
    if len(kept) == 1 and (kept[0].isdigit() or len(kept[0]) < 2):
        return None
    return i + start, j, person


def _sentence_start_ok(words: list[str], confirmed: set[str], lower: set[str]) -> bool:
    """Whether the sentence's capitalised first word belongs to the name."""
    first = words[0]
    if first in confirmed or first.isupper() or any(c.isdigit() for c in first):
        return True
    if first.lower() in lower or len(words) == 1:
        return False
    return words[1] not in confirmed


def _named(text: str, matches: list[re.Match[str]], start: int, end: int, person: bool) -> tuple[str, str]:
    name = canonical_name(_POSSESSIVE.sub("", text[matches[start].start() : matches[end - 1].end()]))
    words = name.lower().split()
    organization = len(words) > 1 and (words[-1].rstrip(".") in ORG_SUFFIXES or (
        words[0] in ORG_SUFFIXES and words[1] == "of"))
    kind = PERSON if person else ORGANIZATION if organization else GENERIC_TYPE
    return name, kind
