"""Text analysis for Chinese and English: normalise, tokenise, fine-grain.

One :class:`Analyzer` analyses both chunk text (at indexing) and questions (at
query time); the search only works because both sides go through the same
steps:

1. :meth:`Analyzer.normalize` — Unicode NFKC (full-width → half-width and
   other compatibility forms), lower case, traditional → simplified Chinese
   (when ``opencc`` is installed), a space between Latin and Chinese runs.
2. :meth:`Analyzer.tokenize` — coarse terms: Chinese runs segmented by jieba in
   precise mode; other runs split into words (numbers, ``x-200``, ``v2.5``,
   ``c++`` kept whole), English words Snowball-stemmed; punctuation dropped.
   Stop words are *kept* (see :meth:`Analyzer.is_stop_word`).
3. :meth:`Analyzer.fine_grained` — finer terms for the ``*_fine_terms`` fields.

An Analyzer is cheap to construct, loads its resources lazily on first use,
is safe to share between threads, and is deterministic.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import snowballstemmer

from ragloom.nlp._segment import Segmenter, make_segmenter
from ragloom.nlp.stopwords import CHINESE_STOP_WORDS, english_stop_words

# CJK ideographs: Extension A, the Unified block, compatibility ideographs.
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_RE = re.compile(f"[{CJK}]")
_ALL_HAN_RE = re.compile(f"[{CJK}]+")
_W = rf"[^\W_{CJK}]"  # a letter or digit that is not Chinese
_JOIN = r"(?:[-_/']|(?<=\d)\.(?=\d))"  # joins word parts: x-200, and/or, don't, v2.5
_TOKEN_RE = re.compile(rf"(?P<han>[{CJK}]+)|(?P<word>{_W}+(?:{_JOIN}{_W}+)*(?:\+\+|#)?)")
_LATIN_CJK_BOUNDARY = re.compile(rf"(?<=[{CJK}])(?={_W})|(?<={_W})(?=[{CJK}])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_FINE_SPLIT = re.compile(r"[-_/]+")
_SINGLE_DIGIT = re.compile(r"^\d$")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})


class _Converter(Protocol):  # opencc.OpenCC (untyped)
    def convert(self, text: str) -> str: ...


class _Stemmer(Protocol):  # a snowballstemmer stemmer (untyped)
    def stemWord(self, word: str) -> str: ...


def is_han(term: str) -> bool:
    """True when every character of ``term`` is a Chinese ideograph."""
    return bool(term) and _ALL_HAN_RE.fullmatch(term) is not None


def has_han(text: str) -> bool:
    """True when ``text`` contains at least one Chinese ideograph."""
    return _HAN_RE.search(text) is not None


class Analyzer:
    """Chinese + English analyser; see the module docstring for the steps.

    ``backend``: ``"auto"`` (rjieba when installed, else jieba), ``"jieba"`` or
    ``"rjieba"`` — they segment identically. ``to_simplified``: convert
    traditional to simplified Chinese; ``None`` = when ``opencc`` is installed.
    ``cache_dir``: where jieba keeps its dictionary cache (default
    ``~/.cache/ragloom``). Index and queries must use equally configured
    analysers; :attr:`fingerprint` names the configuration.
    """

    language: str = ""  # "" for this Chinese and English analyser; a code for the others (nlp/languages.py)

    def __init__(
        self,
        *,
        backend: str = "auto",
        to_simplified: bool | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self._segmenter: Segmenter = make_segmenter(backend, cache_dir)
        if to_simplified is None:
            to_simplified = importlib.util.find_spec("opencc") is not None
        self.to_simplified = to_simplified
        self._converter: _Converter | None = None
        self._lock = threading.Lock()
        self._stemmer: _Stemmer = snowballstemmer.stemmer("english")
        self._stem_lock = threading.Lock()
        self._english_stop = english_stop_words(self.stem)

    @property
    def fingerprint(self) -> str:
        """A short name of the analysis configuration (stored with an index)."""
        return f"ragloom-nlp/1 seg=jieba-0.42.1-dict t2s={int(self.to_simplified)} stem=english"

    @property
    def backend(self) -> str:
        return self._segmenter.name

    # -- normalisation -----------------------------------------------------
    def normalize(self, text: str) -> str:
        """NFKC, lower case, traditional → simplified (if enabled), a space
        between Latin and Chinese runs, whitespace collapsed to single spaces."""
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
        if self.to_simplified and has_han(text):
            text = self._t2s(text)
        text = _LATIN_CJK_BOUNDARY.sub(" ", text)
        return " ".join(text.split())

    def _t2s(self, text: str) -> str:
        conv = self._converter
        if conv is None:
            with self._lock:
                if self._converter is None:
                    import opencc

                    self._converter = opencc.OpenCC("t2s")
                conv = self._converter
        return conv.convert(text)

    # -- tokenisation ------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        """Coarse terms of ``text`` in order (stop words kept, punctuation dropped)."""
        norm = _THOUSANDS.sub("", self.normalize(text))
        terms: list[str] = []
        for m in _TOKEN_RE.finditer(norm):
            han = m.group("han")
            if han is not None:
                terms.extend(self._segmenter.cut(han))
            else:
                terms.append(self._analyze_word(m.group("word")))
        return terms

    def _analyze_word(self, word: str) -> str:
        if word.endswith("'s"):
            word = word[:-2]
        if word.isascii() and word.isalpha():
            return self.stem(word)
        return word

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one Analyzer lives for the process
    def stem(self, word: str) -> str:
        """English Snowball stem of a lower-case word (``running`` → ``run``)."""
        with self._stem_lock:  # snowball stemmers keep state between calls
            return self._stemmer.stemWord(word)

    def fine_grained(self, terms: Iterable[str]) -> list[str]:
        """Finer terms: a Chinese term of ≥ 3 characters becomes its jieba
        search-mode pieces (the term itself left out, pieces ordered by
        position); a Latin term with ``-``, ``_`` or ``/`` becomes its (stemmed)
        parts. A term with no pieces is kept as it is."""
        out: list[str] = []
        for term in terms:
            out.extend(self.fine_pieces(term) or (term,))
        return out

    def fine_pieces(self, term: str) -> list[str]:
        """The pieces :meth:`fine_grained` puts in place of ``term``; ``[]`` if none."""
        if is_han(term):
            return list(self._han_pieces(term)) if len(term) >= 3 else []
        parts = [p for p in _FINE_SPLIT.split(term) if p]
        if len(parts) < 2:
            return []
        return [self._analyze_word(p) for p in parts]

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one Analyzer lives for the process
    def _han_pieces(self, term: str) -> tuple[str, ...]:
        spans = [s for s in self._segmenter.search_spans(term) if s[2] - s[1] < len(term)]
        spans.sort(key=lambda s: (s[1], s[2]))
        return tuple(w for w, _, _ in spans)

    # -- stop words --------------------------------------------------------
    def is_stop_word(self, term: str) -> bool:
        """True for a Chinese or English stop word (stemmed or not) or a single digit."""
        return term in CHINESE_STOP_WORDS or term in self._english_stop or _SINGLE_DIGIT.match(term) is not None

    def remove_stop_words(self, terms: Iterable[str]) -> list[str]:
        """``terms`` without stop words, order kept."""
        return [t for t in terms if not self.is_stop_word(t)]
