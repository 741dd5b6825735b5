"""The languages a knowledge base may be written in, and an analyser for each.

Chinese and English share the original :class:`~ragloom.nlp.tokenizer.Analyzer` (jieba for Chinese runs,
English Snowball stems for the rest), unchanged: their indexes and figures stay what they were. The
others get their own analysis of full text:

* de, fr, es, it, pt, nl, ru — words split as for English, every alphabetic word reduced by the
  language's Snowball stemmer (``Pumpen`` and ``Pumpe`` → ``pump``), French and Italian elisions cut
  (``l'eau`` → ``eau``), Russian ``ё`` read as ``е``; the language's stop words;
* ar — Arabic normalisation (short vowels and tatweel removed, the hamza forms of alef read as
  alef, alef maqsura as ya) then the Arabic Snowball stemmer (which takes off the ta marbuta);
* ja — Sudachi (``sudachipy`` with the dictionary package ``sudachidict_core``): the longest units
  (split mode C) as terms, in their normalised form (``行われ`` → ``行う``), and their shortest units
  (mode A) as the fine pieces (``外国人参政権`` → 外国 人 参政 権); no traditional→simplified mapping
  (it would rewrite Japanese kanji);
* ko — Kiwi (``kiwipiepy`` with ``kiwipiepy_model``): morphemes, particles and endings dropped by their
  tag, so ``펌프는`` and ``펌프를`` are both ``펌프``.

``auto`` detects the language of each chunk (and of each question) with :func:`detect_language` and
analyses it with that language's analyser. A question is analysed with the analyser of the knowledge
bases it searches (:meth:`Analyzers.for_query`); when they differ in language, with the question's own
language if one of them has it. The vector side needs no analysis: the embedding model is multilingual.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import snowballstemmer

from ragloom.errors import InvalidRequestError, MissingDependencyError
from ragloom.nlp.stopword_lists import STOP_WORDS
from ragloom.nlp.stopwords import ENGLISH_STOP_WORDS
from ragloom.nlp.tokenizer import CJK, Analyzer

# code -> (English name, Snowball algorithm or "")
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "english"), "zh": ("Chinese", ""), "de": ("German", "german"), "fr": ("French", "french"),
    "es": ("Spanish", "spanish"), "it": ("Italian", "italian"), "pt": ("Portuguese", "portuguese"),
    "nl": ("Dutch", "dutch"), "ru": ("Russian", "russian"), "ja": ("Japanese", ""), "ko": ("Korean", ""),
    "ar": ("Arabic", "arabic"),
}
AUTO = "auto"
KB_LANGUAGES: tuple[str, ...] = (*LANGUAGES, AUTO)
BASE_LANGUAGES = frozenset({"en", "zh"})  # analysed by the original Analyzer

_KANA = "\u3041-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # not the middle dot ・ Chinese writes too
_HIRAGANA_RE = re.compile("[\u3041-\u309f]")
_KANA_RE = re.compile(f"[{_KANA}]")
_HANGUL_RE = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_ARABIC_RE = re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_CYRILLIC_RE = re.compile("[\u0400-\u04ff]")
_LATIN_RE = re.compile(r"[a-zA-Z\u00c0-\u024f]")
_CJK_RE = re.compile(f"[{CJK}]")


_BY_NAME = {name.lower(): code for code, (name, _) in LANGUAGES.items()}


def check_language(value: str) -> str:
    """The code of a knowledge base's language: a :data:`KB_LANGUAGES` code, or a language's English
    name as RAGFlow's clients send it (``English``, ``German``); else :class:`InvalidRequestError`
    naming the choices."""
    code = value.strip().lower()
    code = _BY_NAME.get(code, code)
    if code not in KB_LANGUAGES:
        raise InvalidRequestError(f"language must be one of {', '.join(KB_LANGUAGES)}, not {value!r}")
    return code


# --- detection --------------------------------------------------------------------------------------

_LATIN_LANGUAGES = ["en", "de", "fr", "es", "it", "pt", "nl"]
# under it a Latin-script text's language is the caller's default: "When was Angela Merkel born?" is Dutch
# at 0.51, "pasta carbonara recipe" Spanish at 0.58; the tests' questions in their languages score 0.62-1.0
LATIN_CONFIDENCE = 0.75


@functools.cache
def _identifier() -> Any:
    """py3langid's naive Bayes identifier (its model ships in the package), limited to the Latin-script
    languages ragloom analyses: 0.13 ms a question, 38 of 38 of the tests' short questions right."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    found = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    found.set_languages(_LATIN_LANGUAGES)
    return found


def detect_language(text: str, *, default: str = "en") -> str:
    """The language of ``text`` among :data:`LANGUAGES`: by script first (kana → ja, hangul → ko,
    Arabic, Cyrillic → ru, Chinese characters alone → zh), then, for Latin script, by py3langid among
    en, de, fr, es, it, pt and nl (``default`` when it is not confident: a name, a code, a number)."""
    sample = text[:2000]
    counts = {
        "ja": len(_KANA_RE.findall(sample)), "ko": len(_HANGUL_RE.findall(sample)),
        "ar": len(_ARABIC_RE.findall(sample)), "ru": len(_CYRILLIC_RE.findall(sample)),
        "zh": len(_CJK_RE.findall(sample)),
        # a Chinese character says about what three Latin letters do: a Chinese question naming a film in
        # German ("伊芳·卡特菲为什么会参与影片《Eine Frau wie Romy》的演出？") is Chinese
        "latin": len(_LATIN_RE.findall(sample)) // 3,
    }
    hiragana = len(_HIRAGANA_RE.findall(sample))
    if (hiragana and counts["ja"] * 6 >= counts["zh"] and counts["ja"] >= counts["ko"]) or (
            counts["ja"] and not counts["zh"] and counts["ja"] >= max(counts["ko"], counts["latin"])):
        # Japanese writes its particles in hiragana; a Chinese text quoting a katakana name
        # (《ワンピース》的作者是谁) has none
        return "ja"
    del counts["ja"]  # kana without hiragana beside Chinese characters: a quoted name
    script = max(counts, key=lambda k: counts[k])
    if counts[script] == 0:
        return default
    if script != "latin":
        return script
    code, confidence = _identifier().classify(sample)
    return str(code) if confidence >= LATIN_CONFIDENCE else default


# --- analysers --------------------------------------------------------------------------------------

_ELISION = re.compile(r"^(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|dell|all|dall|nell|sull|un|quest|quell)'")
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_FOLD = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي"})


class OwnLanguageAnalyzer(Analyzer):
    """What the analysers of the languages besides Chinese and English share: no traditional → simplified
    rewrite, and the language's stop words (:data:`STOP_WORDS`) besides :class:`Analyzer`'s."""

    def __init__(self, language: str, *, cache_dir: Path | None = None) -> None:
        super().__init__(cache_dir=cache_dir, to_simplified=False)
        self.language = language
        self._stop: frozenset[str] = STOP_WORDS[language]

    def is_stop_word(self, term: str) -> bool:
        return term in self._stop or super().is_stop_word(term)


class StemmingAnalyzer(OwnLanguageAnalyzer):
    """A European language's or Arabic's analysis: :class:`Analyzer`'s steps with the language's Snowball
    stemmer on every alphabetic word and its stop words (Chinese runs, rare there, still go to jieba)."""

    def __init__(self, language: str, *, cache_dir: Path | None = None) -> None:
        super().__init__(language, cache_dir=cache_dir)
        self._stemmer = snowballstemmer.stemmer(LANGUAGES[language][1])
        self.stem.cache_clear()  # the base's constructor stemmed its English stop words in English
        # English stop words as written only: stemmed in this language they would take its own words ("mine"
        # → "min" as Spanish "mina" is)
        self._english_stop = frozenset(ENGLISH_STOP_WORDS)
        words = STOP_WORDS[language]
        self._stop = words | frozenset(self.stem(self._fold(w)) for w in words if "'" not in w)

    @property
    def fingerprint(self) -> str:
        return f"ragloom-nlp/1 lang={self.language} stem=snowball-{LANGUAGES[self.language][1]}"

    def _fold(self, word: str) -> str:
        if self.language == "ar":
            return _ARABIC_MARKS.sub("", word).translate(_ARABIC_FOLD)
        if self.language == "ru":
            return word.replace("ё", "е")
        return word

    def normalize(self, text: str) -> str:
        text = super().normalize(text)
        if self.language in ("ar", "ru"):
            text = self._fold(text)
        return text

    def _analyze_word(self, word: str) -> str:
        if self.language in ("fr", "it"):
            word = _ELISION.sub("", word)
        if word.isalpha():
            return self.stem(word)
        return word


class _Locked:
    """A tokenizer object made once, on first use, and used under a lock (neither Sudachi's nor Kiwi's
    tokenizer objects are documented as safe to share between threads)."""

    def __init__(self, make: Any, package: str, extra: str) -> None:
        self._make, self._package, self._extra = make, package, extra
        self._obj: Any = None
        self.lock = threading.Lock()

    def get(self) -> Any:
        if self._obj is None:
            try:
                self._obj = self._make()
            except ImportError as exc:
                raise MissingDependencyError(
                    f"{self._extra} analysis needs {self._package}: pip install 'ragloom[server]'") from exc
        return self._obj


def _sudachi() -> Any:
    from sudachipy import Dictionary

    return Dictionary(dict="core").tokenizer()


def _kiwi() -> Any:
    from kiwipiepy import Kiwi

    return Kiwi()


MAX_RUN = 4096  # characters of a run of kana and kanji given to Sudachi at once (3 bytes each in UTF-8)
_JA_RUN = re.compile(f"[{_KANA}{CJK}\u3005\u3006\u30fc]+")
_JA_SKIP_POS = ("補助記号", "空白")


class JapaneseAnalyzer(OwnLanguageAnalyzer):
    """Japanese: Sudachi's units for runs of kana and kanji, :class:`Analyzer`'s words for the rest."""

    def __init__(self, *, cache_dir: Path | None = None) -> None:
        super().__init__("ja", cache_dir=cache_dir)
        self._sudachi = _Locked(_sudachi, "sudachipy and sudachidict_core", "Japanese")

    @property
    def fingerprint(self) -> str:
        return "ragloom-nlp/1 lang=ja seg=sudachi-core-C norm=normalized_form"

    def normalize(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text).lower()
        return " ".join(text.split())

    def tokenize(self, text: str) -> list[str]:
        norm = self.normalize(text)
        terms: list[str] = []
        last = 0
        for m in _JA_RUN.finditer(norm):
            terms.extend(Analyzer.tokenize(self, norm[last:m.start()]))
            run = m.group()
            for start in range(0, len(run), MAX_RUN):  # Sudachi refuses an input over 49,149 bytes
                terms.extend(self._units(run[start:start + MAX_RUN], "C"))
            last = m.end()
        terms.extend(Analyzer.tokenize(self, norm[last:]))
        return terms

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one analyser per process
    def _units(self, run: str, mode: str) -> tuple[str, ...]:
        from sudachipy import SplitMode

        tok = self._sudachi.get()
        with self._sudachi.lock:
            morphemes = tok.tokenize(run, getattr(SplitMode, mode))
            return tuple(m.normalized_form().lower() for m in morphemes
                         if m.part_of_speech()[0] not in _JA_SKIP_POS and m.surface().strip())

    def fine_pieces(self, term: str) -> list[str]:
        if _JA_RUN.fullmatch(term):
            pieces = list(self._units(term, "A"))
            return pieces if len(pieces) > 1 else []
        return super().fine_pieces(term)


_KO_KEEP = ("NN", "NR", "NP", "VV", "VA", "XR", "MAG", "SL", "SH", "SN", "W_")
_HANGUL_RUN = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+")


class KoreanAnalyzer(OwnLanguageAnalyzer):
    """Korean: Kiwi's morphemes for the words holding hangul (particles, endings, suffixes dropped by
    tag), :class:`Analyzer`'s words for the rest."""

    def __init__(self, *, cache_dir: Path | None = None) -> None:
        super().__init__("ko", cache_dir=cache_dir)
        self._kiwi = _Locked(_kiwi, "kiwipiepy and kiwipiepy_model", "Korean")

    @property
    def fingerprint(self) -> str:
        return "ragloom-nlp/1 lang=ko seg=kiwi-0.24"

    def tokenize(self, text: str) -> list[str]:
        norm = self.normalize(text)
        terms: list[str] = []
        for word in norm.split(" "):
            if _HANGUL_RUN.search(word):
                terms.extend(self._morphemes(word))
            else:
                terms.extend(Analyzer.tokenize(self, word))
        return terms

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one analyser per process
    def _morphemes(self, word: str) -> tuple[str, ...]:
        kiwi = self._kiwi.get()
        with self._kiwi.lock:
            tokens = kiwi.tokenize(word)
        out: list[str] = []
        for tok in tokens:
            if not tok.tag.startswith(_KO_KEEP):
                continue
            if tok.tag in ("SL", "SN", "SH"):
                out.extend(Analyzer.tokenize(self, tok.form))
            else:
                out.append(tok.form)
        return tuple(out)


class Analyzers:
    """One analyser per language, made on first use and shared (the base one for Chinese and English)."""

    def __init__(self, base: Analyzer | None = None, *, cache_dir: Path | None = None) -> None:
        self.base = base or Analyzer(cache_dir=cache_dir)
        self._cache_dir = cache_dir
        self._made: dict[str, Analyzer] = {}
        self._lock = threading.Lock()

    def get(self, language: str) -> Analyzer:
        """The analyser of ``language`` (a :data:`LANGUAGES` code; an unknown one and ``auto`` get the base)."""
        if language in BASE_LANGUAGES or language not in LANGUAGES:
            return self.base
        with self._lock:
            found = self._made.get(language)
            if found is None:
                found = self._make(language)
                self._made[language] = found
            return found

    def _make(self, language: str) -> Analyzer:
        if language == "ja":
            return JapaneseAnalyzer(cache_dir=self._cache_dir)
        if language == "ko":
            return KoreanAnalyzer(cache_dir=self._cache_dir)
        return StemmingAnalyzer(language, cache_dir=self._cache_dir)

    def for_text(self, text: str, kb_language: str) -> Analyzer:
        """The analyser of a chunk of a knowledge base in ``kb_language`` (``auto``: the chunk's own)."""
        if kb_language == AUTO:
            return self.get(detect_language(text))
        return self.get(kb_language)

    def for_query(self, question: str, kb_languages: Sequence[str]) -> Analyzer:
        """The analyser of a question searching knowledge bases in ``kb_languages``: theirs when they
        agree; else (or for ``auto``) the question's own language when one of them may hold it; else the
        first's."""
        languages = [self._family(code) for code in dict.fromkeys(kb_languages)] or ["en"]
        if len(set(languages)) == 1 and languages[0] != AUTO:
            return self.get(languages[0])
        own = self._family(detect_language(question, default=_first_fixed(languages)))
        if own in languages or AUTO in languages:
            return self.get(own)
        return self.get(_first_fixed(languages))

    @staticmethod
    def _family(code: str) -> str:
        return "en" if code in BASE_LANGUAGES else code


def _first_fixed(languages: Sequence[str]) -> str:
    return next((code for code in languages if code != AUTO), "en")

