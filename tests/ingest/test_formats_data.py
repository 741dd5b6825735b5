"""JSON and JSON Lines: flattened records, one block each; invalid JSON names line and column."""

from __future__ import annotations

import json

import pytest

from ragloom.errors import ParseError
from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.sniff import JSON, JSONL

RECORDS = [
    {"id": 1, "name": "Pump P-100", "tags": ["water", "main"], "site": {"city": "Oslo", "floor": 2}},
    {"id": 2, "name": "Valve V-7", "parts": [{"sku": "K1", "qty": 3}, {"sku": "K2", "qty": None}]},
]


def test_json_array_gives_one_flattened_block_per_item() -> None:
    doc = parse_document(json.dumps(RECORDS).encode(), "items.json")
    assert [b.text for b in doc.blocks] == [
        "id: 1\nname: Pump P-100\ntags: water, main\nsite.city: Oslo\nsite.floor: 2",
        "id: 2\nname: Valve V-7\nparts[0].sku: K1\nparts[0].qty: 3\nparts[1].sku: K2\nparts[1].qty: null",
    ]
    assert [b.meta["record"] for b in doc.blocks] == ["1", "2"]


def test_json_object_gives_one_block_per_top_level_key() -> None:
    doc = parse_document(b'{"server": {"host": "db", "port": 5432}, "debug": false}', "config.json")
    assert [(b.meta["key"], b.text) for b in doc.blocks] == [
        ("server", "server.host: db\nserver.port: 5432"), ("debug", "debug: false"),
    ]


def test_jsonl_one_block_per_line_with_line_numbers() -> None:
    data = "\n".join(json.dumps(r) for r in RECORDS[:1]) + "\n\n" + json.dumps({"note": "Ünïcode ok"}) + "\n"
    doc = parse_document(data.encode(), "rows.jsonl")
    assert [b.meta["record"] for b in doc.blocks] == ["1", "3"]
    assert doc.blocks[1].text == "note: Ünïcode ok"


@pytest.mark.parametrize(("data", "name", "where"), [
    (b'{\n  "a": 1,\n  "b": [1, 2,,]\n}', "bad.json", "line 3, column 14"),
    (b'{"a": 1}\n{"b": }\n', "bad.jsonl", "line 2, column 7"),
])
def test_invalid_json_names_line_and_column(data: bytes, name: str, where: str) -> None:
    with pytest.raises(ParseError, match=f"{name}: invalid JSON at {where}: Expecting value"):
        parse_document(data, name)


def test_json_is_sniffed_without_an_extension() -> None:
    assert detect_type("export", json.dumps(RECORDS).encode()) == JSON
    assert detect_type("export", b'{"a": 1}\n{"a": 2}\n') == JSONL
    assert detect_type("notes", b"[link](http://x) and more words") != JSON
