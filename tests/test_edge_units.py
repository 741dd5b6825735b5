"""Unit tests of the request-edge pieces: rate limiter, file names, JSON depth, parameter validation."""

from __future__ import annotations

import unicodedata

import pytest
from pydantic import ValidationError

from ragloom.api.middleware import json_depth
from ragloom.api.ratelimit import RateLimiter
from ragloom.config import Settings
from ragloom.errors import InvalidRequestError, RateLimitedError
from ragloom.ingest.chunkers import ChunkerConfig
from ragloom.retrieval import metadata
from ragloom.schemas.base import parse_json_object
from ragloom.schemas.names import MAX_FILENAME_CHARS, ascii_filename, normalize_filename
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.knowledgebases import validate_chunking
from ragloom.service.search.retrieval import check_result_window


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------- rate limiter

def test_token_bucket_allows_a_burst_then_refills_at_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(6, clock=clock)  # 6 a minute: one token every 10 s
    for _ in range(6):
        limiter.check("key-a", "retrieval")
    with pytest.raises(RateLimitedError) as refused:
        limiter.check("key-a", "retrieval")
    assert refused.value.retry_after == pytest.approx(10.0)
    assert "RAGLOOM_RATE_LIMIT_PER_MINUTE" in refused.value.message and "6 retrieval calls" in refused.value.message
    limiter.check("key-b", "retrieval")  # another key
    limiter.check("key-a", "upload")  # another route group
    clock.now += 4.0
    with pytest.raises(RateLimitedError) as again:
        limiter.check("key-a", "retrieval")
    assert again.value.retry_after == pytest.approx(6.0)
    clock.now += 6.0
    limiter.check("key-a", "retrieval")  # one token came back
    with pytest.raises(RateLimitedError):
        limiter.check("key-a", "retrieval")
    clock.now += 3600
    for _ in range(6):  # refilled to the burst, never beyond it
        limiter.check("key-a", "retrieval")
    with pytest.raises(RateLimitedError):
        limiter.check("key-a", "retrieval")


def test_rate_limit_zero_is_off_and_idle_buckets_are_forgotten() -> None:
    off = RateLimiter(0)
    for _ in range(10_000):
        off.check("k", "retrieval")
    clock = Clock()
    limiter = RateLimiter(60, clock=clock, max_buckets=10)
    for i in range(10):
        limiter.check(f"k{i}", "g")
    clock.now += 120  # every bucket full again
    limiter.check("new", "g")
    assert len(limiter._buckets) == 1  # the full ones were dropped, the fresh one kept
    for _ in range(59):
        limiter.check("new", "g")
    with pytest.raises(RateLimitedError):
        limiter.check("new", "g")


# ---------------------------------------------------------------- file names

@pytest.mark.parametrize(("raw", "stored"), [
    ("report.pdf", "report.pdf"),
    ("Re\u0301sume\u0301.docx", "R\u00e9sum\u00e9.docx"),  # NFC
    ("in\x00voice\u202egpj.exe", "invoicegpj.exe"),  # NUL and a bidi override
    ("\u2066a\u2069b\u200b\u200dc\ufeff.txt", "abc.txt"),  # isolates, zero-width, BOM
    ("a \t\n  b\r\n c.md", "a b c.md"),
    ("  ..hidden. ", "hidden"),
    ("C:\\Users\\me\\notes.txt", "notes.txt"),
    ("../../etc/passwd", "passwd"),
    ("\u62a5\u544a 2024.xlsx", "\u62a5\u544a 2024.xlsx"),
])
def test_file_names_are_normalised(raw: str, stored: str) -> None:
    assert normalize_filename(raw) == stored


def test_long_names_keep_their_extension() -> None:
    name = normalize_filename("\u00e9" * 1000 + ".pdf")
    assert len(name) == MAX_FILENAME_CHARS and name.endswith("\u00e9.pdf")
    plain = normalize_filename("x" * 1000)
    assert plain == "x" * MAX_FILENAME_CHARS
    odd = normalize_filename("y" * 300 + "." + "z" * 40)  # an "extension" that long is just more name
    assert len(odd) == MAX_FILENAME_CHARS and odd.startswith("y")


@pytest.mark.parametrize("raw", ["", " ", "..", "...", "\x00\u202e", "dir/", " . \u200b ."])
def test_names_with_nothing_left_are_refused(raw: str) -> None:
    with pytest.raises(InvalidRequestError, match="invalid file name"):
        normalize_filename(raw)


def test_every_control_or_format_character_goes() -> None:
    everything = "".join(chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF) + ".txt"
    name = normalize_filename(everything, max_chars=100_000)
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in name)
    assert "/" not in name and "\\" not in name


@pytest.mark.parametrize(("name", "fallback"), [
    ("report.pdf", "report.pdf"),
    ("Caf\u00e9 menu.html", "Cafe menu.html"),
    ('a"b;c\\d.txt', "a_b_c_d.txt"),
    ("\u62a5\u544a.pdf", "download.pdf"),
    ("\u62a5\u544a", "download"),
])
def test_ascii_fallback_names(name: str, fallback: str) -> None:
    assert ascii_filename(name) == fallback


# ---------------------------------------------------------------- JSON depth

@pytest.mark.parametrize(("body", "depth"), [
    (b"", 0), (b"1", 0), (b"[]", 1), (b'{"a": [1, {"b": []}]}', 4), (b"[[[[[]]]]]", 5),
    (b'{"q": "[[[[{{{{"}', 1), (b'{"q": "\\"[[[", "r": [["\\\\"]]}', 3), (b'["unterminated [[[[', 1),
])
def test_json_depth_ignores_brackets_in_strings(body: bytes, depth: int) -> None:
    assert json_depth(body) == depth
    assert json_depth(body, exact=False) >= depth  # the quick count is an upper bound


def test_json_depth_is_linear_on_hostile_input() -> None:
    import time

    start = time.perf_counter()
    assert json_depth(b"[" * 1_000_000) == 1_000_000
    assert json_depth(b'"\\"' * 300_000 + b"\\") == 0  # one long unterminated string, many escapes
    assert time.perf_counter() - start < 5


# ---------------------------------------------------------------- chunking parameters

@pytest.mark.parametrize(("config", "field"), [
    ({"delimiter": "`unclosed"}, "delimiter"),
    ({"delimiter": "ab``"}, "delimiter"),
    ({"delimiter": "x" * 257}, "delimiter"),
    ({"children_delimiter": "`"}, "children_delimiter"),
    ({"chunk_token_num": "512"}, "chunk_token_num"),
    ({"chunk_token_num": 512.5}, "chunk_token_num"),
    ({"heading_prefix": "no"}, "heading_prefix"),
    ({"toc_extraction": "false"}, "toc_extraction"),
    ({"overlapped_percent": float("nan")}, "overlapped_percent"),
    ({"task_page_size": 0}, "task_page_size"),
    ({"pattern": "(unclosed"}, "pattern"),
])
def test_bad_chunking_parameters_name_the_field(config: dict, field: str) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        validate_chunking("naive", config)


def test_regex_special_characters_are_plain_delimiters() -> None:
    validate_chunking("naive", {"delimiter": "`(`[*+?\\`$^|`", "children_delimiter": "(["})
    config = ChunkerConfig.parse({"delimiter": "`(`["})
    from ragloom.ingest.chunkers.delimiters import parse_delimiters

    pattern = parse_delimiters(config.delimiter).pattern
    assert pattern is not None and pattern.split("a(b[c") == ["a", "b", "c"]


def test_lenient_parse_is_kept_for_stored_configs() -> None:
    # parameters stored before validation was strict still run
    assert ChunkerConfig.parse({"chunk_token_num": "256"}).chunk_token_num == 256


def test_parser_config_json_too_deep() -> None:
    with pytest.raises(InvalidRequestError, match="nested too deeply"):
        parse_json_object("[" * 100_000 + "]" * 100_000)


# ---------------------------------------------------------------- metadata filter depth

def _chain(levels: int) -> dict:
    expr: dict = {"key": "a", "op": "exists"}
    for i in range(levels - 1):
        expr = {"not": expr} if i % 2 else {"and": [expr]}
    return expr


def test_metadata_filter_depth_is_bounded() -> None:
    metadata.validate(_chain(metadata.MAX_DEPTH))
    assert metadata.matching_ids(_chain(metadata.MAX_DEPTH), {"d": {"a": 1}}) in (["d"], [])
    with pytest.raises(InvalidRequestError, match=f"at most {metadata.MAX_DEPTH} levels"):
        metadata.validate(_chain(metadata.MAX_DEPTH + 1))
    with pytest.raises(InvalidRequestError, match="nested too deeply"):
        metadata.matching_ids(_chain(100_000), {"d": {"a": 1}})  # never a RecursionError


# ---------------------------------------------------------------- result window

def test_result_window() -> None:
    settings = Settings(max_result_window=100, _env_file=None)
    check_result_window(settings, 1, 100)
    check_result_window(settings, 10, 10)
    for page, size in [(11, 10), (2, 51), (10_000_000, 256), (10**9, 6)]:
        with pytest.raises(InvalidRequestError, match="RAGLOOM_MAX_RESULT_WINDOW"):
            check_result_window(settings, page, size)
    for page, size in [(0, 6), (1, 0), (1, 257)]:  # out of range already in the options
        with pytest.raises(ValidationError):
            RetrievalOptions(page=page, page_size=size)
