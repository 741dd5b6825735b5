"""Reading the chat model's extraction records (format: :mod:`ragloom.knowledge.graph.prompts`).

Models do not always keep to the format, so reading is forgiving and counted:

* records are split on the record delimiter *and* on line breaks (many models write one per line);
  the completion marker, code fences and blank lines are ignored;
* a record is the text between its first ``(`` and last ``)``, or the whole piece when it has no
  brackets but holds the tuple delimiter; fields lose surrounding spaces and quotes;
* the kind is ``entity`` or ``relationship`` (``relation`` accepted), any case; LightRAG's
  ``content_keywords`` record is skipped without counting it bad;
* an entity needs a name, a type and a description (4 fields); a relationship a source, a target and
  a description; its strength is its last field when that is a number (else 1), and its keywords the
  field before the strength (light format);
* anything else is a *bad record*: skipped, counted in :attr:`Records.bad`.

Names and types are upper-cased (REFERENCE §9) after :func:`~ragloom.knowledge.graph.model.canonical_name`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ragloom.knowledge.graph.model import canonical_name
from ragloom.knowledge.graph.prompts import COMPLETION_DELIMITER, RECORD_DELIMITER, TUPLE_DELIMITER

_FENCE = re.compile(r"^`{3,}\w*$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
_QUOTES = "\"'`“”‘’ \t"
_IGNORED_KINDS = frozenset({"content_keywords", "high_level_keywords", "low_level_keywords"})
_NO_RELATION = re.compile(r"^\s*(?:no|none|n/a)\b.*\brelation", re.IGNORECASE)


@dataclass(slots=True)
class EntityRecord:
    name: str
    type: str
    description: str


@dataclass(slots=True)
class RelationRecord:
    source: str
    target: str
    description: str
    keywords: list[str]
    weight: float


@dataclass(slots=True)
class Records:
    """What one reply held: entity and relationship records, how many pieces looked like records
    (``total``) and how many of those could not be read (``bad``)."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    total: int = 0
    bad: int = 0

    def extend(self, other: Records) -> None:
        self.entities.extend(other.entities)
        self.relations.extend(other.relations)
        self.total += other.total
        self.bad += other.bad


def clean_name(raw: str) -> str:
    """A record's name as stored: canonical, upper-cased."""
    return canonical_name(raw.strip(_QUOTES)).upper()


def _fields(piece: str) -> list[str] | None:
    start, end = piece.find("("), piece.rfind(")")
    if start != -1 and end > start:
        inner = piece[start + 1 : end]
    elif TUPLE_DELIMITER in piece:
        inner = piece
    else:
        return None
    if TUPLE_DELIMITER not in inner:
        return None
    return [f.strip().strip(_QUOTES).strip() for f in inner.split(TUPLE_DELIMITER)]


def _entity(parts: list[str]) -> EntityRecord | None:
    if len(parts) < 4:
        return None
    name, kind = clean_name(parts[1]), clean_name(parts[2])
    description = TUPLE_DELIMITER.join(parts[3:]).strip()
    if not name or not kind:
        return None
    return EntityRecord(name, kind, description)


def _relation(parts: list[str]) -> RelationRecord | None:
    if len(parts) < 4:
        return None
    source, target = clean_name(parts[1]), clean_name(parts[2])
    if not source or not target:
        return None
    rest = parts[3:]
    weight = 1.0
    if len(rest) > 1 and _NUMBER.match(rest[-1]):
        weight = max(0.0, float(rest.pop()))
    keywords: list[str] = []
    if len(rest) > 1:
        keywords = [k.strip() for k in re.split(r"[,，;；、]", rest.pop()) if k.strip()]
    description = TUPLE_DELIMITER.join(rest).strip()
    return RelationRecord(source, target, description, keywords, weight or 1.0)


def parse_records(reply: str) -> Records:
    """The records of one model reply (see the module docstring)."""
    out = Records()
    text = reply.replace(COMPLETION_DELIMITER, "\n")
    for piece in re.split(re.escape(RECORD_DELIMITER) + r"|\n", text):
        piece = piece.strip()
        if not piece or _FENCE.match(piece):
            continue
        out.total += 1
        parts = _fields(piece)
        if not parts:
            out.bad += 1
            continue
        kind = parts[0].strip(_QUOTES).lower()
        if kind in _IGNORED_KINDS:
            out.total -= 1
            continue
        if kind == "entity":
            entity = _entity(parts)
            if entity is None:
                out.bad += 1
            else:
                out.entities.append(entity)
        elif kind in ("relationship", "relation"):
            relation = _relation(parts)
            if relation is None:
                out.bad += 1
            else:
                out.relations.append(relation)
        else:
            out.bad += 1
    return out


def is_no_relation(description: str) -> bool:
    """True for a description saying that there is no relationship."""
    return bool(_NO_RELATION.match(description))


def says_yes(reply: str) -> bool:
    """True when a yes/no reply says yes (``Y``, ``yes``, ``"Y."``...)."""
    word = reply.strip().strip(_QUOTES + ".!*").lower()
    return word.startswith("y")
