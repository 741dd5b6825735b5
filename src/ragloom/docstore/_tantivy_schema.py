"""Tantivy schema of a tenant index and the ChunkRecord <-> tantivy document mapping.

Every row is one tantivy document holding, together:

* the scope fields ``id``, ``kb_id``, ``doc_id``, ``version_id`` (raw, indexed, stored),
  ``available`` (bool) and ``order`` (i64), all fast fields;
* ``seq``: a u64 that is unique per row and grows with every write of the tenant index,
  so an in-memory vector cache can fetch only the rows written since it last looked;
* the seven analysed term fields (whitespace tokenizer, positions kept, not stored);
* ``vec``: the float32 vector as bytes, and ``payload``: every other ChunkRecord field
  as JSON. Text and vector thus become visible in the same tantivy commit.
"""

from __future__ import annotations

import json
import re
from typing import Protocol, cast

import numpy as np
import tantivy

from ragloom.dataflow import ChunkRecord
from ragloom.docstore._stored_record import stored_record
from ragloom.docstore.base import DEFAULT_FIELD_BOOSTS
from ragloom.errors import InvalidRequestError

TERM_FIELDS: tuple[str, ...] = tuple(DEFAULT_FIELD_BOOSTS)
KEY_FIELDS: tuple[str, ...] = ("id", "kb_id", "doc_id", "version_id")
SCHEMA_VERSION = 1
# The term lists are stored in one bytes field, outside the JSON payload (decoding a few
# strings and splitting them is several times faster than decoding JSON lists): the terms
# of a field are joined with US (0x1f), the fields with RS (0x1e).
_TERM_SEP = "\x1f"
_FIELD_SEP = "\x1e"


def build_schema() -> tantivy.Schema:
    """The schema shared by every tenant index."""
    sb = tantivy.SchemaBuilder()
    for name in KEY_FIELDS:
        sb.add_text_field(name, stored=True, fast=True, tokenizer_name="raw", index_option="basic")
    sb.add_unsigned_field("seq", stored=True, indexed=True, fast=True)
    sb.add_boolean_field("available", stored=True, indexed=True, fast=True)
    sb.add_integer_field("order", stored=True, indexed=False, fast=True)
    for name in TERM_FIELDS:
        sb.add_text_field(name, stored=False, tokenizer_name="whitespace", index_option="position")
    sb.add_bytes_field("vec", stored=True)
    sb.add_bytes_field("terms", stored=True)
    sb.add_bytes_field("payload", stored=True)
    return sb.build()


def term_token(term: str) -> str:
    """The token a term becomes in the index: whitespace inside a term is joined with ``_``
    (the whitespace tokenizer would otherwise split it). Queries use the same mapping."""
    return "_".join(term.split())


def _terms_text(terms: list[str]) -> str:
    joined = " ".join(terms)
    if "" not in terms and not _SPACE.search(joined, 0) and joined.count(" ") == len(terms) - 1:
        return joined  # no term holds whitespace or is empty (the usual case): each term is its own token
    return " ".join(tok for tok in (term_token(t) for t in terms) if tok)


_SPACE = re.compile(r"[^\S ]")  # whitespace other than the plain space the terms were joined with


def to_document(rec: ChunkRecord, seq: int, vector: np.ndarray) -> tantivy.Document:
    """The tantivy document of one record; ``vector`` is the checked float32 vector."""
    doc = tantivy.Document()
    for name in KEY_FIELDS:
        doc.add_text(name, getattr(rec, name))
    doc.add_unsigned("seq", seq)
    doc.add_boolean("available", bool(rec.available))
    doc.add_integer("order", int(rec.order))
    for name in TERM_FIELDS:
        text = _terms_text(getattr(rec, name))
        if text:
            doc.add_text(name, text)
    doc.add_bytes("vec", vector.tobytes())
    doc.add_bytes("terms", _FIELD_SEP.join(_join_terms(getattr(rec, n)) for n in TERM_FIELDS).encode())
    doc.add_bytes("payload", _payload(rec))
    return doc


def _payload(rec: ChunkRecord) -> bytes:
    data: dict[str, object] = {
        "content": rec.content,
        "document_name": rec.document_name,
        "kind": rec.kind,
        "positions": [list(p) for p in rec.positions],
        "heading_path": list(rec.heading_path),
        "parent_id": rec.parent_id,
        "html": rec.html,
    }
    if rec.tag_keywords or rec.tags:  # absent keys read back as empty: rows written before tags stay valid
        data["tag_keywords"], data["tags"] = list(rec.tag_keywords), dict(rec.tags)
    if rec.layer or rec.source_ids or rec.built_by:  # summaries only; absent keys read back as the defaults
        data["layer"], data["source_ids"], data["built_by"] = int(rec.layer), list(rec.source_ids), rec.built_by
    if rec.table is not None:  # a table's chunk only; absent reads back as None
        data["table"] = rec.table
    if rec.questions:  # absent reads back as []
        data["questions"] = list(rec.questions)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _join_terms(terms: list[str]) -> str:
    body = "".join(terms)
    if _TERM_SEP in body or _FIELD_SEP in body:
        bad = next(t for t in terms if _TERM_SEP in t or _FIELD_SEP in t)
        raise InvalidRequestError(f"term {bad!r} contains a reserved control character (0x1e, 0x1f)")
    # each term is preceded by the separator, so [] and [""] differ
    return _TERM_SEP + _TERM_SEP.join(terms) if terms else ""


def _split_terms(joined: str) -> list[str]:
    return joined[1:].split(_TERM_SEP) if joined else []


# Typed reads of a stored field. Every row is written by :func:`to_document`, which sets each
# stored field, so ``get_first`` (typed ``Any | None``) never returns None for these names.
def stored_str(doc: tantivy.Document, name: str) -> str:
    return cast(str, doc.get_first(name))


def stored_bytes(doc: tantivy.Document, name: str) -> bytes:
    return cast(bytes, doc.get_first(name))


def stored_int(doc: tantivy.Document, name: str) -> int:
    return int(cast(int, doc.get_first(name)))


class _Counted(Protocol):
    count: int  # set by a search with ``count=True``; missing from tantivy's stubs


def hit_count(result: tantivy.SearchResult) -> int:
    """The number of matching rows of a search run with ``count=True``."""
    return cast(_Counted, result).count


def decode_vector(doc: tantivy.Document) -> np.ndarray:
    return np.frombuffer(stored_bytes(doc, "vec"), dtype=np.float32).copy()


def _decode_payload(raw: bytes) -> dict[str, object]:
    data = json.loads(raw)
    positions = [(int(p[0]), float(p[1]), float(p[2]), float(p[3]), float(p[4])) for p in data["positions"]]
    return {
        "content": data["content"],
        "document_name": data["document_name"],
        "kind": data["kind"],
        "positions": positions,
        "heading_path": list(data["heading_path"]),
        "parent_id": data["parent_id"],
        "html": data["html"],
        "tag_keywords": data.get("tag_keywords", []),
        "tags": data.get("tags", {}),
        "layer": int(data.get("layer", 0)),
        "source_ids": list(data.get("source_ids", [])),
        "built_by": data.get("built_by", ""),
        "table": data.get("table"),
        "questions": list(data.get("questions", [])),
    }


# The payload is written by json.dumps with these separators: a top-level key followed by
# null can only be that field being None (quotes inside strings are escaped, and no nested
# value of the payload is null).
_NULL_MARKERS = {"parent_id": b'"parent_id":null', "html": b'"html":null'}


def _decode_terms(raw: bytes) -> list[str]:
    return raw.decode().split(_FIELD_SEP)


def from_document(doc: tantivy.Document) -> ChunkRecord:
    """Rebuild the ChunkRecord stored in a tantivy document (exact round trip). The keys and
    the vector are decoded now; the payload and term fields when first read (:mod:`._stored_record`)."""
    return stored_record(
        (stored_str(doc, "id"), stored_str(doc, "kb_id"), stored_str(doc, "doc_id"), stored_str(doc, "version_id")),
        decode_vector(doc),
        bool(doc.get_first("available")),
        stored_int(doc, "order"),
        payload=stored_bytes(doc, "payload"),
        terms=stored_bytes(doc, "terms"),
        decode_payload=_decode_payload,
        decode_terms=_decode_terms,
        split_terms=_split_terms,
        null_markers=_NULL_MARKERS,
    )
