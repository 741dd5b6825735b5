import pytest

from ragloom.errors import InvalidRequestError
from ragloom.retrieval.metadata import matching_ids, validate

DOCS = {
    "a": {"author": "Ada Lovelace", "year": 1843, "date": "1843-09-01", "tags": ["math", "engines"]},
    "b": {"author": "Alan Turing", "year": 1936, "date": "1936-11-12", "tags": ["math"]},
    "c": {"author": "Grace Hopper", "year": "1952", "date": "1952-05-01"},
    "d": {},
}


@pytest.mark.parametrize(("expr", "expected"), [
    ({"key": "author", "op": "=", "value": "Alan Turing"}, ["b"]),
    ({"key": "author", "op": "!=", "value": "Alan Turing"}, ["a", "c"]),  # missing is not "different"
    ({"key": "year", "op": "in", "value": [1843, 1952]}, ["a", "c"]),  # "1952" compares as a number
    ({"key": "year", "op": "range", "value": [1900, None]}, ["b", "c"]),
    ({"key": "date", "op": "range", "value": ["1900-01-01", "1950-01-01"]}, ["b"]),
    ({"key": "author", "op": "contains", "value": "hopper"}, ["c"]),
    ({"key": "tags", "op": "contains", "value": "engines"}, ["a"]),
    ({"key": "year", "op": "<", "value": 1900}, ["a"]),
    ({"key": "tags", "op": "exists"}, ["a", "b"]),
    ({"or": [{"key": "year", "op": "=", "value": 1843}, {"key": "author", "op": "contains", "value": "grace"}]},
     ["a", "c"]),
    ({"and": [{"key": "tags", "op": "contains", "value": "math"}, {"not": {"key": "year", "op": ">", "value": 1900}}]},
     ["a"]),
    ({"key": "author", "op": "=", "value": "Nobody"}, []),
])
def test_expressions(expr, expected) -> None:
    assert matching_ids(expr, DOCS) == expected


@pytest.mark.parametrize("bad", [
    {}, {"key": ""}, {"key": "a", "op": "~", "value": 1}, {"key": "a", "op": "in", "value": 3},
    {"key": "a", "op": "range", "value": [None, None]}, {"and": []}, {"and": [{"key": "a", "value": 1}], "x": 1},
    {"key": "a"}, {"key": "a", "value": 1, "extra": 2},
])
def test_malformed_expressions_are_rejected(bad) -> None:
    with pytest.raises(InvalidRequestError):
        validate(bad)
