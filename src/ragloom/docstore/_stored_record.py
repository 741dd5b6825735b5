"""A :class:`ChunkRecord` read from an engine's store, decoded field group by field group on first access.

A search materialises every recalled row (often a hundred), but retrieval reads only a
few fields of most of them: the scope keys and the vector (decoded eagerly here), the
term lists token similarity reads, and the display fields of the few rows that end on
the returned page. :class:`StoredRecord` therefore keeps the row's stored bytes and
decodes

* the *payload* fields (every field that is neither a key, the vector, ``available``,
  ``order`` nor a term field: ``content``, ``positions``, ``tags``, ...) together, from
  one JSON document, on the first access to any of them;
* each term field on its own, from one string holding them all.

It is a true ``ChunkRecord`` (``isinstance`` holds, ``dataclasses.fields``/``replace``/
``asdict`` work, assignment works, pickling keeps every field); only the time at which a
field is decoded differs. Decoding is idempotent, so concurrent first reads from several
threads are harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from typing import Any

import numpy as np

from ragloom.dataflow import ChunkRecord
from ragloom.docstore.base import DEFAULT_FIELD_BOOSTS

TERM_FIELDS: tuple[str, ...] = tuple(DEFAULT_FIELD_BOOSTS)
EAGER_FIELDS: tuple[str, ...] = ("id", "kb_id", "doc_id", "version_id", "vector", "available", "order")
PAYLOAD_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(ChunkRecord) if f.name not in EAGER_FIELDS and f.name not in TERM_FIELDS
)
_SLOTS = {f.name: ChunkRecord.__dict__[f.name] for f in fields(ChunkRecord)}  # the slot descriptors
_DEFAULTS = {f.name: f for f in fields(ChunkRecord)}
_LAZY_FIELDS = PAYLOAD_FIELDS + TERM_FIELDS
_UNREAD = object()  # the slot value of a field not decoded yet (never returned: the properties decode it)

PayloadDecoder = Callable[[bytes], dict[str, Any]]
"""Stored payload bytes -> {payload field name: value}; a missing name takes its default."""
TermsDecoder = Callable[[bytes], list[str]]
"""Stored term bytes -> one joined string per term field, in :data:`TERM_FIELDS` order."""
TermSplitter = Callable[[str], list[str]]


def _default(name: str) -> Any:
    f = _DEFAULTS[name]
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"ChunkRecord field {name!r} has no default and is missing from the stored payload")


def _payload_property(name: str) -> property:
    slot = _SLOTS[name]

    def get(self: StoredRecord) -> Any:
        value = slot.__get__(self, StoredRecord)
        if value is not _UNREAD:
            return value
        marker = self._null_markers.get(name)
        if marker is not None and marker in self._payload:
            slot.__set__(self, None)  # known to be None without decoding the payload
        else:
            self._load_payload()
        return slot.__get__(self, StoredRecord)

    def put(self: StoredRecord, value: Any) -> None:
        slot.__set__(self, value)

    return property(get, put, doc=f"``{name}`` (decoded from the stored payload on first access)")


def _term_property(index: int, name: str) -> property:
    slot = _SLOTS[name]

    def get(self: StoredRecord) -> Any:
        value = slot.__get__(self, StoredRecord)
        if value is _UNREAD:
            value = self._split(self._term_parts()[index])
            slot.__set__(self, value)
        return value

    def put(self: StoredRecord, value: Any) -> None:
        slot.__set__(self, value)

    return property(get, put, doc=f"``{name}`` (split from the stored term lists on first access)")


class StoredRecord(ChunkRecord):
    """A ``ChunkRecord`` whose payload and term fields are decoded lazily (see the module docstring).

    Build one with :func:`stored_record`; ``StoredRecord(...)`` with every field (as
    ``dataclasses.replace`` does) gives a fully decoded record.
    """

    __slots__ = ("_payload", "_terms", "_payload_decoder", "_terms_decoder", "_split", "_null_markers")
    _payload: bytes
    _terms: bytes | list[str]  # the stored bytes until first decoded
    _payload_decoder: PayloadDecoder
    _terms_decoder: TermsDecoder
    _split: TermSplitter
    _null_markers: Mapping[str, bytes]

    def _load_payload(self) -> None:
        values = self._payload_decoder(self._payload)
        for name in PAYLOAD_FIELDS:
            slot = _SLOTS[name]
            if slot.__get__(self, StoredRecord) is _UNREAD:  # else assigned since: keep the new value
                slot.__set__(self, values[name] if name in values else _default(name))

    def _term_parts(self) -> list[str]:
        parts = self._terms
        if isinstance(parts, bytes):
            parts = self._terms = self._terms_decoder(parts)
        return parts


for _name in PAYLOAD_FIELDS:
    setattr(StoredRecord, _name, _payload_property(_name))
for _i, _name in enumerate(TERM_FIELDS):
    setattr(StoredRecord, _name, _term_property(_i, _name))


def stored_record(
    keys: tuple[str, str, str, str],
    vector: np.ndarray,
    available: bool,
    order: int,
    *,
    payload: bytes,
    terms: bytes,
    decode_payload: PayloadDecoder,
    decode_terms: TermsDecoder,
    split_terms: TermSplitter,
    null_markers: Mapping[str, bytes] | None = None,
) -> StoredRecord:
    """A record with its keys (id, kb_id, doc_id, version_id), vector, availability and order
    set, and the rest left to decode from ``payload`` and ``terms`` when first read.

    ``null_markers`` maps a payload field to bytes that occur in ``payload`` exactly when the
    field is ``None``: reading that field then decodes nothing (retrieval reads ``parent_id``
    of every candidate)."""
    rec = object.__new__(StoredRecord)
    for name, value in zip(("id", "kb_id", "doc_id", "version_id"), keys, strict=True):
        _SLOTS[name].__set__(rec, value)
    _SLOTS["vector"].__set__(rec, vector)
    _SLOTS["available"].__set__(rec, available)
    _SLOTS["order"].__set__(rec, order)
    for name in _LAZY_FIELDS:
        _SLOTS[name].__set__(rec, _UNREAD)
    rec._payload, rec._terms = payload, terms
    rec._payload_decoder, rec._terms_decoder, rec._split = decode_payload, decode_terms, split_terms
    rec._null_markers = null_markers or {}
    return rec
