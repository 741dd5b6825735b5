"""A question's key terms and how much of them a text states (the project's text analysis).

Key terms are the question's analysed terms (:class:`~ragloom.nlp.Analyzer`: stemmed English,
jieba-segmented Chinese) without stop words and without the words of the question form
(``how often``, ``how much``; 多久, 多长...), weighted with :class:`~ragloom.nlp.TermWeigher`
(rarer words, numbers and codes weigh more; weights sum to 1). :func:`coverage` is the weight of
the key terms a text states: an English term must be one of the text's terms, a Chinese term a
substring of the text (segmentations differ: 更换 states 换). Used to tell an answer from
evidence that merely shares the topic (extractive answers).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from ragloom.nlp import Analyzer, TermWeigher, is_han
from ragloom.nlp.synonyms import synonym_table

# "how" + one of these is the question form (how often, how much), not a key term
_HOW_WORDS = frozenset(["often", "much", "many", "long", "far", "old", "big", "large", "tall", "soon"])
_ZH_QUESTION_FORM = re.compile(r"^(?:多久|多长|多大|多远|多高|多重|多少|几[时个次天年]?|怎么样|怎样)$")


@functools.cache
def _base() -> Analyzer:
    return Analyzer()


_CURRENT: ContextVar[Analyzer | None] = ContextVar("ragloom_answer_analyzer", default=None)


def default_analyzer() -> Analyzer:
    """The analyser generation uses (configured like the application's): the one of the answer being
    written (:func:`analysis_for`), else the Chinese and English one."""
    return _CURRENT.get() or _base()


def current_analyzer() -> Analyzer | None:
    """The analyser of the answer being written (:func:`analysis_for`), if any."""
    return _CURRENT.get()


@contextmanager
def analysis_for(analyzer: Analyzer) -> Iterator[None]:
    """Within the block, :func:`default_analyzer` is ``analyzer`` (one answer's language)."""
    token = _CURRENT.set(analyzer)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def key_terms(question: str, analyzer: Analyzer | None = None) -> list[tuple[str, float]]:
    """``(term, weight)`` for the question's distinct key terms (weights sum to 1; ``[]`` if none)."""
    analyzer = analyzer or default_analyzer()
    tokens = analyzer.tokenize(question)
    forms = _question_forms(analyzer)
    keep: list[str] = []
    for i, term in enumerate(tokens):
        after_how = i > 0 and tokens[i - 1] == "how" and term in {analyzer.stem(w) for w in _HOW_WORDS}
        if after_how or analyzer.is_stop_word(term) or _ZH_QUESTION_FORM.match(term) or term in forms:
            continue
        keep.append(term)
    keep = list(dict.fromkeys(keep))
    return TermWeigher(analyzer).weights(keep)


@functools.cache
def _question_forms(analyzer: Analyzer) -> frozenset[str]:
    """The analysed question-form words of ``analyzer``'s language (none for Chinese and English)."""
    from ragloom.nlp.stopword_lists import QUESTION_FORMS

    words = QUESTION_FORMS.get(analyzer.language, frozenset())
    return frozenset(t for w in words for t in analyzer.tokenize(w))


def states(term: str, text_terms: set[str], normalized_text: str) -> bool:
    """Whether a text (its analysed terms and normalised text) states ``term``."""
    if term in text_terms:
        return True
    return is_han(term) and term in normalized_text


def spread(terms: Sequence[tuple[str, float]], texts: Sequence[str], analyzer: Analyzer | None = None,
           ) -> dict[str, float]:
    """Share of ``texts`` that state each term: a question's subject is stated by most sentences of its
    document, what it asks of it by a few."""
    analyzer = analyzer or default_analyzer()
    facts = [_facts(analyzer, [t]) for t in texts]
    return {term: sum(states(term, *f) for f in facts) / max(1, len(facts)) for term, _ in terms}


def coverage(
    terms: Sequence[tuple[str, float]],
    texts: Sequence[str],
    context: Sequence[str] = (),
    *,
    context_credit: float = 0.5,
    analyzer: Analyzer | None = None,
) -> float:
    """Weight of ``terms`` stated in ``texts``, plus ``context_credit`` x the weight of those only
    stated in ``context`` (e.g. the rest of the cited chunks: their headings). 0..1."""
    if not terms:
        return 0.0
    analyzer = analyzer or default_analyzer()

    main = _facts(analyzer, texts)
    extra = _facts(analyzer, context)
    total = 0.0
    for term, weight in terms:
        if states(term, *main) or _states_synonym(analyzer, term, main):
            total += weight
        elif context and (states(term, *extra) or _states_synonym(analyzer, term, extra)):
            total += context_credit * weight
    return min(1.0, total)


def _states_synonym(analyzer: Analyzer, term: str, facts: tuple[set[str], str]) -> bool:
    """Whether the text states a synonym of ``term`` (the built-in groups the keyword search expands
    a query with: "guarantee" is stated by "warranty", 保修 by 质保)."""
    for word in synonym_table(analyzer)(term):
        words = analyzer.tokenize(word)
        if words and all(states(w, *facts) for w in words):
            return True
    return False


_W = r"[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"  # a letter or digit that is not Chinese
_WORD = re.compile(rf"{_W}+(?:[-_/.']{_W}+)*")


_DATE_WORD = re.compile(r"\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4}")


def name_terms(question: str, analyzer: Analyzer | None = None) -> list[str]:
    """The analysed terms of the names and codes a question mentions: words with a digit
    (``HX-220``, ``E1024``, ``7.2``), with two capitals (``IBM``, ``DB2``, ``iPhone``) or
    capitalised past the first word (``Access Client Solutions``; not in German, which capitalises every
    noun). Stop words (``I``) excluded."""
    analyzer = analyzer or default_analyzer()
    capital_names = analyzer.language != "de"
    out: list[str] = []
    for k, m in enumerate(_WORD.finditer(question)):
        word = m.group(0)
        capitals = sum(c.isupper() for c in word)
        if _DATE_WORD.fullmatch(word):  # 1998/7/18: a date, stated as 1998年7月18日 as well: its numbers
            out.extend(re.split(r"[/.\-]", word))
        elif any(c.isdigit() for c in word) or capitals >= 2 or (capitals and k > 0 and capital_names):
            out.extend(t for t in analyzer.tokenize(word) if not analyzer.is_stop_word(t))
    return list(dict.fromkeys(out))


def name_coverage(names: Sequence[str], texts: Sequence[str], analyzer: Analyzer | None = None) -> float:
    """Share of ``names`` stated in ``texts`` (1.0 when there are none)."""
    if not names:
        return 1.0
    facts = _facts(analyzer or default_analyzer(), texts)
    return sum(states(n, *facts) for n in names) / len(names)


def _facts(analyzer: Analyzer, parts: Sequence[str]) -> tuple[set[str], str]:
    """The terms of some texts (with their fine-grained pieces: ``hx-2200`` states ``hx``) and
    their normalised text."""
    joined = "\n".join(parts)
    terms = analyzer.tokenize(joined)
    return set(terms) | set(analyzer.fine_grained(terms)), analyzer.normalize(joined)
