"""The applicability scope: which documents may answer, decided *before* retrieval (issue 27).

An assistant (or a retrieval request) declares required scope keys — document metadata keys such as
``model`` or ``firmware`` — and how a value matches a document's metadata:

- ``equal``: the document's value equals it (a list value: one of its members does);
- ``in``: the document carries a list of values (the models a manual covers) that contains it;
- ``range``: the document carries a version range (``">=2.1,<3"``, a PEP 440 specifier set; a bare
  version is ``==`` that version) that contains the version asked about.

Values are read from the question (then the conversation's earlier questions, newest first) without a
chat model, by matching the values the scoped documents actually carry — case, spacing and hyphen
variants (``x-100``, ``X 100`` for ``X100``) and the key's aliases (``"pro": "X200"``). A version
(``range``) is read after one of the key's names (``firmware 2.4``, ``fw v2.4.1``).

The decision is one of: ``none`` (no key required), ``scoped`` (every key has a value and some
documents match: retrieval is restricted to them), ``clarify`` (a key has no value: ask, naming the
known values), ``gap`` (a value no document carries: say so and retrieve nothing — never widen).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ragloom.schemas.scope import ScopeKey

Status = Literal["none", "scoped", "clarify", "gap"]
CLARIFY_TAIL = "Tell me and I will answer from the matching documents."


@dataclass(slots=True)
class ScopeDecision:
    """What was decided about one question's scope, and why."""

    status: Status
    values: dict[str, str] = field(default_factory=dict)  # key -> value (canonical: as documents carry it)
    sources: dict[str, str] = field(default_factory=dict)  # key -> question | conversation | request | alias
    missing: list[str] = field(default_factory=list)  # keys without a value
    unknown: dict[str, str] = field(default_factory=dict)  # key -> value no document carries
    known: dict[str, list[str]] = field(default_factory=dict)  # key -> values the documents carry
    doc_ids: list[str] | None = None  # scoped: the matching documents; gap/clarify: []; none: None
    reason: str = ""
    message: str | None = None  # the reply for clarify and gap

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "values": self.values, "sources": self.sources, "missing": self.missing,
                "unknown": self.unknown, "known": self.known,
                "documents": len(self.doc_ids) if self.doc_ids is not None else None, "reason": self.reason,
                "message": self.message}


# --- normalisation and matching -------------------------------------------------------------------

def normalize(value: str) -> str:
    """Case, spacing, hyphen and underscore variants of a value are one value."""
    return re.sub(r"[\s\-_./]+", "", value.casefold())


def _variant_pattern(value: str) -> re.Pattern[str] | None:
    """A pattern finding ``value`` in text with any case and optional spaces/hyphens between its parts."""
    parts = re.findall(r"[^\W_]+", value)
    if not parts:
        return None
    chunks: list[str] = []
    for part in parts:  # also between a letter run and a digit run: X100 = X-100 = x 100
        pieces = re.findall(r"\d+|\D+", part)
        chunks.append(r"[\s\-_]?".join(re.escape(p) for p in pieces))
    body = r"[\s\-_./]*".join(chunks)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


def _shape(value: str) -> str:
    """A value's shape: its letters, digits as '#' (X100 and X300 share 'x#')."""
    return re.sub(r"\d+", "#", normalize(value))


def doc_values(raw: Any) -> list[str]:
    """A document's metadata value as strings (a list's members; a scalar alone)."""
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def _specifier(text: str) -> SpecifierSet | None:
    text = text.strip()
    if not text:
        return None
    if text[0].isdigit() or text[0] in "vV":
        text = "==" + text.lstrip("vV")
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _version(text: str) -> Version | None:
    try:
        return Version(text.strip().lstrip("vV"))
    except InvalidVersion:
        return None


def value_matches(key: ScopeKey, value: str, meta: Mapping[str, Any]) -> bool:
    """Whether a document's metadata carries ``value`` for ``key`` (by the key's match kind)."""
    have = doc_values(meta.get(key.key))
    if key.match == "range":
        version = _version(value)
        if version is None:
            return False
        for text in have:
            spec = _specifier(text)
            if spec is not None and spec.contains(version, prereleases=True):
                return True
        return False
    wanted = normalize(value)
    return any(normalize(h) == wanted for h in have)


def known_values(key: ScopeKey, documents: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The values the documents carry for ``key`` (ranges as written), first spelling of each, sorted."""
    seen: dict[str, str] = {}
    for meta in documents.values():
        for v in doc_values(meta.get(key.key)):
            seen.setdefault(normalize(v) if key.match != "range" else v, v)
    return sorted(seen.values(), key=_natural)


def _natural(value: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p.casefold()) for p in re.findall(r"\d+|\D+", value)]


def _cue_pattern(key: ScopeKey) -> re.Pattern[str]:
    words = dict.fromkeys([key.key, key.title, *key.names])
    alts = "|".join(sorted((r"[\s\-_]*".join(re.escape(w) for w in re.split(r"[\s\-_]+", n) if w)
                            for n in words), key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alts})(?![^\W_])\s*(?:version|ver\.?|is|=|:|#|no\.?)?\s*(v?\d+(?:\.\d+)*"
                      rf"|[^\W_][\w\-]*)", re.IGNORECASE)


Span = tuple[int, int]


def read_value(key: ScopeKey, text: str, known: Sequence[str],
               bare: bool = False) -> tuple[str | None, str | None, str, Span | None]:
    """``(value, unknown, how, span)`` read from ``text``: a value the documents carry (or an alias of
    one), else a value of the same shape or after the key's name that none carries (``unknown``);
    ``span``: where ``text`` names it."""
    if key.match == "range":
        for m in _cue_pattern(key).finditer(text):
            candidate = m.group(1)
            if _version(candidate) is not None and re.search(r"\d", candidate):
                return candidate.lstrip("vV"), None, "question", m.span()
        alone = re.fullmatch(r"\s*[vV]?(\d+(?:\.\d+)*)\s*[.!]?\s*", text) if bare else None
        if alone is not None:
            return alone.group(1), None, "question", alone.span(1)
        return None, None, "", None
    found: list[tuple[int, int, str, str]] = []  # (start, -length, value, how)
    for value in known:
        pattern = _variant_pattern(value)
        hit = pattern.search(text) if pattern is not None else None
        if hit is not None:
            found.append((hit.start(), -(hit.end() - hit.start()), value, "question"))
    by_norm = {normalize(v): v for v in known}
    for alias, target in key.aliases.items():
        pattern = _variant_pattern(alias)
        hit = pattern.search(text) if pattern is not None else None
        if hit is not None:
            canonical = by_norm.get(normalize(target), target)
            found.append((hit.start(), -(hit.end() - hit.start()), canonical, "alias"))
    if found:
        found.sort()
        start, negative_length, value, how = found[0]
        return value, None, how, (start, start - negative_length)
    # an unknown value: after the key's name ("model X300"), or a token of a known value's shape
    for m in _cue_pattern(key).finditer(text):
        candidate = m.group(1)
        if re.search(r"\d", candidate):
            return None, candidate, "question", m.span()
    shapes = {_shape(v) for v in known if re.search(r"\d", v)}
    if shapes:
        tokens = re.findall(r"[^\W_]+", text)
        for i, token in enumerate(tokens):
            for candidate in (token, f"{token}{tokens[i + 1]}" if i + 1 < len(tokens) else ""):
                if candidate and re.search(r"\d", candidate) and _shape(candidate) in shapes:
                    return None, candidate, "question", None
    return None, None, "", None


def _join_or(values: Sequence[str]) -> str:
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " or " + values[-1]


def clarification(keys: Sequence[ScopeKey], known: Mapping[str, list[str]], max_listed: int = 12) -> str:
    """The clarifying question: what is needed, with the known values ("Which model is it: X100 or X200?")."""
    asks = []
    for key in keys:
        values = known.get(key.key, [])
        if key.match == "range":
            listed = f" (the documents cover {_join_or(values[:max_listed])})" if values else ""
            asks.append(f"Which {key.title} version is it{listed}?")
        elif values:
            more = f" (or another of {len(values)})" if len(values) > max_listed else ""
            asks.append(f"Which {key.title} is it: {_join_or(values[:max_listed])}{more}?")
        else:
            asks.append(f"Which {key.title} is it?")
    return " ".join(asks) + " " + CLARIFY_TAIL


def gap_message(key: ScopeKey, value: str, known: Sequence[str], values: Mapping[str, str]) -> str:
    others = "; ".join(f"{k} {v}" for k, v in values.items() if k != key.key)
    where = f" (with {others})" if others else ""
    have = f" The documents cover {_join_or(list(known)[:12])}." if known else ""
    kind = "version " if key.match == "range" else ""
    return f"There is no document for {key.title} {kind}{value}{where}, so I cannot answer it.{have}"


def without_values(keys: Sequence[ScopeKey], decision: ScopeDecision, text: str) -> str:
    """``text`` without the words naming the decided scope values (the scope holds them already: an
    extractive answer then looks for what is asked, not for "firmware 2.4" in the manual)."""
    spans = []
    for key in keys:
        if key.key in decision.values:
            span = read_value(key, text, decision.known.get(key.key, []))[3]
            if span is not None:
                spans.append(span)
    out = text
    for start, end in sorted(spans, reverse=True):
        out = out[:start] + " " + out[end:]
    dangling = re.compile(r"(?i)(?<![^\W_])(?:on|with|for|of|in|at|running|my|the|a|an|model|version)"
                          r"\s*(?=[,?.!;:)]|$)")
    for _ in range(3):
        out = dangling.sub("", out)
        out = re.sub(r"\(\s*\)", "", out)
        out = re.sub(r"\s+([,?.!;:])", r"\1", re.sub(r"\s{2,}", " ", out)).strip()
        out = re.sub(r"([,;:])\s*(?=[?.!]|$)", "", out).strip()
        out = re.sub(r"^[,;:.\s]+", "", out)
    return out if re.search(r"[^\W_]{3,}", out) else text


def _take_extracted(key: ScopeKey, decision: ScopeDecision, value: str | None, texts: Sequence[str]) -> None:
    if value is None or not str(value).strip():
        return
    value = str(value).strip()
    known = decision.known[key.key]
    if key.match == "range":
        if _version(value) is not None:
            decision.values[key.key], decision.sources[key.key] = value.lstrip("vV"), "chat model"
        return
    by_norm = {normalize(v): v for v in known}
    aliased = {normalize(a): t for a, t in key.aliases.items()}
    canonical = by_norm.get(normalize(value)) or by_norm.get(normalize(aliased.get(normalize(value), "")))
    if canonical is not None:
        decision.values[key.key], decision.sources[key.key] = canonical, "chat model"
    elif any(normalize(value) in normalize(t) for t in texts):  # named in the conversation: a gap
        decision.unknown[key.key], decision.sources[key.key] = value, "chat model"


def is_clarification(answer: str) -> bool:
    return CLARIFY_TAIL in answer


def decide(keys: Sequence[ScopeKey], documents: Mapping[str, Mapping[str, Any]], *, question: str,
           earlier: Sequence[str] = (), given: Mapping[str, str] | None = None,
           answering: bool = False, extracted: Mapping[str, str] | None = None) -> ScopeDecision:
    """Decide the scope of one question. ``documents``: id -> metadata of the documents the question may
    be answered from; ``earlier``: the conversation's earlier questions, oldest first; ``given``:
    values set by the caller (they win over anything read); ``answering``: the question answers a
    clarifying question (a bare version, "2.4", is then the version asked for); ``extracted``: values a
    chat model read from the conversation for keys the matching did not find (a value no document
    carries is a gap only when the conversation names it: a model's guess is never one)."""
    if not keys:
        return ScopeDecision(status="none", reason="no scope keys are required")
    given = dict(given or {})
    decision = ScopeDecision(status="scoped", known={k.key: known_values(k, documents) for k in keys})
    for key in keys:
        known = decision.known[key.key]
        if key.key in given and str(given[key.key]).strip():
            value = str(given[key.key]).strip()
            by_norm = {normalize(v): v for v in known}
            aliased = {normalize(a): t for a, t in key.aliases.items()}
            if key.match != "range":
                value = by_norm.get(normalize(value), aliased.get(normalize(value), value))
                value = by_norm.get(normalize(value), value)
            decision.values[key.key], decision.sources[key.key] = value, "request"
            continue
        texts = [(question, "question"), *((t, "conversation") for t in reversed(earlier))]
        for text, where in texts:
            read, unknown, how, _ = read_value(key, text, known, bare=answering and where == "question")
            if read is not None:
                decision.values[key.key] = read
                decision.sources[key.key] = where if how != "alias" else f"{where} (alias)"
                break
            if unknown is not None:
                decision.unknown[key.key] = unknown
                decision.sources[key.key] = where
                break
        if key.key not in decision.values and key.key not in decision.unknown and extracted:
            _take_extracted(key, decision, extracted.get(key.key), [question, *earlier])
        if key.key not in decision.values and key.key not in decision.unknown:
            decision.missing.append(key.key)
    by_key = {k.key: k for k in keys}
    # a given value, or one read, that no document carries is a gap too
    for name, value in list(decision.values.items()):
        if not any(value_matches(by_key[name], value, meta) for meta in documents.values()):
            decision.unknown[name] = decision.values.pop(name)
    if decision.unknown:
        name, value = next(iter(decision.unknown.items()))
        decision.status, decision.doc_ids = "gap", []
        decision.message = gap_message(by_key[name], value, decision.known[name], decision.values)
        decision.reason = f"no document carries {name} {value!r}"
        return decision
    if decision.missing:
        decision.status, decision.doc_ids = "clarify", []
        narrowed = {d: m for d, m in documents.items()
                    if all(value_matches(by_key[n], v, m) for n, v in decision.values.items())}
        for name in decision.missing:  # the values that fit what is already known
            decision.known[name] = known_values(by_key[name], narrowed) or decision.known[name]
        decision.message = clarification([by_key[n] for n in decision.missing], decision.known)
        decision.reason = f"no value for {', '.join(decision.missing)} in the question or the conversation"
        return decision
    matching = [doc_id for doc_id, meta in documents.items()
                if all(value_matches(by_key[n], v, meta) for n, v in decision.values.items())]
    if not matching:  # each value is carried, but by no one document together
        decision.status, decision.doc_ids = "gap", []
        combo = ", ".join(f"{n} {v}" for n, v in decision.values.items())
        decision.message = f"There is no document for {combo}, so I cannot answer it."
        decision.reason = f"no document matches {combo} together"
        return decision
    decision.doc_ids = matching
    decision.reason = (f"{len(matching)} document(s) match "
                       + ", ".join(f"{n} {v} (from the {decision.sources[n]})" for n, v in decision.values.items()))
    return decision
