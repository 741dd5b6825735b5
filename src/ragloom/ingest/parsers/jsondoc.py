"""JSON and JSON Lines: records flattened to ``key.path: value`` lines.

One block per record: each line of a JSONL file, each item of a top-level
JSON array, each key of a top-level JSON object (a scalar document is one
block). Nested objects give dotted keys (``address.city``), list items an
index (``tags[0]``); a list of scalars reads as one comma-separated value.
``meta["record"]`` is the 1-based record number (the line number for JSONL),
``meta["key"]`` the top-level key. Invalid JSON raises :class:`ParseError`
naming the line and column; a value nested deeper than ``max_nesting`` raises
:class:`~ragloom.errors.LimitExceededError` naming the setting (checked before
decoding, without recursion).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TypeVar

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import check_json_depth, too_deep
from ragloom.ingest.parsers.text import decode_or_raise

_MAX_SCALAR_LIST = 50  # longer lists of scalars are listed item by item
CHECK_EVERY = 5000  # records between two task checkpoints
T = TypeVar("T")


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def flatten(value: object, prefix: str = "", lines: list[str] | None = None) -> list[str]:
    """``key.path: value`` lines of a JSON value, in document order (appended to ``lines`` when given:
    each line is made once, not copied up through every level above it)."""
    out = [] if lines is None else lines
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list):
        if not value:
            if prefix:
                out.append(f"{prefix}: []")
        elif len(value) <= _MAX_SCALAR_LIST and not any(isinstance(v, (dict, list)) for v in value):
            joined = ", ".join(_scalar(v) for v in value)
            out.append(f"{prefix}: {joined}" if prefix else joined)
        else:
            for i, item in enumerate(value):
                flatten(item, f"{prefix}[{i}]", out)
    else:
        text = _scalar(value)
        out.append(f"{prefix}: {text}" if prefix else text)
    return out


def _error(filename: str, exc: json.JSONDecodeError, line: int | None = None) -> ParseError:
    where = f"line {line if line is not None else exc.lineno}, column {exc.colno}"
    return ParseError(f"{filename}: invalid JSON at {where}: {exc.msg}")


def _block(lines: list[str], meta: dict[str, str]) -> Block | None:
    text = "\n".join(lines).strip()
    return Block(text=text, meta=meta) if text else None


def _checked(items: Iterable[T]) -> Iterator[tuple[int, T]]:
    """``enumerate(items, start=1)`` with a task checkpoint every ``CHECK_EVERY`` items."""
    for number, item in enumerate(items, start=1):
        if number % CHECK_EVERY == 0:
            checkpoint()
        yield number, item


class JsonParser:
    """A JSON document: one block per top-level item (array) or key (object)."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        check_json_depth(text, filename)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _error(filename, exc) from exc
        except ValueError as exc:  # a number of more than 4,300 digits
            raise ParseError(f"{filename}: invalid JSON: {exc}") from exc
        except RecursionError as exc:
            raise too_deep(filename) from exc
        if isinstance(value, list):
            candidates = [_block(flatten(item), {"record": str(i)}) for i, item in _checked(value)]
        elif isinstance(value, dict):
            candidates = [_block(flatten(item, str(key)), {"record": str(i), "key": str(key)})
                          for i, (key, item) in _checked(value.items())]
        else:
            candidates = [_block(flatten(value), {"record": "1"})]
        blocks = [b for b in candidates if b is not None]
        if not blocks:
            raise ParseError(f"{filename}: the JSON document holds no values")
        return ParsedDocument(blocks=blocks, metadata={"encoding": encoding, "records": str(len(blocks))})


class JsonLinesParser:
    """JSON Lines: one block per non-blank line."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        blocks = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            if number % CHECK_EVERY == 0:
                checkpoint()
            check_json_depth(line, f"{filename}, line {number}")
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _error(filename, exc, number) from exc
            except ValueError as exc:  # a number of more than 4,300 digits
                raise ParseError(f"{filename}: invalid JSON at line {number}: {exc}") from exc
            except RecursionError as exc:
                raise too_deep(f"{filename}, line {number}") from exc
            block = _block(flatten(value), {"record": str(number)})
            if block is not None:
                blocks.append(block)
        if not blocks:
            raise ParseError(f"{filename}: the JSON Lines file holds no records")
        return ParsedDocument(blocks=blocks, metadata={"encoding": encoding, "records": str(len(blocks))})
