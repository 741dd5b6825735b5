"""The tag chunk method: tag-set files of every accepted shape, parsed by the real parsers."""

from __future__ import annotations

import pytest

from ragloom.errors import ParseError
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.chunkers.tag import read_tag_rows, split_tags
from ragloom.ingest.parsers import parse_document


def tag_chunks(data: bytes, name: str) -> list[tuple[str, list[str]]]:
    parsed = parse_document(data, name)
    chunks = chunk_blocks(parsed.blocks, ChunkerConfig.parse({"method": "tag"}), lambda t: len(t.split()))
    assert all(c.method == "tag" for c in chunks)
    return [(c.text, c.tag_keywords) for c in chunks]


@pytest.mark.parametrize(("name", "data"), [
    ("a.csv", b'"Reset the router","network,router"\n"Green tea storage","tea, food"\n'),
    ("b.csv", b"Reset the router,network,router\nGreen tea storage,tea,food\n"),  # tags not quoted
    ("c.csv", b'content,tags\n"Reset the router","network,router"\n"Green tea storage","tea,food"\n'),
    ("d.tsv", b"Reset the router\tnetwork,router\nGreen tea storage\ttea;food\n"),
    ("e.txt", b"Reset the router\tnetwork,router\nGreen tea storage\ttea\xef\xbc\x8cfood\n"),
])
def test_every_shape_of_tag_file(name: str, data: bytes) -> None:
    assert tag_chunks(data, name) == [("Reset the router", ["network", "router"]),
                                      ("Green tea storage", ["tea", "food"])]


def test_rows_without_tags_are_skipped_and_counted() -> None:
    parsed = parse_document(b"Reset the router\tnetwork\nno tags on this line\n\t\norphan\t \n", "t.txt")
    rows = read_tag_rows(parsed.blocks)
    assert [(r.content, r.tags) for r in rows.rows] == [("Reset the router", ["network"])]
    assert rows.skipped == 2


def test_no_usable_row_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"no usable row \(2 rows"):
        tag_chunks(b"first line\nsecond line\n", "t.txt")


def test_tags_are_trimmed_and_deduplicated() -> None:
    assert split_tags([" a ,b,, a", "c  d、b"]) == ["a", "b", "c d"]
