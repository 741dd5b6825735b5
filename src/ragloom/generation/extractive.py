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

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragloom.dataflow import Answer, Citation, Evidence
from ragloom.generation.conditions import chinese_numbers, contradicts, in_condition
from ragloom.generation.keyterms import (
    analysis_for,
    coverage,
    default_analyzer,
    key_terms,
    name_coverage,
    name_terms,
    spread,
)
from ragloom.generation.qtype import (
    FREQUENCY_QUESTION,
    QType,
    asked_measure,
    asked_noun,
    asked_role,
    asked_superlatives,
    question_type,
)
from ragloom.generation.scoring import SimilarityScorer, numbers
from ragloom.generation.sentences import _CODE, attach_markers, split_sentences
from ragloom.generation.spans import DateKind, Span, date_kind, find_spans, leading_number, names_a_thing
from ragloom.generation.thresholds import (
    EXTRACTIVE_COVERAGE_WEIGHT,
    EXTRACTIVE_FLOOR,
    EXTRACTIVE_MIN_ANSWERABILITY,
    EXTRACTIVE_MIN_NAMES,
    EXTRACTIVE_RELATIVE,
    verdict,
)
from ragloom.nlp import Analyzer
from ragloom.nlp.acronyms import acronym_asked

EXTRACTIVE_MODEL = "extractive"
EXTRACTIVE_MODE = "extractive"
DEFAULT_EMPTY_RESPONSE = "The documents do not contain enough information to answer this question."

_WS = re.compile(r"\s+")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_CJK}]")
_KANA = re.compile("[\u3040-\u30ff]")
_LATIN_WORD = re.compile(rf"[^\W\d_{_CJK}][^\W_{_CJK}]*(?:[-'][^\W_{_CJK}]+)*|\d+(?:[.,]\d+)*")
_ENDS_SENTENCE = re.compile(r"[.!?。！？；;][\"'”’)）\]]*\Z")
_ENDS_OPEN = re.compile(r"[:：,，、\-–—]\Z")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•·▪]|\(?\d{1,3}[.)]|[a-z][.)])\s+")
_HEADING_PATH = re.compile(r"\S\s+>\s+\S")
_KEY_VALUE = r"[^:;|\n]{1,60}:\s*[^;|\n]*"
_TABLE_ROW = re.compile(rf"^\s*{_KEY_VALUE}(?:;\s*{_KEY_VALUE})+\s*$|\s\|\s|\t")
_STRAY_LEAD = re.compile(r"^[，、](?=\S)")
_CONTINUATION_ZH = re.compile(r"^[的了和与及并或，、：；）)》」』]")  # 但, 而 open sentences too ("但因……")
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
MIN_HAN = 6  # a Chinese one at least this many characters (a number counts as one)
_DIGIT_RUN = re.compile(r"\d+(?:[.,]\d+)*")
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
    kind: str = "sentence"  # or "row" (a table row: ``cells``), "line" (a title page's line: ``previous`` lines)
    cells: list[tuple[str, str]] = field(default_factory=list)  # a row's (header path, value) pairs
    stub: str = ""  # a row's name ("State: Kentucky")
    block: str = ""  # a title page's line: the page's other lines


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


NEAREST_LABEL = "Nearest to it, they cover:"


def reads_as_sentence(text: str, *, list_item: bool = False, clause: bool = False) -> bool:
    """Whether ``text`` (markers removed) reads as a whole sentence; see the module docstring.

    A list item may lack the final full stop; a ``clause`` (what follows a semicolon) may open in lower case."""
    core = _LIST_ITEM.sub("", text.strip(), count=1).strip()
    if not core or _ENDS_OPEN.search(core) or _HEADING_PATH.search(core):
        return False
    if not _ENDS_SENTENCE.search(core) and not list_item:
        return False
    language = default_analyzer().language
    japanese = language == "ja" and _KANA.search(core) is not None
    if _is_chinese(core) or japanese:
        # a number counts as a character: "475年至477年在位。" is a sentence, "盖卤王之子。" is too short; in
        # Japanese so does a kana ("ポンプは三か月ごとに点検されます。")
        kana = len(_KANA.findall(core)) if japanese else 0
        return (len(_HAN.findall(core)) + len(_DIGIT_RUN.findall(core)) + kana >= MIN_HAN
                and not _CONTINUATION_ZH.match(core))
    words = _LATIN_WORD.findall(core)
    # a Korean or Arabic sentence says in 15 characters what an English one says in 20
    if len(words) < MIN_WORDS or len(core) < (12 if language in ("ko", "ar") else 20):
        return False
    first = words[0]
    if first[0].islower() and first.islower() and not clause and not _labelled(core):
        return False  # "feature of IBM DB2 for i ...": the tail of a sentence cut at the chunk's start
    capitalised = sum(w[0].isupper() for w in words if w[0].isalpha())
    if language:  # another language's answer: the verb check knows English verbs only, and German
        # capitalises its nouns ("Die Pumpe wird alle drei Monate gewartet.")
        return language == "de" or capitalised < 0.5 * len(words)
    if _verbish(words):
        return True
    # no verb found (the check misses "employees receive ..."): a long, mostly lower-case sentence
    # still is one; a short or title-case one is a heading ("Chapter 3. Introduction.")
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
        after_semicolon = False
        for k, piece in enumerate(split_sentences(text)):
            sentence = piece.strip()
            if k and _STRAY_LEAD.match(sentence):  # "。，1953年8月15日卒于哥廷根。": a comma left by a removed name
                sentence = _STRAY_LEAD.sub("", sentence, count=1)
            pos += 1
            ok = (
                bool(sentence)
                and len(sentence) <= max_chars
                and reads_as_sentence(sentence, list_item=list_item and k == 0, clause=after_semicolon)
            )
            after_semicolon = sentence.endswith((";", "；"))
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
    return _select(question, cands, vecs, scorer, max_sentences=max_sentences, max_chars=max_chars,
                   relative=relative)


def _select(question: str, cands: list[_Candidate], vecs: np.ndarray | None, scorer: SimilarityScorer, *,
            max_sentences: int, max_chars: int, relative: float) -> Selection:
    """:func:`select_sentences` over scored candidates (sentences only)."""
    keep = [i for i, c in enumerate(cands) if c.kind in ("sentence", "list")]
    if not keep:
        return Selection([], 0.0, 0.0)
    cands = [cands[i] for i in keep]
    vecs = vecs[keep] if vecs is not None else None
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


# --- typed answers: the span the question asks for ---------------------------------------------------

_AUTHOR_OR_PUBLISHED = re.compile(
    r"\b(?:author|authors|wrote|written|writer|published|publication|released|dated?|received|accepted|revised|"
    r"submitted|issued|argued|held|filed|signed|journal|docket|solicitation|volume|issue)\b|作者|撰写|发表|出版|编著|"
    r"收到|日期|期刊")
_HOW_LONG = re.compile(r"\bhow long\b|多久|多长时间")
_DURATION = re.compile(r"\b(?:second|minute|hour|day|week|month|year|decade|night)s?\b|centur|"
                       r"秒|分钟|小时|天|周|星期|月|年", re.IGNORECASE)
_ZH_MEASURE = re.compile(r"(?:几|多少)(个月|个小时|平方公里|平方米|公里|公尺|公分|公顷|千米|厘米|毫米|公斤|千克|"
                         r"小时|分钟|美元|欧元|[\u4e00-\u9fff])")
_ZH_TIME_MEASURES = frozenset("天日周月年岁时分秒")
_ZH_CLASSIFIERS = frozenset("个次名位条家座部场件本只辆台届集层所项首张页册章卷艘架枚户种人头匹")
_ZH_UNIT_CHARS = frozenset("米元克吨倍亩")


def asked_zh_measure(question: str) -> str:
    """The measure a Chinese 几/多少 question counts in: a unit word (多少公里), a measure word (几条, 几天), or
    ``""`` (多少的海域: 的 is none)."""
    asked = _ZH_MEASURE.search(question)
    measure = asked.group(1) if asked else ""
    if len(measure) == 1 and measure not in _ZH_CLASSIFIERS | _ZH_TIME_MEASURES | _ZH_UNIT_CHARS:
        return ""
    return measure


def _other_measure(span: str, measure: str) -> bool:
    """Whether a Chinese quantity counts in another measure than the question's 几/多少 asks for: "几条线"
    is not answered by "一个" (车站), "几天" not by "3 次"; the general 个 ("几个") takes any."""
    last = span.rstrip()[-1:]
    if measure in _ZH_CLASSIFIERS and _span_dimension(span) not in ("", "count"):
        return True  # "几条线": not "5.6万平方米"
    if measure == "个" or last == measure or not last or not _HAN.match(last):
        return False
    def group(ch: str) -> str:
        return "time" if ch in _ZH_TIME_MEASURES else ch if ch in _ZH_CLASSIFIERS else ""
    return bool(group(last)) and bool(group(measure)) and group(last) != group(measure)
# The kinds of measure a unit word belongs to: a question that asks for one ("how many kilograms", "how
# heavy", "how far") is never answered with a quantity of another kind ("10 minutes").
_DIMENSIONS: dict[str, re.Pattern[str]] = {
    "time": _DURATION,
    "mass": re.compile(r"\b(?:k?g|mg|grams?|kilo(?:gram)?s?|pounds?|lbs?|tons?|tonnes?|ounces?|oz)\b|"
                       r"公斤|千克|克|吨|斤", re.IGNORECASE),
    "area": re.compile(r"\b(?:km2|km²|m2|m²|hectares?|ha|acres?|square (?:kilo)?(?:metres?|meters?|miles?|feet))\b|"
                       r"平方公里|平方千米|平方公尺|平方米|公顷|亩", re.IGNORECASE),
    "length": re.compile(r"\b(?:mm|cm|km|m|metres?|meters?|kilometres?|kilometers?|inch(?:es)?|in\.|feet|foot|ft|"
                         r"miles?|yards?)\b|毫米|厘米|公里|千米|公尺|公分|英尺|英里|海里|米", re.IGNORECASE),
    "volume": re.compile(r"\b(?:ml|l|litres?|liters?|gallons?|gal)\b|毫升|升", re.IGNORECASE),
    "temperature": re.compile(r"°|\b(?:degrees?|celsius|fahrenheit)\b|摄氏度|度", re.IGNORECASE),
    "money": re.compile(r"[$€£¥]|\b(?:dollars?|euros?|pounds sterling|yuan|rmb|usd|eur|cents?)\b|元|美元|欧元",
                        re.IGNORECASE),
}
_ASKED_DIMENSION = (
    ("mass", re.compile(r"\bweigh|\bhow heavy\b|\bweight\b|多重|重量", re.IGNORECASE)),
    ("time", re.compile(r"周期|间隔|期限|时长|工期|\bhow often\b|\binterval\b|\bperiod\b", re.IGNORECASE)),
    ("area", re.compile(r"\b(?:area|surface)\b|\bhow large\b|面积", re.IGNORECASE)),
    ("length", re.compile(r"\bhow (?:far|tall|wide|high|deep|long is the|thick)\b|\b(?:length|width|height|"
                          r"distance|depth)\b|多远|多高|多宽|多深|长度|宽度|高度|距离|深度|水深|全长|总长|海拔|身长|体长",
                          re.IGNORECASE)),
    ("money", re.compile(r"\bcost|\bprice|\bhow much (?:money|does it cost|do(?:es)? .* (?:cost|charge|pay))|"
                         r"\bfee\b|多少钱|价格|费用|收费|票价|车费|售价|造价|租金", re.IGNORECASE)),
    ("temperature", re.compile(r"\btemperature\b|\bhow (?:hot|cold|warm)\b|温度", re.IGNORECASE)),
)


def _dimension(unit: str) -> str:
    """The kind of measure of a unit ("minutes" -> ``time``, "kg" -> ``mass``); ``""`` when it is none of them."""
    return next((kind for kind, pattern in _DIMENSIONS.items() if pattern.search(unit)), "")


_RATE = re.compile(r"\s*(?:\b(?:per|a|an|each|every)\s+\w+|/\s*\w+|每\S+)\s*$", re.IGNORECASE)


def _span_dimension(span: str) -> str:
    """The kind of measure of a quantity: money by its currency, else its unit's, a rate's "per ..." aside
    ("$85 per hour" -> ``money``, "450 operating hours" -> ``time``)."""
    if _DIMENSIONS["money"].search(span):
        return "money"
    dimension = _dimension(_RATE.sub("", _unit_of(span)))
    if not dimension and span[-1:] in _ZH_CLASSIFIERS:
        return "count"  # "一种", "三条": a count of things, never a length or an area
    return dimension


def asked_dimension(question: str) -> str:
    """The kind of measure a number question asks for: by the unit it counts ("how many kilograms" -> ``mass``)
    or by its verb ("how heavy", "weigh", "how far", "cost"); ``""`` when it asks for none in particular."""
    counted = _dimension(asked_quantity(question))  # "" when it counts nothing in particular
    if counted:
        return counted
    measure = asked_zh_measure(question)  # 几年, 多少公里: the measure the question counts in
    if measure and (counted := _dimension(measure)):
        return counted
    if _HOW_LONG.search(question.lower()):
        return "time"
    return next((kind for kind, pattern in _ASKED_DIMENSION if pattern.search(question)), "")
_TITLE_PAGE_LINES = 20  # lines of a chunk's opening read as its title page
_WINDOW_CHARS = 60  # around a span: the question's terms that surround it (20 for Chinese)
TYPED_WINDOW_WEIGHT = 0.3
TYPED_NAME_WEIGHT = 0.1  # x the share of the question's names and codes the unit itself states (2 号线, not 12 号线)
SPREAD_FLOOR = 0.25  # a question term stated by every evidence sentence keeps this share of its weight near a span
SPREAD_MIN_SENTENCES = 4
TYPED_ADJACENT_BONUS = 0.05  # a Chinese question term right before the span ("现存36页")
PREDICATE_SHARE = 0.3  # a question term stated by at most this share of the evidence sentences: what it asks
TYPED_PREDICATE_WEIGHT = 0.15  # x the share of those terms the unit states
TYPED_UNIT_BONUS = 0.1  # a quantity whose unit is a word of the question ("189 fatalities" for "how many fatalities")
_FILE_QUESTION = re.compile(r"\bfiles?\b|文件")
_FILE_NAME = re.compile(r"[\w\-]\.[A-Za-z][A-Za-z0-9]{0,4}\Z")  # a path's last part has an extension
_TYPED = (QType.NUMBER, QType.DATE, QType.PERSON, QType.PLACE, QType.CODE)
_MUST_HOLD_TYPE = (QType.NUMBER, QType.DATE)  # without a span of these types, the question is not answered
NEAREST_FLOOR = 0.3
TYPED_FLOOR = 0.25
"""A sentence or row holding a span of the asked type answers from this score on (below
``EXTRACTIVE_FLOOR``: the span of the asked type is itself evidence). On the shipped English set the
answering sentences of paraphrased questions ("phones" for devices, "visitor wifi" for guest Wi-Fi)
score 0.26-0.29."""
TYPED_LINE_COVERAGE = 0.5
TYPED_LINE_FILL = 0.2  # a sentence listed as what the documents cover nearest to an unanswered question


_LONG_ROW = re.compile(r"^[^:;\n]{1,200}:\s*[^;\n]*(?:;\s+[^:;\n]{1,200}:\s*[^;\n]*)+$|"
                       r"^[^—\n]{1,200} — [^:;\n]{1,200}:\s")
"""A row of a table's chunk whose header cells are long ("Treatment of DVT and PE ... (VTEt): Rare")."""


def _table_rows(evidence: Sequence[Evidence]) -> list[_Candidate]:
    """Each table row line of the chunks (``"State: Kentucky — Permit: 264,140; Totals: 295,891"``) as a
    candidate with its cells and its name (the stub before ``—``, else its first cell)."""
    out: list[_Candidate] = []
    for e_pos, ev in enumerate(evidence):
        for k, raw in enumerate(ev.content.split("\n")):
            line = raw.strip()
            if not line or (_line_kind(_WS.sub(" ", line)) != "table" and not (ev.table and _LONG_ROW.match(line))):
                continue
            head, sep, rest = line.partition(" — ")
            if not sep:
                head, rest = "", line
            cells = [(label.strip(), value.strip()) for label, colon, value in
                     (part.partition(": ") for part in re.split(r";\s+", rest)) if colon and value.strip()]
            if not cells:
                continue
            stub = head or f"{cells[0][0]}: {cells[0][1]}"
            c = _Candidate(line, e_pos, 10_000 + k, ev, kind="row", cells=cells, stub=stub)
            c.parts = [line]
            out.append(c)
    return out


_ENUMERATION = re.compile(r"[^,;:]+,\s[^,;:]+,?\s(?:and|or)\s[^,;:]+|:\s*[^,;:]+,\s[^,;:]+|[、，][^、，]+[、][^、，]+")
LIST_SHAPE_BONUS = 0.15
"""Added, for a list question, to a gathered list (an intro line and its bullets, or an enumeration the
chunk's end cuts), half of it to a sentence that enumerates ("A, B, and C")."""
MIN_LIST_ITEMS = 2


def _list_blocks(evidence: Sequence[Evidence]) -> list[_Candidate]:
    """Each run of at least :data:`MIN_LIST_ITEMS` bullet or numbered lines in a chunk, with the line that
    introduces it ("Lesson Objectives", "The requirements are:"), as one candidate whose parts are the
    intro and the items."""
    out: list[_Candidate] = []
    for e_pos, ev in enumerate(evidence):
        lines = [_WS.sub(" ", raw).strip() for raw in _CODE.sub("\n", ev.content).split("\n")]
        k = 0
        while k < len(lines):
            if not _LIST_ITEM.match(lines[k]):
                k += 1
                continue
            start = k
            while k < len(lines) and _LIST_ITEM.match(lines[k]):
                k += 1
            items = [_LIST_ITEM.sub("", x, count=1).strip() for x in lines[start:k]]
            items = [x for x in items if x]
            intro = next((lines[j] for j in range(start - 1, max(-1, start - 3), -1) if lines[j]), "")
            if len(items) < MIN_LIST_ITEMS or not intro or len(intro) > 200 or _LIST_ITEM.match(intro):
                continue
            c = _Candidate(f"{intro} {'; '.join(items)}", e_pos, 30_000 + start, ev, kind="list")
            c.parts = [intro.rstrip(":：") + ":", *items]
            out.append(c)
        cut = _cut_enumeration(ev.content)
        if cut is not None:
            c = _Candidate(cut[1], e_pos, 40_000, ev, previous=cut[0], kind="list")
            c.parts = _parts(c)
            out.append(c)
    return out


def _cut_enumeration(content: str) -> tuple[str | None, str] | None:
    """The sentence a chunk ends with when the chunk's end cuts it in the middle of an enumeration ("These
    effects include stall warning activation, airspeed disagree alert, and"): it still quotes the items it
    lists (with the sentence before it, when it opens with a pronoun); ``None`` otherwise."""
    paragraphs = _paragraphs(content)
    if not paragraphs:
        return None
    pieces = [p.strip() for p in split_sentences(paragraphs[-1][0]) if p.strip()]
    if not pieces or _ENDS_SENTENCE.search(pieces[-1]) or len(re.findall(r"[,，、]", pieces[-1])) < 2:
        return None
    last = pieces[-1].rstrip(" ,，、") + " …"
    if not _ENUMERATION.search(last) or not reads_as_sentence(last, list_item=True):
        return None
    return (pieces[-2] if len(pieces) > 1 else None), last


MAX_LINE_WORDS = 12  # a longer line is prose, not a title page's title, author, date or number line
_SECTION_HEADING = re.compile(r"^(?:[IVXLC]+|\d+(?:\.\d+)*|[A-Z])[.)]\s+\S")


def _title_lines(evidence: Sequence[Evidence], known: set[str]) -> list[_Candidate]:
    """A chunk's first lines that are not sentences (a title page: title, authors, date, docket number),
    each with the lines before it as its context (``previous``) and the title page's other lines as its
    ``block``; a numbered section heading ("II. BASICS OF ...") opens no title page."""
    out: list[_Candidate] = []
    for e_pos, ev in enumerate(evidence):
        lines = [_WS.sub(" ", raw).strip() for raw in ev.content.split("\n")]
        lines = [x for x in lines if re.search(r"[^\W_]", x)][:_TITLE_PAGE_LINES]
        if not lines or _SECTION_HEADING.match(lines[0]):
            continue
        for k, line in enumerate(lines):
            if (len(line) > 200 or line.lower() in known or _SECTION_HEADING.match(line)
                    or len(_LATIN_WORD.findall(line)) > MAX_LINE_WORDS):
                continue
            c = _Candidate(line, e_pos, 20_000 + k, ev, previous="; ".join(lines[max(0, k - 3):k]) or None, kind="line")
            c.parts = [line]
            c.block = "\n".join(lines[:k] + lines[k + 1:])
            out.append(c)
    return out


def _role_lines(evidence: Sequence[Evidence], role: str, known: set[str]) -> list[_Candidate]:
    """The lines of a chunk that are not sentences and write ``role`` (an agenda's "Unrepresented Employee:
    Superintendent Wendy Gudalewicz", a letterhead's "Jane Roe, Director"), each with the chunk's first
    line (its title) and the line before it as its context."""
    out: list[_Candidate] = []
    pattern = re.compile(rf"\b{re.escape(role)}", re.IGNORECASE)
    for e_pos, ev in enumerate(evidence):
        lines = [_WS.sub(" ", raw).strip() for raw in ev.content.split("\n")]
        lines = [x for x in lines if x]
        for k, line in enumerate(lines):
            if len(line) > 300 or line.lower() in known or not pattern.search(line):
                continue
            context = "; ".join(dict.fromkeys(x for x in (lines[0], lines[k - 1] if k else "") if x and x != line))
            c = _Candidate(line, e_pos, 30_000 + k, ev, previous=context or None, kind="line")
            c.parts = [line]
            c.block = ev.content
            out.append(c)
    return out


TYPED_UNDER_TITLE = 0.3
"""Added to a person's name on a title page's line right under the line naming the work asked about (the
author line under the title: "Who wrote Creativity in Machine Learning?")."""


def _under_title(c: _Candidate, terms: list[tuple[str, float]]) -> bool:
    """Whether a line near the top of a title page (its first :data:`TITLE_TOP_LINES`) comes right under
    a short line (the title) that states most of the question's key terms."""
    if c.sentence_pos - 20_000 >= TITLE_TOP_LINES:
        return False
    before = (c.previous or "").split("; ")[-2:]
    return any(coverage(terms, [line]) >= TYPED_LINE_COVERAGE and len(line.split()) <= MAX_LINE_WORDS
               for line in before)


TITLE_TOP_LINES = 8


@dataclass(slots=True)
class _Typed:
    """The span a typed answer leads with, the unit it was found in and its score."""

    lead: str
    unit: _Candidate
    score: float
    support: str


def _in_question(span: str, question: str, q_terms: set[str]) -> bool:
    """Whether the span only repeats the question (its number, or names all of whose terms it states)."""
    if normalise(span) and normalise(span) in normalise(question):
        return True
    terms = set(default_analyzer().tokenize(span))
    return bool(terms) and terms <= q_terms


def normalise(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


TYPED_LEAD_BONUS = 0.5
"""A quantity the question's own words lead up to ("a final sample of 432" for "the final sample size", "a
mean age of 41.33 years" for "the mean age")."""


def _introduced(text: str, span: Span, measure: set[str]) -> bool:
    """Whether the few words right before a span state two of the words naming the measure asked for (one
    when it is one word): "a final sample of 432" for "the final sample size"."""
    if _is_chinese(text) or not measure:
        return False
    before = default_analyzer().tokenize(" ".join(text[:span.start].split()[-5:]))
    return len(measure & set(before)) >= min(2, len(measure))


def _said_just_before(text: str, span: Span, said: list[tuple[str, float]]) -> bool:
    """Whether a Chinese term of the question (two characters or more) ends right before the span, or
    before a 于/为/达/约 that joins them ("现存36页", "成立于1968年", "全长约548公里")."""
    before = re.sub(r"[于为达约了是共有：:\s]{1,2}$", "", text[max(0, span.start - 12):span.start])
    return any(len(t) >= 2 and _HAN.match(t) and before.endswith(t) for t, _ in said)


def _window(text: str, start: int, end: int) -> str:
    width = _WINDOW_CHARS // 3 if _is_chinese(text) else _WINDOW_CHARS
    return text[max(0, start - width):end + width]


def _unit_answers(question: str, c: _Candidate, terms: list[tuple[str, float]], names: list[str],
                  extra: str = "", documents: dict[str, list[str]] | None = None) -> bool:
    """Whether a unit holding a span of the asked type answers the question: its chunk (or, given
    ``documents``, its document's chunks: a table row, a name the question asks by) states the
    question's names and codes, and it scores at least ``TYPED_FLOOR`` (a title page's line: it and
    the lines before it, ``extra``, state ``TYPED_LINE_COVERAGE`` of the question's key terms)."""
    documents = documents or {}
    texts = [c.text] + ([extra] if extra else [])
    # a file name's words count (cupertino_usd_4-6-16.pdf states Cupertino): its separators are spaces
    if not names_stated(names, texts + [c.evidence.content, re.sub(r"[_.]+", " ", c.evidence.document_name)]
                        + documents.get(c.evidence.doc_id, [])):
        return False
    if c.kind == "line":  # a title page's line: its page's other lines state the question's terms
        # but the words that name what is asked ("what date", "the author's name"): the line's span is it
        kept = [(t, w) for t, w in terms if t not in _ASKED_KIND_WORDS]
        if not kept:  # a Chinese question without a Latin word over an English title page
            return c.score >= TYPED_FLOOR
        share = coverage(kept, texts + [c.block] + documents.get(c.evidence.doc_id, [])) / (sum(w for _, w in kept)
                                                                                           or 1.0)
        return share >= TYPED_LINE_COVERAGE
    return c.score >= TYPED_FLOOR


_ASKED_KIND_WORDS = frozenset({"date", "day", "year", "time", "author", "name", "writer"})
"""Key terms (stemmed) that name the kind of thing a question asks for, not what it is about."""


TYPED_MANY_NAMES = 4
"""A question naming at least this many names and codes may have one of them missing from the unit's
chunk (a name the PDF's text garbles: "Frdric" for "Frederic"); with fewer, every one must be stated."""


def names_stated(names: list[str], texts: list[str]) -> bool:
    """Whether ``texts`` state the question's names and codes (all, or all but one of many:
    :data:`TYPED_MANY_NAMES`)."""
    share = name_coverage(names, texts)
    if share >= EXTRACTIVE_MIN_NAMES:
        return True
    return len(names) >= TYPED_MANY_NAMES and round(share * len(names)) >= len(names) - 1


_MONTH_STEMS = {m[:3]: m for m in [
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december"]}


@functools.cache
def _header_terms(label: str) -> frozenset[str]:
    """A header path's terms, with their pieces (``Dec-2015`` states ``dec`` and ``2015``) and a month's
    abbreviation read as the month (``Dec`` states "December")."""
    analyzer = default_analyzer()
    terms = analyzer.tokenize(label)
    out = set(terms) | set(analyzer.fine_grained(terms))
    out |= {analyzer.stem(_MONTH_STEMS[t]) for t in list(out) if t in _MONTH_STEMS}
    return frozenset(out)


_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
ROW_NAME_EXTRA = 0.05
"""Taken from a row's answer per word its name states and the question not (at most three): of two rows
naming the asked thing, the one naming it alone ("1 Year Fixed Rate") answers before the one naming
another thing too ("Investment Home Loan 1 Year Fixed Rate")."""


def _typed_in_row(question: str, qtype: QType, c: _Candidate, terms: list[tuple[str, float]],
                  q_terms: set[str]) -> _Typed | None:
    """The cell of a table row the question names: the row's name — its stub, or another of its cells'
    values ("Company: TaylorMade Golf Company", "Routes: Transpacific") — states a key term of the question,
    and the cell's header path the most of the others (``Permit`` for "how many permit checks ... in
    Kentucky", ``Totals`` for "the total ... in Kentucky"); its value of the asked type. When no header
    states a term of a number question ("how much was paid to ..." over ``AMOUNT ($)``), the row's one
    cell holding a quantity is the answer."""
    analyzer = default_analyzer()
    weights = dict(terms)
    stub_terms = set(analyzer.tokenize(c.stub))
    value_terms = {t for label, value in c.cells for t in analyzer.tokenize(value)}
    if not (stub_terms | value_terms) & set(weights):
        return None
    best: tuple[float, str, str] | None = None
    quantities: list[tuple[str, str]] = []
    naming: set[str] = set(stub_terms)  # the words of the cells that name the row, not answer it
    for label, value in c.cells:
        if f"{label}: {value}" in c.stub:
            continue
        if qtype in _TYPED and not [sp for sp in find_spans(value, qtype)
                                    if not _in_question(sp.text, question, q_terms)]:
            if (cell_terms := set(analyzer.tokenize(value))) & q_terms:
                naming |= cell_terms  # "Investment Home Loan 1 Year Fixed Rate": its "1 Year" is the question's
            continue
        if qtype is QType.NUMBER:
            quantities.append((label, value))
        label_terms = _header_terms(label)
        hit = sum(weights.get(t, 0.0) for t in label_terms)
        if hit <= 0:
            continue
        unasked = label_terms - q_terms
        if "%" in value:  # "Annual percentage rate: 4.04%": the header's "percentage" is the value's own unit
            unasked -= _header_terms("percent percentage")
        fit = hit - 0.02 * len(unasked)
        if best is None or fit > best[0] + 1e-9:  # a tie (sums of one set in another order) keeps the first
            best = (fit, label, value)
    if best is None and len(quantities) == 1:
        best = (0.0, *quantities[0])
    others = " ".join(v for lb, v in c.cells if lb != best[1]) if best else ""
    if best is None or not (stub_terms | set(analyzer.tokenize(others))) & set(weights):
        return None
    named_more = ROW_NAME_EXTRA * min(3, len(naming - q_terms))
    return _Typed(f"{best[1]}: {best[2]}", c, c.score + TYPED_WINDOW_WEIGHT + best[0] - named_more, c.text)


_ASKED_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much)\s+((?:[a-z][\w\-]*\s?){1,3})|"
    r"^\s*(?:what|which)\s+(?:is|was|are|were)\s+(?:the\s+)?((?:[a-z][\w\-]*\s?){1,4})|"
    r"^\s*(?:what|which)\s+((?:[a-z][\w\-]*\s?){1,3})", re.IGNORECASE)
_PHRASE_END = frozenset((_AUXILIARY_TEXT + " of in on for from to at by with that which who the a an per "
                         "resulted result").split())
TYPED_UNIT_WEIGHT = 0.4
NAMED_RELATIVE = 0.5  # a sentence naming what "which <noun>" asks for may score this share of the best one


def _after_role(span: Span, role: str) -> Span:
    """A name span without the role it opens with ("Superintendent Wendy Gudalewicz" -> "Wendy Gudalewicz")."""
    if not role or not span.text.lower().startswith(role):
        return span
    first = span.text.split()[0]
    rest = span.text[len(first):].lstrip()
    return Span(rest, span.end - len(rest), span.end)


def _answers_by_name(text: str, span: Span, noun: str, role: str) -> bool:
    """A name that answers "which <noun>" (it ends in the noun) or "who is the <role> of" (the role is
    written right before or after it: "Superintendent Wendy Gudalewicz", "Wendy Gudalewicz,
    Superintendent")."""
    if noun and _names_by(span.text, noun):
        return True
    if not role or len(span.text.split()) < 2:
        return False
    if span.text.lower().startswith(role):  # "Superintendent Wendy Gudalewicz": the role, then the name
        return len(span.text.split()) >= 3
    if role in span.text.lower():
        return False
    before = text[max(0, span.start - 40):span.start].lower()
    after = text[span.end:span.end + 40].lower()
    return (re.search(rf"\b{re.escape(role)}s?[’']?s?\s*[:,]?\s*$", before) is not None
            or re.match(rf"\s*[,(]\s*(?:the\s+)?{re.escape(role)}\b", after) is not None)


def _names_by(span: str, noun: str) -> bool:
    """Whether a name ends with the noun a question asks by ("Soekarno-Hatta International Airport",
    "Information Innovation Office")."""
    words = span.split()
    return bool(words) and len(words) >= 2 and words[-1].lower().rstrip("s") == noun.rstrip("s")
"""x the calibrated similarity of what a number question asks to count ("people died", "hourly labor rate")
to a quantity's unit ("157 fatalities", "$85 per hour"): the quantity of the asked kind leads, not a
footnote number ("sensor 4 input") in a sentence closer to the question."""


def asked_quantity(question: str) -> str:
    """What a number question counts or measures: the words after "how many/much" or "what is the", up to
    an auxiliary or a preposition ("How many people died in ..." -> ``people died``); ``""`` if none."""
    m = _ASKED_QUANTITY.search(question)
    if not m:
        return ""
    words: list[str] = []
    for w in next(g for g in m.groups() if g).split():
        if w.lower() in _PHRASE_END:
            break
        words.append(w)
    return " ".join(words)


def _unit_of(span: str) -> str:
    """A quantity's unit: the words after its number ("189 fatalities" -> ``fatalities``)."""
    return re.sub(r"^[$€£¥]?\s?[\d.,]+\s*%?", "", span).strip()


def _unit_fits(question: str, qtype: QType, cands: list[_Candidate],
               scorer: SimilarityScorer | None) -> dict[str, float]:
    """The calibrated similarity of :func:`asked_quantity` to the unit of each quantity in the sentences."""
    asked = asked_quantity(question) if qtype is QType.NUMBER and not _is_chinese(question) else ""
    if not asked or scorer is None:
        return {}
    units = sorted({u for c in cands if c.kind == "sentence" for sp in find_spans(c.text, qtype)
                    if (u := _unit_of(sp.text))})
    qvec = scorer.query(asked)
    vecs = scorer.passages(units)
    if qvec is None or vecs is None or not units:
        return {}
    return dict(zip(units, (float(x) for x in scorer.vector_similarity(qvec, vecs)[0]), strict=True))


def _typed_answer(question: str, qtype: QType, cands: list[_Candidate],
                  scorer: SimilarityScorer | None = None) -> _Typed | None:
    """The best span of the asked type among the units that answer the question (see :func:`extractive_answer`)."""
    terms = key_terms(question)
    names = name_terms(question)
    q_terms = set(default_analyzer().tokenize(question))
    unit_words = {t for t, _ in terms}
    fits = _unit_fits(question, qtype, cands, scorer)
    key_set = {t for t, _ in terms}
    name_set = set(names)
    zh_question = bool(_HAN.search(question))
    latin_terms = _latin_terms(terms) if zh_question else terms
    documents: dict[str, list[str]] = {}  # a table row's chunk may lack its table's title: its document's other chunks
    for ev in {id(c.evidence): c.evidence for c in cands}.values():
        documents.setdefault(ev.doc_id, []).append(ev.content)
    duration = qtype is QType.NUMBER and _HOW_LONG.search(question.lower()) is not None
    dimension = asked_dimension(question) if qtype is QType.NUMBER else ""
    measure = asked_zh_measure(question)  # 几天: a number of days, 多少公里: of kilometres
    noun = asked_noun(question) if qtype in (QType.PERSON, QType.PLACE) else ""
    role = asked_role(question) if qtype is QType.PERSON else ""
    measured = set(default_analyzer().tokenize(asked_measure(question))) if qtype is QType.NUMBER else set()
    file_asked = qtype is QType.PLACE and _FILE_QUESTION.search(question.lower()) is not None
    # "which airport" / "who is the superintendent of": the units naming what is asked by, with those names
    by_name = {id(c): names_of for c in cands if (noun or role) and c.kind in ("sentence", "line")
               if (names_of := [sp for sp in find_spans(c.text, qtype) if _answers_by_name(c.text, sp, noun, role)])}
    named = set(by_name)
    written = numbers(question)  # a span leading with one of these is the question's own number ("flight 610")
    q_numbers = written | chinese_numbers(question)  # a unit stating these states the question's case (满十年: 10)
    # "the 1 Year Fixed Rate": rows named alike but by another number ("2 Year Fixed Rate") are other rows
    numbered = {_DIGITS.sub("#", c.stub) for c in cands if c.kind == "row" and numbers(c.stub) & q_numbers}
    typed: list[_Typed] = []
    top = max((c.score for c in cands if c.kind == "sentence"), default=0.0)
    sentences = [c.text for c in cands if c.kind == "sentence"]
    shares = spread(list(dict.fromkeys(terms + latin_terms)), sentences) if len(sentences) >= SPREAD_MIN_SENTENCES \
        else {}
    names_only_in_latin = _is_chinese(question) and qtype in (QType.PERSON, QType.PLACE)
    for c in cands:
        if c.kind == "list":
            continue
        if contradicts(question, c.text):
            continue  # "满十年": the clause "满 1 年不满 10 年的，5 天" is the rule for another case
        if names_only_in_latin and c.kind != "row" and _is_chinese(c.text):
            continue  # jieba's person and place tags miss too many names (东华实业) to lead with one
        if named and c.kind != "row" and id(c) not in named:
            continue  # "which airport": some unit names an airport; the others answer it not
        if (qtype not in _MUST_HOLD_TYPE and c.kind == "sentence"
                and c.score < (NAMED_RELATIVE if id(c) in named else EXTRACTIVE_RELATIVE) * top):
            continue  # a name or place in a sentence well below the best one is no answer
        if c.kind == "row":
            if not numbers(c.stub) & q_numbers and _DIGITS.sub("#", c.stub) in numbered:
                continue
            found = _typed_in_row(question, qtype, c, terms, q_terms)
            if found and _unit_answers(question, c, terms, names, documents=documents):
                typed.append(found)
            continue
        if qtype not in _TYPED:
            continue
        context = c.previous if c.kind == "line" and c.previous else ""
        if c.kind == "line" and not context:
            continue
        if named:  # the name the question asks by, whole (its noun is a word of the question: kept)
            found_spans = [_after_role(sp, role) for sp in by_name[id(c)]]
        elif qtype in (QType.PERSON, QType.PLACE):
            found_spans = [t for t in (_without_subject(sp, key_set, name_set) for sp in find_spans(c.text, qtype))
                           if t]
        else:
            found_spans = find_spans(c.text, qtype)
        spans = [sp for sp in found_spans if not _in_question(sp.text, question, q_terms)
                 and (not duration or _DURATION.search(sp.text))
                 and (not dimension or _span_dimension(sp.text) in ("", dimension))
                 and not (qtype is QType.NUMBER and _names_a_thing(c.text, sp, written))
                 and not in_condition(question, c.text, sp.start)
                 and not (measure and _other_measure(sp.text, measure))]
        unit_terms = latin_terms if zh_question and not _is_chinese(c.text) else terms
        if not spans or not _unit_answers(question, c, unit_terms, names, context,
                                          documents=documents if id(c) in named else None):
            continue
        stated = TYPED_NAME_WEIGHT * name_coverage(names, [c.text, context]) if names else 0.0
        # "线路全长548公里" after "德龙烟铁路是……": what its chunk said before it counts half
        before = c.evidence.content[:max(0, c.evidence.content.find(c.text))] if c.kind == "sentence" else ""
        if names and before:
            stated = (stated + TYPED_NAME_WEIGHT * name_coverage(names, [before, c.text])) / 2
        if q_numbers:
            stated += TYPED_NAME_WEIGHT * len(q_numbers & numbers(f"{c.text} {context}")) / len(q_numbers)
        # around the span, what the question says of its subject ("receive comments"), not the subject's
        # names ("737 MAX": every chunk of its document states them; ``stated`` counts them already)
        said = [(t, w) for t, w in unit_terms if t not in name_set] or unit_terms
        if shares:  # a term most sentences state (the subject: 中国空间技术研究院) says less than one few do (成立)
            said = [(t, w * max(SPREAD_FLOOR, 1.0 - shares.get(t, 0.0))) for t, w in said]
        said_weight = sum(w for _, w in said) or 1.0  # their share of what they could state, 0..1
        # what the question asks of its subject in few sentences ("成立", "启用"): the unit that states it
        asked_of = [(t, w) for t, w in said if shares.get(t, 1.0) <= PREDICATE_SHARE]
        predicate = (TYPED_PREDICATE_WEIGHT * coverage(asked_of, [c.text, context], [before] if before else ())
                     / sum(w for _, w in asked_of) if asked_of else 0.0)
        for sp in spans:
            window = _window(c.text, sp.start, sp.end)
            if context:
                window = f"{context}\n{window}"
            score = c.score + stated + predicate + TYPED_WINDOW_WEIGHT * coverage(said, [window]) / said_weight
            if c.kind == "line":  # an author or date line is the name or date alone, not a name inside a line
                score += TYPED_LINE_FILL * len(sp.text) / max(1, len(c.text))
                if qtype is QType.PERSON and len(sp.text.split()) >= 2 and _under_title(c, unit_terms):
                    score += TYPED_UNDER_TITLE
            if qtype is QType.DATE:
                score += _date_preference(question, sp.text)
            if fits:
                score += TYPED_UNIT_WEIGHT * fits.get(_unit_of(sp.text), 0.0)
            if qtype is QType.NUMBER and (set(default_analyzer().tokenize(sp.text)) & unit_words
                                          or (measure and sp.text.endswith(measure))):
                score += TYPED_UNIT_BONUS
            if measured and _introduced(c.text, sp, measured):
                score += TYPED_LEAD_BONUS
            elif zh_question and _said_just_before(c.text, sp, said):  # "现存36页", "成立于1968年"
                score += TYPED_ADJACENT_BONUS
            if file_asked and _FILE_NAME.search(sp.text):  # "where is its settings file": a path to a file
                score += TYPED_UNIT_BONUS
            typed.append(_Typed(sp.text, c, score, f"{context}; {c.text}" if context else c.text))
    # "羗山道的长度": when some sentence states a quantity in the asked measure (4.5公里), a bare number (17) is
    # not the answer
    if any(t.unit.kind != "row" and ((dimension and _span_dimension(t.lead) == dimension)
                                     or (measure and t.lead.endswith(measure))) for t in typed):
        typed = [t for t in typed if t.unit.kind == "row" or _unit_of(t.lead)]
    # "the quickest train": a span whose unit states the question's superlative answers before the others
    superlatives = asked_superlatives(question)
    picked = [t for t in typed if _states_superlative(t.unit.text, superlatives)] or typed
    return max(picked, key=lambda t: t.score, default=None)


def _states_superlative(text: str, superlatives: list[str]) -> bool:
    lower = text.lower()
    return any(s in lower if _HAN.search(s) else re.search(rf"(?<![^\W\d_]){re.escape(s)}(?![^\W\d_])", lower)
               for s in superlatives)


_MINOR_WORDS = frozenset([
    "of", "and", "for", "the", "in", "on", "to", "a", "an", "by", "with", "at", "de", "des", "du", "la", "le"])


def expansion(text: str, acronym: str) -> str:
    """The words ``text`` spells ``acronym`` out with: the words right before "(ACRONYM)" whose initials
    (minor words such as "of" skipped) give its letters ("maneuvering characteristics augmentation system
    (MCAS)"), or the words inside "ACRONYM (...)"; ``""`` when it does not."""
    letters = [ch.lower() for ch in acronym if ch.isalpha()]
    for m in re.finditer(rf"\(\s*{re.escape(acronym)}\s*\)", text):
        words = re.findall(r"[^\W\d_][\w'’\-]*", text[max(0, m.start() - 200):m.start()])
        found = _spelled(words[::-1], letters[::-1])
        if found:
            return " ".join(found[::-1])
    for m in re.finditer(rf"\b{re.escape(acronym)}\s*\(([^()]{{3,120}})\)", text):
        words = re.findall(r"[^\W\d_][\w'’\-]*", m.group(1))
        if _spelled(words[::-1], letters[::-1]) == words[::-1] or (words and words[0][0].lower() == letters[0]
                                                                  and words[-1][0].lower() == letters[-1]):
            return m.group(1).strip()
    return ""


def _spelled(words: list[str], letters: list[str]) -> list[str]:
    """The shortest run of ``words`` (read backwards) whose initials, minor words skipped, are ``letters``
    (also read backwards); a hyphenated word may give one letter per part."""
    out: list[str] = []
    k = 0
    for w in words:
        if k == len(letters):
            break
        parts = [x for x in w.split("-") if x]
        initials = [x[0].lower() for x in parts][::-1]
        if letters[k:k + len(initials)] == initials:
            k += len(initials)
        elif w[0].lower() == letters[k]:
            k += 1
        elif w.lower() in _MINOR_WORDS and out:
            pass
        else:
            return []
        out.append(w)
    return out if k == len(letters) else []


def _acronym_answer(question: str, evidence: Sequence[Evidence]) -> Answer | None:
    """"What does MCAS stand for?": the expansion the evidence gives, then the sentence that gives it."""
    acronym = acronym_asked(question)
    if not acronym:
        return None
    for ev in evidence:
        for piece in split_sentences(_WS.sub(" ", ev.content)):
            found = expansion(piece, acronym)
            if found:
                sentence = piece.strip()
                pieces = [(found, ev)] + ([(sentence, ev)] if normalise(sentence) != normalise(found) else [])
                text, sentences, citations = _cited(pieces)
                return Answer(text, EXTRACTIVE_MODEL, [ev], citations, sentences, mode=EXTRACTIVE_MODE)
    return None


def _latin_terms(terms: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A Chinese question's terms an English text can state (its Latin words: "Creativity in Machine
    Learning", "permit"), their weights summing to 1 again; its Chinese words say nothing of an English unit."""
    kept = [(t, w) for t, w in terms if not _HAN.search(t)]
    total = sum(w for _, w in kept)
    return [(t, w / total) for t, w in kept] if total > 0 else []


def _without_subject(sp: Span, key_set: set[str], name_set: set[str]) -> Span | None:
    """A name without the question's own words: "Superintendent Wendy Gudalewicz" for "Who is the
    superintendent ...?" is ``Wendy Gudalewicz``; a name holding one of the question's names ("ALEXANDRE
    MIRZAYANCE" for "... in Knowles v. Mirzayance?") or another of its words is the question's subject, not
    its answer (None)."""
    analyzer = default_analyzer()
    words = sp.text.split()
    terms = [set(analyzer.tokenize(w)) for w in words]
    if any(t & name_set for t in terms):
        return None
    lo, hi = 0, len(words)
    while lo < hi and terms[lo] and terms[lo] <= key_set:
        lo += 1
    while hi > lo and terms[hi - 1] and terms[hi - 1] <= key_set:
        hi -= 1
    if lo == hi or any(t & key_set for t in terms[lo:hi]):
        return None
    if (lo, hi) == (0, len(words)):
        return sp
    text = " ".join(words[lo:hi])
    start = sp.start + sp.text.index(words[lo])
    return Span(text, start, start + len(text))


def _names_a_thing(text: str, sp: Span, q_numbers: set[str]) -> bool:
    """A number that is part of a name or code (``Flight 610``, ``Vol. 85``) or that the question itself
    states (the question's own name: "flight 610") is not a quantity that answers it."""
    if names_a_thing(text, sp):
        return True
    lead = leading_number(sp.text)
    return bool(lead) and lead in {re.sub(r"[.,]", "", n) for n in q_numbers}


_ASKS_CLOCK = re.compile(r"\bwhat time\b|\bat what time\b|\bwhat hour\b|几点|什么时间")
_ASKS_CONDITION = re.compile(r"\bwhen\s+(?:should|must|do|can|to|will|would|shall)\b|\bwhen\s+\w+\s+(?:I|we|you)\b|"
                             r"什么时候(?:应该|需要|要|可以)", re.IGNORECASE)
_ASKS_RANGE = re.compile(r"哪一?年(?:到|至)哪一?年|从(?:哪|何时|什么时候).{0,6}(?:到|至)|"
                         r"\bfrom (?:what|which|when)\b.{0,30}\bto (?:what|which|when)\b|"
                         r"\bbetween (?:what|which) (?:years|dates)\b")
_RANGE = re.compile(r"\d.*(?:至|到|[~\-－—–]|\bto\b|\buntil\b).*\d")
_ASKS_YEAR = re.compile(r"\b(?:what|which|in what)\s+(?:year|decade|century)\b|哪一?年|年份")
DATE_PREFERENCE = {DateKind.FULL: 0.2, DateKind.DAY: 0.15, DateKind.YEAR: 0.05, DateKind.WEEKDAY: 0.05,
                   DateKind.CLOCK: -0.1, DateKind.DURATION: -0.1, DateKind.CONDITION: -0.15}
"""Added to a date span's score by its precision: "when was X issued / on what date" is answered by a
calendar date before a year, a clock time, a duration ("at least two business days") or a condition."""


def _date_preference(question: str, span: str) -> float:
    """:data:`DATE_PREFERENCE` for the span, except for the kinds the question's words ask for: a clock time
    ("what time"), a year ("which year"), a condition or duration ("when should I ...")."""
    kind = date_kind(span)
    lower = question.lower()
    if _ASKS_RANGE.search(lower):  # "哪年到哪年", "from when to when": a range before a single date
        return 0.25 if _RANGE.search(span) else 0.0
    if kind is DateKind.CLOCK and _ASKS_CLOCK.search(lower):
        return 0.2
    if kind is DateKind.YEAR and _ASKS_YEAR.search(lower):
        return 0.2
    if kind in (DateKind.CONDITION, DateKind.DURATION) and _ASKS_CONDITION.search(question):
        return 0.0
    return DATE_PREFERENCE[kind]


def _cited(pieces: list[tuple[str, Evidence]]) -> tuple[str, list[str], list[Citation]]:
    """Answer text, sentences and citations for sentences each quoted from one chunk."""
    sentences: list[str] = []
    text: list[str] = []
    citations: list[Citation] = []
    for part, ev in pieces:
        finished = _finish(part)
        citations.append(Citation(len(sentences), ev.index, 1.0, True, False, verdict=verdict(1.0),
                                  supporting_sentence=part))
        sentences.append(finished)
        text.append(attach_markers(finished, [ev.index]))
    return " ".join(text), sentences, citations


def _refusal(cands: list[_Candidate], empty_response: str, nearest: str = NEAREST_LABEL) -> Answer:
    """The documents do not answer: ``empty_response``, then the sentences nearest to the question, cited."""
    near = sorted((c for c in cands if c.kind == "sentence" and c.score >= NEAREST_FLOOR), key=lambda c: -c.score)[:2]
    if not near:
        return Answer(empty_response, EXTRACTIVE_MODEL, insufficient=True, mode=EXTRACTIVE_MODE)
    body, sentences, citations = _cited([(c.text, c.evidence) for c in near])
    for cit in citations:
        cit.sentence += 1
    lead = _finish(empty_response)
    refs = sorted({id(c.evidence): c.evidence for c in near}.values(), key=lambda e: e.index)
    return Answer(f"{lead} {nearest} {body}", EXTRACTIVE_MODEL, refs, citations, [lead, *sentences],
                  insufficient=True, mode=EXTRACTIVE_MODE)


def refusal(language: str, empty_response: str) -> str:
    """``empty_response`` in ``language`` when it is the default one and the language has its own
    analyser (:data:`REFUSALS`); as it is otherwise."""
    if language in REFUSALS and empty_response == DEFAULT_EMPTY_RESPONSE:
        return REFUSALS[language][0]
    return empty_response


# the refusal and the label of the nearest sentences in the languages with an analyser of their own (Chinese
# and English questions keep the English ones, as before)
REFUSALS: dict[str, tuple[str, str]] = {
    "de": ("Die Dokumente enthalten nicht genug Informationen, um diese Frage zu beantworten.",
           "Am nächsten kommen sie ihr hier:"),
    "fr": ("Les documents ne contiennent pas assez d'informations pour répondre à cette question.",
           "Ce qu'ils disent de plus proche :"),
    "es": ("Los documentos no contienen información suficiente para responder a esta pregunta.",
           "Lo más cercano que tratan:"),
    "it": ("I documenti non contengono informazioni sufficienti per rispondere a questa domanda.",
           "Ciò che trattano di più vicino:"),
    "pt": ("Os documentos não contêm informação suficiente para responder a esta pergunta.",
           "O mais próximo que abordam:"),
    "nl": ("De documenten bevatten niet genoeg informatie om deze vraag te beantwoorden.",
           "Wat ze het dichtst erbij behandelen:"),
    "ru": ("В документах недостаточно информации, чтобы ответить на этот вопрос.",
           "Ближе всего к нему в них сказано:"),
    "ar": ("لا تحتوي المستندات على معلومات كافية للإجابة عن هذا السؤال.", "أقرب ما تتناوله:"),
    "ja": ("ドキュメントには、この質問に答えるのに十分な情報がありません。", "最も近い内容は次のとおりです："),
    "ko": ("문서에 이 질문에 답할 만큼의 정보가 없습니다.", "가장 가까운 내용은 다음과 같습니다:"),
}


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
    analyzer: Analyzer | None = None,
) -> Answer:
    """The answer to ``question`` from ``evidence``, every sentence quoted and followed by its ``[ID:n]``.

    The question's type (:func:`~ragloom.generation.qtype.question_type`) says what it asks for. For a
    number, a date, a person or a place the answer leads with a span of that type
    (:func:`~ragloom.generation.spans.find_spans`) — in a sentence that answers the question (the
    gates of :attr:`Selection.answers`), scored by the sentence's score plus the share of the
    question's key terms within a few words of the span — or with the cell of a table row whose name
    and header path state the question's terms; the supporting sentence or row follows. "Who wrote /
    when was X published" also reads a title page's lines. A number or date question no unit holds a
    span for is not answered.

    Otherwise: the best few evidence sentences. score = ``vector_weight``·calibrated cosine(query,
    sentence) + the rest · term similarity (term only without an embedder). Sentences are taken best
    first while they score at least ``relative``·best (list questions: more of them, from every
    chunk), fit in ``max_chars`` together and are not near-duplicates of one already taken; they are
    then put in evidence order and reading order.

    When nothing answers the question the answer is ``empty_response`` with ``insufficient=True``,
    followed by the (at most two) sentences nearest to the question, cited. Each citation quotes its
    chunk verbatim: support 1.0, verdict ``supported``, the quoted sentence as the supporting sentence.
    ``analyzer`` is the searched knowledge bases' (None: the Chinese and English analysis): a language with
    an analyser of its own reads the question and the evidence with it, and refuses in that language when
    ``empty_response`` is the default.
    """
    analyzer = analyzer or default_analyzer()
    language = analyzer.language
    empty_response = refusal(language, empty_response)
    nearest = REFUSALS[language][1] if language in REFUSALS else NEAREST_LABEL
    with analysis_for(analyzer):
        return _extractive_answer(question, evidence, scorer, max_sentences=max_sentences, max_chars=max_chars,
                                  relative=relative, vector_weight=vector_weight, empty_response=empty_response,
                                  nearest=nearest)


def _extractive_answer(question: str, evidence: Sequence[Evidence], scorer: SimilarityScorer, *, max_sentences: int,
                       max_chars: int, relative: float, vector_weight: float, empty_response: str,
                       nearest: str) -> Answer:
    qtype = question_type(question)
    cands = _candidates(evidence, max_chars)
    known = {c.text.lower() for c in cands}
    units = cands + _table_rows(evidence) + (_list_blocks(evidence) if qtype is QType.LIST else [])
    if qtype in (QType.PERSON, QType.DATE, QType.CODE):
        units += _title_lines(evidence, known)
    role = asked_role(question) if qtype is QType.PERSON else ""
    if role:
        taken = {c.text.lower() for c in units}
        units += _role_lines(evidence, role, known | taken)
    if not units:
        return Answer(empty_response, EXTRACTIVE_MODEL, insufficient=True, mode=EXTRACTIVE_MODE)
    spelled = _acronym_answer(question, evidence)
    if spelled is not None:
        return spelled
    vecs = _score(question, units, evidence, scorer, vector_weight)
    typed = _typed_answer(question, qtype, units, scorer)
    if typed is not None:
        pieces = [(typed.lead, typed.unit.evidence)]
        if normalise(typed.support) != normalise(typed.lead):
            pieces.append((typed.support, typed.unit.evidence))
        text, sentences, citations = _cited(pieces)
        return Answer(text, EXTRACTIVE_MODEL, [typed.unit.evidence], citations, sentences, mode=EXTRACTIVE_MODE)
    if qtype in _MUST_HOLD_TYPE:
        return _refusal(units, empty_response, nearest)
    if qtype is QType.LIST:
        max_sentences, relative = max(max_sentences, 5), min(relative, LIST_RELATIVE)
        for c in units:
            if c.kind == "list":
                c.score += LIST_SHAPE_BONUS
            elif c.kind == "sentence" and _ENUMERATION.search(c.text):
                c.score += LIST_SHAPE_BONUS / 2
    noun = asked_noun(question) if qtype is QType.OTHER else ""
    naming: set[int] = set()
    if noun:  # "in what industry": a sentence that speaks of an industry ("metallurgy ... industrial sites")
        stem = set(default_analyzer().tokenize(noun))
        for c in units:
            if c.kind == "sentence" and stem & set(default_analyzer().tokenize(c.text)):
                c.score += ASKED_NOUN_BONUS
                naming.add(id(c))
    frequency = bool(FREQUENCY_QUESTION.search(question.lower()))
    if frequency:  # "how often": a sentence that states a frequency ("every 450 hours", 每年一次) answers it
        for c in units:
            if c.kind in ("sentence", "row") and FREQUENCY_SPAN.search(c.text):
                c.score += FREQUENCY_BONUS
    selection = _select(question, units, vecs, scorer, max_sentences=max_sentences, max_chars=max_chars,
                        relative=relative)
    if not selection.answers:
        return _refusal(units, empty_response, nearest)
    chosen = selection.sentences
    stating = [c for c in chosen if FREQUENCY_SPAN.search(c.text)] if frequency else []
    stating = stating or [c for c in chosen if id(c) in naming]
    top = max((c.score for c in chosen), default=0.0)
    if naming and not stating and not frequency:  # none chosen speaks of the noun: as "which airport", the
        # best one that does answers, down to half the best sentence's score (the others cannot say which)
        best_naming = max((c for c in units if id(c) in naming), key=lambda c: c.score)
        if best_naming.score >= NAMED_RELATIVE * top:
            stating = [best_naming]
            chosen = [best_naming, *chosen[: max(0, max_sentences - 1)]]
    if stating:  # the reply leads with the frequency (or the noun asked by), the rest in reading order after it
        lead = max(stating, key=lambda c: c.score)
        chosen = [lead, *(c for c in chosen if c is not lead)]
    if qtype is QType.YESNO:
        chosen = _with_qualifier(chosen, units, max_chars)
    pieces = [(part, c.evidence) for c in chosen for part in c.parts]
    text, sentences, citations = _cited(pieces)
    refs = sorted({id(c.evidence): c.evidence for c in chosen}.values(), key=lambda e: e.index)
    return Answer(text, EXTRACTIVE_MODEL, refs, citations, sentences, mode=EXTRACTIVE_MODE)


def _with_qualifier(chosen: list[_Candidate], units: list[_Candidate], max_chars: int) -> list[_Candidate]:
    """A yes/no question's best sentence with the sentence that follows it in its paragraph, if not quoted
    yet: the rule's exception or condition ("... closed on Mondays. On Thursdays the galleries stay open
    until 21:00.") answers "is it ever ...?" as much as the rule does."""
    best = max(chosen, key=lambda c: c.score)
    after = next((c for c in units if c.kind == "sentence" and c.evidence is best.evidence
                  and c.sentence_pos == best.sentence_pos + 1 and c.previous == best.text), None)
    if after is None or any(c is after for c in chosen):
        return chosen
    if sum(len(p) for c in chosen for p in c.parts) + len(after.text) > max_chars:
        return chosen
    at = next(i for i, c in enumerate(chosen) if c is best)
    after.parts = [after.text]
    return [*chosen[:at + 1], after, *chosen[at + 1:]]


LIST_RELATIVE = 0.6  # a list question quotes sentences down to this share of the best one's score
ASKED_NOUN_BONUS = 0.1  # a sentence stating the noun a "what <noun>" question asks by (as FREQUENCY_BONUS)
FREQUENCY_BONUS = 0.15  # a sentence stating a frequency, for a "how often" question (as LIST_SHAPE_BONUS)
FREQUENCY_SPAN = re.compile(
    r"\b(?:every|each|per|once\s+(?:a|an|per|every)|twice\s+(?:a|an|per|every)|\d+\s+times\s+(?:a|an|per|every))"
    r"\s+(?:\d[\d,.]*\s+)?(?:[a-z]+\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|quarters?|years?|"
    r"seasons?|shifts?|uses?|cycles?|kilomet(?:er|re)s?|km|miles?|visits?|inspections?)\b|"
    r"\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|biannually|semi-annually)\b|"
    r"每(?:隔)?[\d一二三四五六七八九十两半几]*[个]?(?:秒|分钟|小时|天|日|周|星期|月|季度|年)|[一二三四五六七八九十两\d]+次|"
    # "every <n> <unit>" in de, fr, es, it, pt, nl, ru, ar; ja ごと / 毎, ko 마다
    r"\b(?:alle|jede[ns]?|tous les|toutes les|chaque|cada|ogni|a cada|elke|iedere|om de|каждые|каждый|каждую|"
    r"раз в)\s+\w+|\bكل\s+\w+|\w+(?:ごと|毎)に?|毎(?:日|週|月|年)|\w+마다|매(?:일|주|달|월|년)",
    re.IGNORECASE)
"""A frequency stated in a sentence: "every 450 operating hours", "twice a year", "annually", 每半年一次."""
