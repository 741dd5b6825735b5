"""Entity resolution: finding merged-graph entities that are one thing, and merging them (as aliases).

Pairs are found offline and deterministically, by rules tried in this order (the first that holds names
the pair):

``variant``       the same letters and digits once case, spaces and punctuation are ignored
                  (``Orion-Pump`` / ``ORION PUMP``, ``AT&T`` / ``AT and T``);
``suffix``        the same once a legal or organisational suffix is dropped (``Acme Inc`` / ``ACME``,
                  ``华为技术有限公司`` / ``华为技术``);
``plural``        the same once the last word is made singular (``Orion Pumps`` / ``Orion Pump``);
``abbreviation``  an acronym and the initials of a name of two or more words (``IBM`` / ``International
                  Business Machines``; ``of``, ``and``, ``the``... are skipped);
``overlap``       the same type and nearly the same words: word-set Jaccard ≥ 0.75 (Chinese: shared
                  characters / the longer name's ≥ 0.8), unless the words (characters) that differ hold a
                  digit (``Model 3`` ≠ ``Model 5``; REFERENCE §9 step 5).

The first four need compatible types (equal, or one of them ``ENTITY``/``CONCEPT``); ``overlap`` needs
equal types. With a chat model, every pair but a ``variant`` is put to it in batches ("yes"/"no" per
pair; an unanswered pair is not merged). The pairs' connected components become one entity each: the
member with the largest weight (then the smallest key) stays, the others become its aliases
(:meth:`Graph.add_aliases`), which also holds for documents merged later.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from ragloom.knowledge.graph.llm import LlmRunner
from ragloom.knowledge.graph.merged import Graph, GraphChange
from ragloom.knowledge.graph.model import GENERIC_TYPE, Entity
from ragloom.knowledge.graph.prompts import RESOLUTION_PROMPT
from ragloom.knowledge.graph.text import words_set
from ragloom.nlp import is_han

RULES = ("variant", "suffix", "plural", "abbreviation", "overlap")
GENERIC_TYPES = frozenset({GENERIC_TYPE, "", "UNKNOWN", "CONCEPT", "OTHER"})
LATIN_SUFFIXES = words_set(
    "inc incorporated ltd limited llc llp plc corp corporation company co gmbh ag sa bv group holdings")
CHINESE_SUFFIXES = ("股份有限公司", "有限责任公司", "有限公司", "集团公司", "集团", "公司")
_SKIP_INITIALS = words_set("of and the for de du von van da & a an")
_WORDS = re.compile(r"[^\W_]+")
_ANSWER = re.compile(r"^\s*(\d+)\s*[:.)\-]\s*\**\s*(yes|no|y|n|是|否)\b", re.IGNORECASE | re.MULTILINE)
JACCARD = 0.75
CHAR_OVERLAP = 0.8
MAX_BUCKET = 200  # a word shared by more entities than this does not pair them (too common)
LLM_BATCH = 50


@dataclass(frozen=True, slots=True)
class Candidate:
    """Two entity keys (``a < b``) that may be one entity, and the rule that paired them."""

    a: str
    b: str
    rule: str


@dataclass(slots=True)
class Resolution:
    """What :func:`resolve_entities` did: the candidate pairs, the pairs asked of / confirmed by the
    chat model, and the merges made (the merged entity's name → the other names merged into it)."""

    candidates: list[Candidate] = field(default_factory=list)
    asked: int = 0
    confirmed: int = 0
    merged: dict[str, list[str]] = field(default_factory=dict)
    change: GraphChange = field(default_factory=GraphChange)


# -- name forms ---------------------------------------------------------------------------------------

def _norm(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold().replace("&", " and ")


def words_of(name: str) -> list[str]:
    """Lower-case words of a name (a Chinese run is one word)."""
    return _WORDS.findall(_norm(name))


def loose(name: str) -> str:
    """Letters and digits of a name, lower case, nothing else."""
    return "".join(words_of(name))


def singular(word: str) -> str:
    """A simple English singular: ``companies`` → ``company``, ``boxes`` → ``box``, ``pumps`` → ``pump``."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def without_suffix(name: str) -> str:
    """The loose form without trailing legal/organisational suffixes (``""`` when nothing else is left)."""
    ws = words_of(name)
    while len(ws) > 1 and ws[-1] in LATIN_SUFFIXES:
        ws.pop()
    if ws and is_han(ws[-1]):
        for suffix in CHINESE_SUFFIXES:
            if ws[-1].endswith(suffix) and len(ws[-1]) > len(suffix) + 1:
                ws[-1] = ws[-1][: -len(suffix)]
                break
    return "".join(ws)


def acronym(name: str) -> str | None:
    """The letters of an acronym name (``IBM``, ``U.S.A.`` → ``usa``), else None."""
    letters = re.sub(r"[.&]", "", unicodedata.normalize("NFKC", name).strip())
    return letters.lower() if 2 <= len(letters) <= 8 and letters.isalpha() and letters.isupper() else None


def initials(name: str) -> str | None:
    """The initials of a name of two or more significant words (``Bank of England`` → ``be``), else None."""
    ws = [w for w in words_of(name) if w not in _SKIP_INITIALS and w.isascii()]
    return "".join(w[0] for w in ws) if len(ws) >= 2 else None


def _compatible(a: Entity, b: Entity) -> bool:
    return a.type == b.type or a.type in GENERIC_TYPES or b.type in GENERIC_TYPES


def _has_digit(items: Iterable[str]) -> bool:
    return any(c.isdigit() for item in items for c in item)


def _overlaps(a: Entity, b: Entity) -> bool:
    if a.type != b.type:
        return False
    la, lb = loose(a.name), loose(b.name)
    if is_han(la) and is_han(lb):
        ca, cb = set(la), set(lb)
        return len(ca & cb) / max(len(ca), len(cb)) >= CHAR_OVERLAP and not _has_digit(ca ^ cb)
    wa, wb = {singular(w) for w in words_of(a.name)}, {singular(w) for w in words_of(b.name)}
    if len(wa) < 2 or len(wb) < 2:
        return False
    return len(wa & wb) / len(wa | wb) >= JACCARD and not _has_digit(wa ^ wb)


# -- finding pairs -------------------------------------------------------------------------------------

def _blocks(graph: Graph) -> dict[str, dict[str, list[str]]]:
    blocks: dict[str, dict[str, list[str]]] = {r: defaultdict(list) for r in RULES}
    for key in sorted(graph.entities):
        name = graph.entities[key].name
        blocks["variant"][loose(name)].append(key)
        blocks["suffix"][without_suffix(name)].append(key)
        ws = words_of(name)
        if ws:
            blocks["plural"]["".join([*ws[:-1], singular(ws[-1])])].append(key)
        if (code := acronym(name)) is not None:
            blocks["abbreviation"]["acronym:" + code].append(key)
        elif (code := initials(name)) is not None:
            blocks["abbreviation"]["initials:" + code].append(key)
        tokens = set(loose(name)) if is_han(loose(name)) else {singular(w) for w in ws}
        for token in tokens:
            blocks["overlap"][token].append(key)
    return blocks


def _bucket_pairs(rule: str, buckets: dict[str, list[str]]) -> Iterable[tuple[str, str]]:
    if rule == "abbreviation":
        for label, keys in buckets.items():
            if label.startswith("acronym:"):
                others = buckets.get("initials:" + label.removeprefix("acronym:"), [])
                yield from ((a, b) for a in keys for b in others)
        return
    for label, keys in buckets.items():
        if label and 1 < len(keys) <= MAX_BUCKET:
            yield from combinations(keys, 2)


def find_candidates(graph: Graph, *, only: Sequence[str] | None = None) -> list[Candidate]:
    """The pairs of merged entities that the rules (module docstring) say may be one entity; with
    ``only`` (keys, e.g. :attr:`GraphChange.touched`), just the pairs that include one of them."""
    wanted = set(only) if only is not None else None
    found: dict[tuple[str, str], str] = {}
    for rule, buckets in _blocks(graph).items():
        for x, y in _bucket_pairs(rule, buckets):
            pair = (x, y) if x < y else (y, x)
            if x == y or pair in found or (wanted is not None and not wanted & set(pair)):
                continue
            a, b = graph.entities[pair[0]], graph.entities[pair[1]]
            if (_overlaps(a, b) if rule == "overlap" else _compatible(a, b)):
                found[pair] = rule
    return [Candidate(a, b, rule) for (a, b), rule in sorted(found.items())]


# -- deciding and merging --------------------------------------------------------------------------------

def _ask(runner: LlmRunner, graph: Graph, pairs: list[Candidate]) -> set[Candidate]:
    confirmed: set[Candidate] = set()
    for start in range(0, len(pairs), LLM_BATCH):
        batch = pairs[start : start + LLM_BATCH]
        listing = "\n".join(
            f'{i}. "{graph.entities[c.a].name}" ({graph.entities[c.a].type}) | '
            f'"{graph.entities[c.b].name}" ({graph.entities[c.b].type})' for i, c in enumerate(batch, start=1))
        reply = runner.ask_text(RESOLUTION_PROMPT.format(pairs=listing))
        for number, answer in _ANSWER.findall(reply):
            i = int(number)
            if 1 <= i <= len(batch) and answer.lower() in ("yes", "y", "是"):
                confirmed.add(batch[i - 1])
    return confirmed


def _components(graph: Graph, pairs: Iterable[Candidate]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for c in pairs:
        ra, rb = find(c.a), find(c.b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in sorted(parent.keys() | set(parent.values())):
        groups[find(key)].append(key)
    mapping: dict[str, str] = {}
    for members in groups.values():
        keep = min(members, key=lambda k: (-graph.entities[k].weight, k))
        mapping.update({m: keep for m in members if m != keep})
    return mapping


def resolve_entities(graph: Graph, *, runner: LlmRunner | None = None,
                     only: Sequence[str] | None = None) -> Resolution:
    """Find duplicate entities (:func:`find_candidates`), confirm them with the chat model when a
    ``runner`` is given, and merge them in ``graph``. Deterministic for the same graph (and replies)."""
    result = Resolution(candidates=find_candidates(graph, only=only))
    accepted = [c for c in result.candidates if c.rule == "variant" or runner is None]
    if runner is not None:
        asked = [c for c in result.candidates if c.rule != "variant"]
        confirmed = _ask(runner, graph, asked)
        result.asked, result.confirmed = len(asked), len(confirmed)
        accepted += [c for c in asked if c in confirmed]
    mapping = _components(graph, accepted)
    names = {k: e.name for k, e in graph.entities.items()}
    groups: dict[str, list[str]] = defaultdict(list)
    for alias, keep in sorted(mapping.items()):
        groups[keep].append(alias)
    result.change = graph.add_aliases(mapping)
    for keep, aliases in sorted(groups.items()):
        name = graph.entities[keep].name
        result.merged[name] = sorted(n for n in (names[k] for k in [keep, *aliases]) if n != name)
    return result
