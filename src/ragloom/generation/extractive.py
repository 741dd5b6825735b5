"""Extractive answers: the evidence sentences that best answer the question, cited.

Used when no chat model is configured. Nothing is generated: every sentence of the answer is
copied from a chunk and followed by that chunk's ``[ID:n]``, and the answer is labelled
``mode="extractive"``. It must read as an answer, so only *whole sentences of prose* are
candidates (:func:`evidence_sentences`):

* a chunk's lines are read as blocks: heading paths (``A > B``) and table rows (``col: v; col: v``,
  ``a | b``) are not prose; lines a PDF or text file wrapped are joined back;
* a candidate must read as a sentence (:func:`reads_as_sentence`): it ends like one (not with a
  colon), is long enough, does not start in the middle of a sentence (a chunk cut: a lower-case
  opening, unless it is a short label such as ``tallow error E1024: ...``), and — in English — has
  a verb-like word or is long and mostly lower case; headings, lone table cells and fragments fail;
* its score is read in context: 0.3 of it is its chunk's similarity to the question;
* a sentence opening with a pronoun ("It was introduced in 7.2.") brings the sentence before it.

The answer is ``insufficient`` (the empty response, no citations) unless the chosen sentences
answer the question (:attr:`Selection.answers`, thresholds in :mod:`ragloom.generation.thresholds`):
the best sentence scores at least ``EXTRACTIVE_FLOOR``; the cited chunks state every name and
code of the question (``HX-220``, ``IBM i Access Client Solutions``:
:func:`~ragloom.generation.keyterms.name_terms`); and the best score plus half the share of the
question's key terms the sentences state (:func:`~ragloom.generation.keyterms.coverage`) reaches
``EXTRACTIVE_MIN_ANSWERABILITY`` — sharing the topic is not answering the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragloom.dataflow import Answer, Citation, Evidence
from ragloom.generation.keyterms import coverage, key_terms, name_coverage, name_terms
from ragloom.generation.scoring import SimilarityScorer
from ragloom.generation.sentences import _CODE, attach_markers, split_sentences
from ragloom.generation.thresholds import (
    EXTRACTIVE_COVERAGE_WEIGHT,
    EXTRACTIVE_FLOOR,
    EXTRACTIVE_MIN_ANSWERABILITY,
    EXTRACTIVE_MIN_NAMES,
    EXTRACTIVE_RELATIVE,
    verdict,
)

EXTRACTIVE_MODEL = "extractive"
EXTRACTIVE_MODE = "extractive"
DEFAULT_EMPTY_RESPONSE = "The documents do not contain enough information to answer this question."

_WS = re.compile(r"\s+")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_CJK}]")
_LATIN_WORD = re.compile(rf"[^\W\d_{_CJK}][^\W_{_CJK}]*(?:[-'][^\W_{_CJK}]+)*|\d+(?:[.,]\d+)*")
_ENDS_SENTENCE = re.compile(r"[.!?。！？；;][\"'”’)）\]]*\Z")
_ENDS_OPEN = re.compile(r"[:：,，、\-–—]\Z")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•·▪]|\(?\d{1,3}[.)]|[a-z][.)])\s+")
_HEADING_PATH = re.compile(r"\S\s+>\s+\S")
_KEY_VALUE = r"[^:;|\n]{1,60}:\s*[^;|\n]*"
_TABLE_ROW = re.compile(rf"^\s*{_KEY_VALUE}(?:;\s*{_KEY_VALUE})+\s*$|\s\|\s|\t")
_CONTINUATION_ZH = re.compile(r"^[的了和与及并但而或，、：；）)》」』]")
_AUXILIARY_TEXT = """
is are was were be been being am has have had do does did can could will would shall should may might must
cannot isn't aren't wasn't weren't hasn't haven't doesn't don't didn't won't
"""
_AUXILIARIES = frozenset(_AUXILIARY_TEXT.split())
# words after which an "-s"/"-ed" word is a noun or a participle, not the verb of a clause
_NOUN_CONTEXT_TEXT = """
the a an of and or its their his her our your my these those some many few all both each every no
in on for with from by to at as into per
"""
_NOUN_CONTEXT = frozenset(_NOUN_CONTEXT_TEXT.split())
_ANAPHORIC_OPENING = re.compile(r"^(?:it|its|they|their|this|these|that|those|he|she|such)\b|^(?:它|其|该|这|此)",
                                re.IGNORECASE)
MIN_WORDS = 4  # an English sentence has at least this many words
MIN_HAN = 6  # a Chinese one at least this many characters
CHUNK_SHARE = 0.3  # of a sentence's score that is its chunk's
MIN_VERBLESS_WORDS = 8  # a sentence without a recognised verb needs this many words
MAX_LABEL_WORDS = 4  # "tallow error E1024: ..." is a label; a longer lower-case opening is a cut sentence


@dataclass(slots=True)
class Sentence:
    """A candidate sentence of a chunk (position ``pos`` among the chunk's candidates' source
    sentences; ``previous`` the sentence before it in the same paragraph, if it reads as one)."""

    text: str
    pos: int
    previous: str | None = None


@dataclass(slots=True)
class _Candidate:
    text: str
    evidence_pos: int  # position of its evidence in the input list
    sentence_pos: int  # position of the sentence inside the chunk
    evidence: Evidence
    previous: str | None = None
    score: float = 0.0
    parts: list[str] = field(default_factory=list)  # the sentences it stands for (with context)


def _is_chinese(text: str) -> bool:
    han = len(_HAN.findall(text))
    return han > 0 and han >= 0.3 * sum(c.isalpha() for c in text)


def _verbish(words: list[str]) -> bool:
    """An English verb-like word: an auxiliary, or an ``-s``/``-ed`` word not after a determiner
    or preposition (``controls which rows`` yes, ``permissions and masks`` no)."""
    lower = [w.lower() for w in words]
    if any(w in _AUXILIARIES for w in lower):
        return True
    for i in range(1, len(words)):
        w = words[i]
        if not w.islower() or len(w) < 4 or lower[i - 1] in _NOUN_CONTEXT:
            continue
        if w.endswith("ed") or (w.endswith("s") and not w.endswith(("ss", "us", "is", "ics"))):
            return True
    return False


def reads_as_sentence(text: str, *, list_item: bool = False) -> bool:
    """Whether ``text`` (markers removed) reads as a whole sentence; see the module docstring.

    A list item may lack the final full stop."""
    core = _LIST_ITEM.sub("", text.strip(), count=1).strip()
    if not core or _ENDS_OPEN.search(core) or _HEADING_PATH.search(core):
        return False
    if not _ENDS_SENTENCE.search(core) and not list_item:
        return False
    if _is_chinese(core):
        return len(_HAN.findall(core)) >= MIN_HAN and not _CONTINUATION_ZH.match(core)
    words = _LATIN_WORD.findall(core)
    if len(words) < MIN_WORDS or len(core) < 20:
        return False
    first = words[0]
    if first[0].islower() and first.islower() and not _labelled(core):
        return False  # "feature of IBM DB2 for i ...": the tail of a sentence cut at the chunk's start
    if _verbish(words):
        return True
    # no verb found (the check misses "employees receive ..."): a long, mostly lower-case sentence
    # still is one; a short or title-case one is a heading ("Chapter 3. Introduction.")
    capitalised = sum(w[0].isupper() for w in words if w[0].isalpha())
    return len(words) >= MIN_VERBLESS_WORDS and capitalised < 0.5 * len(words)


def _labelled(text: str) -> bool:
    """``short label: a clause`` ("tallow error E1024: the user has exceeded ...")."""
    label, sep, clause = text.partition(": ")
    return bool(sep) and len(_LATIN_WORD.findall(label)) <= MAX_LABEL_WORDS and _verbish(_LATIN_WORD.findall(clause))


def _line_kind(line: str) -> str:
    if _HEADING_PATH.search(line) and not _ENDS_SENTENCE.search(line):
        return "heading"
    if _TABLE_ROW.search(line):
        return "table"
    return "prose"


def _continues(previous: str, line: str) -> bool:
    """Whether ``line`` continues the wrapped line before it (same sentence)."""
    if _ENDS_SENTENCE.search(previous) or _LIST_ITEM.match(line):
        return False
    if line[:1].islower() or previous.endswith((",", "-", "，", "、")):
        return True
    return bool(_HAN.match(line)) and bool(_HAN.search(previous[-1:])) and len(previous) >= 15


def _paragraphs(content: str) -> list[tuple[str, bool]]:
    """``(text, is a list item)`` for each prose paragraph of a chunk; table rows contribute their
    cells' values (a cell holding a sentence can still be one)."""
    out: list[tuple[str, bool]] = []
    current: list[str] = []

    def flush() -> None:
        nonlocal current
        if current:
            text = " ".join(current) if not _is_chinese(current[0]) else "".join(current)
            out.append((text, bool(_LIST_ITEM.match(current[0]))))
        current = []

    for raw in _CODE.sub("\n", content).split("\n"):
        line = _WS.sub(" ", raw).strip()
        if not line:
            flush()
            continue
        kind = _line_kind(line)
        if kind != "prose":
            flush()
            if kind == "table":
                for cell in re.split(r"\s*[;|\t]\s*", line):
                    value = cell.split(":", 1)[1].strip() if re.match(r"^[^:]{1,60}:\s", cell) else cell.strip()
                    if value:
                        out.append((value, False))
            continue
        if current and _continues(current[-1], line):
            current.append(line)
            continue
        flush()
        current = [line]
    flush()
    return out


def evidence_sentences(content: str, max_chars: int = 700) -> list[Sentence]:
    """The sentences of a chunk an extractive answer may quote, in reading order."""
    out: list[Sentence] = []
    pos = 0
    for text, list_item in _paragraphs(content):
        previous: str | None = None
        for k, piece in enumerate(split_sentences(text)):
            sentence = piece.strip()
            pos += 1
            ok = (
                bool(sentence)
                and len(sentence) <= max_chars
                and reads_as_sentence(sentence, list_item=list_item and k == 0)
            )
            if ok:
                out.append(Sentence(sentence, pos, previous))
            previous = sentence if ok else None
    return out


def _candidates(evidence: Sequence[Evidence], max_chars: int) -> list[_Candidate]:
    out: list[_Candidate] = []
    seen: set[str] = set()
    for e_pos, ev in enumerate(evidence):
        for s in evidence_sentences(ev.content, max_chars):
            key = _WS.sub(" ", s.text.lower())
            if key in seen:
                continue
            seen.add(key)
            c = _Candidate(s.text, e_pos, s.pos, ev, s.previous)
            c.parts = _parts(c)
            out.append(c)
    return out


def _score(
    question: str,
    cands: list[_Candidate],
    evidence: Sequence[Evidence],
    scorer: SimilarityScorer,
    vector_weight: float,
) -> np.ndarray | None:
    """Set each candidate's score: ``1 - CHUNK_SHARE`` of the sentence's own (a sentence opening
    with a pronoun together with the sentence before it) plus ``CHUNK_SHARE`` of its chunk's, so a
    sentence is read in its context ("The fourteen most recent files are retained." under
    "tallow logging"). Returns the candidates' passage vectors (or None)."""
    texts = [" ".join(c.parts) for c in cands]
    used = sorted({c.evidence_pos for c in cands})
    chunks = [evidence[i] for i in used]
    term = np.array([scorer.term_similarity(question, t) for t in texts], dtype=np.float32)
    chunk_term = np.array([scorer.term_similarity(question, ev.content) for ev in chunks], dtype=np.float32)
    qvec = scorer.query(question)
    vecs = scorer.passages(texts)
    chunk_vecs = scorer.evidence_vectors(chunks)
    if qvec is None or vecs is None or chunk_vecs is None:
        scores, chunk_scores = term, chunk_term
    else:
        scores = vector_weight * scorer.vector_similarity(qvec, vecs)[0] + (1 - vector_weight) * term
        chunk_scores = vector_weight * scorer.vector_similarity(qvec, chunk_vecs)[0] + (1 - vector_weight) * chunk_term
    by_pos = dict(zip(used, chunk_scores, strict=True))
    for c, s in zip(cands, scores, strict=True):
        c.score = (1 - CHUNK_SHARE) * float(s) + CHUNK_SHARE * float(by_pos[c.evidence_pos])
    return vecs


def _redundant(
    i: int,
    chosen: list[int],
    cands: list[_Candidate],
    vecs: np.ndarray | None,
    scorer: SimilarityScorer,
) -> bool:
    for j in chosen:
        if vecs is not None and float(vecs[i] @ vecs[j]) > 0.97:
            return True
        a, b = cands[i].text, cands[j].text
        if min(scorer.term_similarity(a, b), scorer.term_similarity(b, a)) > 0.8:
            return True
    return False


def _finish(text: str) -> str:
    """A list item without a full stop gets one (the answer joins sentences into prose)."""
    if _ENDS_SENTENCE.search(text):
        return text
    return text + ("。" if _is_chinese(text) else ".")


def _parts(c: _Candidate) -> list[str]:
    """The candidate with the sentence before it when it opens with a pronoun ("It was ...")."""
    body = _LIST_ITEM.sub("", c.text, count=1) if _LIST_ITEM.match(c.text) else c.text
    if c.previous and _ANAPHORIC_OPENING.match(body):
        return [c.previous, c.text]
    return [c.text]


@dataclass(slots=True)
class Selection:
    """What :func:`select_sentences` found: the chosen candidates in reading order, the best
    score, the share of the question's key terms they state, and the share of the question's
    names and codes their chunks state."""

    sentences: list[_Candidate]
    best: float
    coverage: float
    names: float = 1.0

    @property
    def answerability(self) -> float:
        """best + EXTRACTIVE_COVERAGE_WEIGHT x coverage: similarity and stated key terms together."""
        return self.best + EXTRACTIVE_COVERAGE_WEIGHT * self.coverage

    @property
    def answers(self) -> bool:
        """Whether the sentences answer the question (the thresholds of :mod:`ragloom.generation.thresholds`)."""
        return (bool(self.sentences) and self.best >= EXTRACTIVE_FLOOR and self.names >= EXTRACTIVE_MIN_NAMES
                and self.answerability >= EXTRACTIVE_MIN_ANSWERABILITY)


def select_sentences(
    question: str,
    evidence: Sequence[Evidence],
    scorer: SimilarityScorer,
    *,
    max_sentences: int = 3,
    max_chars: int = 700,
    relative: float = EXTRACTIVE_RELATIVE,
    vector_weight: float = 0.7,
) -> Selection:
    """The sentences an extractive answer would quote, and the figures that decide whether they
    answer the question (see :func:`extractive_answer`)."""
    cands = _candidates(evidence, max_chars)
    if not cands:
        return Selection([], 0.0, 0.0)
    vecs = _score(question, cands, evidence, scorer, vector_weight)
    order = sorted(range(len(cands)), key=lambda i: -cands[i].score)
    best = cands[order[0]].score
    chosen: list[int] = []
    used_chars = 0
    for i in order:
        c = cands[i]
        if len(chosen) >= max_sentences or c.score < max(EXTRACTIVE_FLOOR, relative * best):
            break
        if _redundant(i, chosen, cands, vecs, scorer):
            continue
        fresh = [p for p in c.parts if not any(p in cands[j].parts for j in chosen)]
        size = sum(len(p) for p in fresh)
        if chosen and used_chars + size > max_chars:
            continue
        c.parts = fresh
        chosen.append(i)
        used_chars += size
    chosen.sort(key=lambda i: (cands[i].evidence_pos, cands[i].sentence_pos))
    picked = [cands[i] for i in chosen]
    terms = key_terms(question)
    texts = [p for c in picked for p in c.parts]
    context = list({id(c.evidence): c.evidence.content for c in picked}.values())
    names = name_coverage(name_terms(question), texts + context)
    return Selection(picked, best, coverage(terms, texts, context), names)


def extractive_answer(
    question: str,
    evidence: Sequence[Evidence],
    scorer: SimilarityScorer,
    *,
    max_sentences: int = 3,
    max_chars: int = 700,
    relative: float = EXTRACTIVE_RELATIVE,
    vector_weight: float = 0.7,
    empty_response: str = DEFAULT_EMPTY_RESPONSE,
) -> Answer:
    """The best few evidence sentences for ``question``, each followed by its ``[ID:n]``.

    score = ``vector_weight``·calibrated cosine(query, sentence) + the rest · term similarity
    (term only without an embedder). Sentences are taken best first while they score at least
    ``relative``·best, fit in ``max_chars`` together and are not near-duplicates of one already
    taken; they are then put in evidence order and reading order. When they do not answer the
    question (:attr:`Selection.answers`) the answer is ``empty_response`` with no citations and
    ``insufficient=True``. Each citation quotes its chunk verbatim: support 1.0, verdict
    ``supported``, the quoted sentence as the supporting sentence.
    """
    selection = select_sentences(question, evidence, scorer, max_sentences=max_sentences, max_chars=max_chars,
                                 relative=relative, vector_weight=vector_weight)
    if not selection.answers:
        return Answer(empty_response, EXTRACTIVE_MODEL, insufficient=True, mode=EXTRACTIVE_MODE)
    sentences: list[str] = []
    pieces: list[str] = []
    citations: list[Citation] = []
    for c in selection.sentences:
        for part in c.parts:
            text = _finish(part)
            citations.append(Citation(len(sentences), c.evidence.index, 1.0, True, False,
                                      verdict=verdict(1.0), supporting_sentence=part))
            sentences.append(text)
            pieces.append(attach_markers(text, [c.evidence.index]))
    refs = sorted({id(c.evidence): c.evidence for c in selection.sentences}.values(), key=lambda e: e.index)
    return Answer(" ".join(pieces), EXTRACTIVE_MODEL, refs, citations, sentences, mode=EXTRACTIVE_MODE)
