"""Metadata filter expressions, resolved to document ids before the engine runs.

An expression is a JSON object, either a combination::

    {"and": [expr, ...]}   {"or": [expr, ...]}   {"not": expr}

or a condition on one metadata key::

    {"key": "author", "op": "=", "value": "Ada"}
    ops: "=", "!=", "in" (value: list), "not in", "range" (value: [low, high], either may be null),
         ">", ">=", "<", "<=", "contains" (substring of a string, or member of a list), "exists"

Comparisons of numbers are numeric; ISO dates compare as strings (``2024-01-05`` < ``2024-11-30``).
A document without the key never matches a condition on it (``!=`` and ``not in`` included:
missing is not "different"). An expression that matches no document scopes the search to
nothing: it never widens to everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragloom.errors import InvalidRequestError

_OPS = ("=", "!=", "in", "not in", "range", ">", ">=", "<", "<=", "contains", "exists")
MAX_DEPTH = 32  # deepest nesting of and/or/not an expression may have
_MISSING = object()


def validate(expr: Any, path: str = "filter", depth: int = 1) -> None:
    """Raise ``InvalidRequestError`` naming the first malformed part of ``expr`` (or its nesting
    when it is deeper than :data:`MAX_DEPTH`, so evaluating it never exhausts the stack)."""
    if depth > MAX_DEPTH:
        raise InvalidRequestError(
            f"metadata filter is nested too deeply: at most {MAX_DEPTH} levels of and/or/not are allowed")
    if not isinstance(expr, Mapping) or not expr:
        raise InvalidRequestError(f"{path} must be a non-empty object")
    if "and" in expr or "or" in expr:
        (kind,) = [k for k in ("and", "or") if k in expr]
        items = expr[kind]
        if set(expr) != {kind} or not isinstance(items, list) or not items:
            raise InvalidRequestError(f"{path}.{kind} must be the only key and a non-empty list")
        for i, item in enumerate(items):
            validate(item, f"{path}.{kind}[{i}]", depth + 1)
        return
    if "not" in expr:
        if set(expr) != {"not"}:
            raise InvalidRequestError(f"{path}.not must be the only key")
        validate(expr["not"], f"{path}.not", depth + 1)
        return
    key, op = expr.get("key"), expr.get("op", "=")
    if not isinstance(key, str) or not key:
        raise InvalidRequestError(f"{path}.key must be a non-empty string")
    if op not in _OPS:
        raise InvalidRequestError(f"{path}.op must be one of {', '.join(_OPS)}, not {op!r}")
    if set(expr) - {"key", "op", "value"}:
        raise InvalidRequestError(f"{path} has unknown fields: {sorted(set(expr) - {'key', 'op', 'value'})}")
    value = expr.get("value")
    if op in ("in", "not in") and not isinstance(value, list):
        raise InvalidRequestError(f"{path}.value must be a list for {op!r}")
    if op == "range" and not (isinstance(value, list) and len(value) == 2 and value != [None, None]):
        raise InvalidRequestError(f"{path}.value must be [low, high] for 'range'")
    if op != "exists" and "value" not in expr:
        raise InvalidRequestError(f"{path}.value is required for {op!r}")


def _cmp(a: Any, b: Any) -> int | None:
    """-1/0/1, or None when the two cannot be ordered (then the condition is false)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is not type(b) else (a > b) - (a < b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return (a > b) - (a < b)
    if isinstance(a, int | float) and isinstance(b, str) or isinstance(a, str) and isinstance(b, int | float):
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            return None
        return (fa > fb) - (fa < fb)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    return None


def _equal(a: Any, b: Any) -> bool:
    return _cmp(a, b) == 0 if _cmp(a, b) is not None else a == b


def _condition(meta: Mapping[str, Any], key: str, op: str, value: Any) -> bool:
    have = meta.get(key, _MISSING)
    if op == "exists":
        return have is not _MISSING
    if have is _MISSING or have is None:
        return False
    if op == "=":
        return _equal(have, value)
    if op == "!=":
        return not _equal(have, value)
    if op == "in":
        return any(_equal(have, v) for v in value)
    if op == "not in":
        return not any(_equal(have, v) for v in value)
    if op == "contains":
        if isinstance(have, list):
            return any(_equal(h, value) for h in have)
        return isinstance(have, str) and str(value).lower() in have.lower()
    if op == "range":
        low, high = value
        return (low is None or _holds(have, ">=", low)) and (high is None or _holds(have, "<=", high))
    return _holds(have, op, value)


def _holds(a: Any, op: str, b: Any) -> bool:
    c = _cmp(a, b)
    if c is None:
        return False
    return {">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0}[op]


def matches(expr: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Whether one document's metadata satisfies a (validated) expression."""
    if "and" in expr:
        return all(matches(e, meta) for e in expr["and"])
    if "or" in expr:
        return any(matches(e, meta) for e in expr["or"])
    if "not" in expr:
        return not matches(expr["not"], meta)
    return _condition(meta, expr["key"], expr.get("op", "="), expr.get("value"))


def matching_ids(expr: Mapping[str, Any], documents: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Ids of the documents (id -> metadata) that satisfy ``expr``."""
    validate(expr)
    return [doc_id for doc_id, meta in documents.items() if matches(expr, meta or {})]
