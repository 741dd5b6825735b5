"""Synonyms for query expansion: a small built-in dictionary plus a knowledge base's own list.

A synonym list is a list of *groups*; every word of a group is a synonym of the
others. Words are analysed with the same :class:`Analyzer` as the queries, so a
group member matches the analysed (stemmed, lower-cased) query term; the lookup
returns the other members as written, and the query builder analyses those again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources

from ragloom.errors import InvalidRequestError
from ragloom.nlp.tokenizer import Analyzer

MAX_SYNONYMS = 8  # per term, as the reference
MAX_GROUPS = 5000
MAX_GROUP_SIZE = 32


@cache
def builtin_groups() -> tuple[tuple[str, ...], ...]:
    """The groups shipped in ``ragloom/nlp/data/synonyms.json``."""
    text = resources.files("ragloom.nlp").joinpath("data/synonyms.json").read_text(encoding="utf-8")
    return tuple(tuple(g) for g in json.loads(text)["groups"])


def validate_groups(groups: object) -> list[list[str]]:
    """A user's synonym list, checked: a list of groups of 2..32 non-empty strings."""
    if not isinstance(groups, list) or len(groups) > MAX_GROUPS:
        raise InvalidRequestError(f"synonyms must be a list of at most {MAX_GROUPS} groups")
    out = []
    for i, group in enumerate(groups):
        if (not isinstance(group, list) or not 2 <= len(group) <= MAX_GROUP_SIZE
                or not all(isinstance(w, str) and w.strip() for w in group)):
            raise InvalidRequestError(f"synonyms[{i}] must be a list of 2 to {MAX_GROUP_SIZE} non-empty words")
        out.append([w.strip() for w in group])
    return out


class SynonymTable:
    """Maps an analysed query term to the other words of its groups (at most 8)."""

    def __init__(self, analyzer: Analyzer, groups: Iterable[Sequence[str]],
                 base: SynonymTable | None = None) -> None:
        self._table: dict[str, list[str]] = {k: list(v) for k, v in base._table.items()} if base else {}
        for group in groups:
            for word in group:
                terms = analyzer.tokenize(word)
                if len(terms) != 1:  # multi-term words are only ever expansions, not keys
                    continue
                others = self._table.setdefault(terms[0], [])
                for other in group:
                    if other != word and other not in others:
                        others.append(other)

    def __call__(self, term: str) -> Sequence[str]:
        return self._table.get(term, ())[:MAX_SYNONYMS]


_BUILTIN: dict[str, SynonymTable] = {}


def synonym_table(analyzer: Analyzer, kb_groups: Sequence[Sequence[str]] = ()) -> SynonymTable:
    """The built-in groups (analysed once per analyzer configuration) plus a knowledge base's own."""
    key = analyzer.fingerprint
    if key not in _BUILTIN:
        _BUILTIN[key] = SynonymTable(analyzer, builtin_groups())
    return SynonymTable(analyzer, kb_groups, base=_BUILTIN[key]) if kb_groups else _BUILTIN[key]
