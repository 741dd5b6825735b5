"""A short hostile corpus (``tests/ingest/fuzz.py``): 200 mutated files of every format, each parsed and
chunked in a child process under the production limits, each ending parsed or failed with a reason —
never another exception, never killed over its time or memory limit.

The long run with its figures is ``benchmarks/fuzz_parsers.py``. A failure here names the file
(``NNNN-seed.ext``) and its mutations; ``fuzz.mutated_files(seeds, N, SEED)`` makes it again.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.ingest import fuzz
from tests.shared import computed_once

FILES = 200
SEED = 1
TIME_LIMIT = 20.0  # seconds of one file (the files are a few kB; the slowest take ~2 s, OCR included)
MEMORY_MB = 1024  # above what the child starts with


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[fuzz.Outcome]:
    def run() -> list[fuzz.Outcome]:
        seeds = fuzz.seed_files(tmp_path_factory.mktemp("seeds"))
        return fuzz.run(fuzz.mutated_files(seeds, FILES, SEED), workers=2, time_limit=TIME_LIMIT,
                        memory_mb=MEMORY_MB)

    return computed_once(tmp_path_factory, "fuzz-outcomes", run)  # once for the run, whichever workers ask


def _report(outcomes: list[fuzz.Outcome]) -> str:
    return "\n".join(f"{o.name} {list(o.ops)}: {o.kind}: {o.reason}" for o in outcomes)


def test_every_mutated_file_is_parsed_or_fails_with_a_reason(outcomes: list[fuzz.Outcome]) -> None:
    assert len(outcomes) == FILES
    bad = [o for o in outcomes if o.kind not in (fuzz.PARSED, fuzz.FAILED)]
    assert not bad, _report(bad)
    failed = [o for o in outcomes if o.kind == fuzz.FAILED]
    assert all(o.reason.split(": ", 1)[1].strip() for o in failed)  # each says why


def test_no_file_reaches_its_time_or_memory_limit(outcomes: list[fuzz.Outcome]) -> None:
    """Files of a few kB: one that runs into the task's own time or memory limit is a parser stuck on
    something small."""
    limited = [o for o in outcomes if "TASK_TIME_LIMIT" in o.reason or "TASK_MEMORY_LIMIT" in o.reason]
    assert not limited, _report(limited)
    assert max(o.memory_mb for o in outcomes) < MEMORY_MB


def test_the_corpus_covers_every_format_both_ways(outcomes: list[fuzz.Outcome], tmp_path: Path) -> None:
    """Every seed format is in the run; the corpus is hostile enough that files fail, and mild enough
    that files of most formats still parse."""
    seeds = set(fuzz.seed_files(tmp_path))
    assert {o.seed for o in outcomes} == seeds
    kinds = Counter(o.kind for o in outcomes)
    assert kinds[fuzz.FAILED] >= FILES // 5 and kinds[fuzz.PARSED] >= FILES // 5, kinds
    parsed_formats = {Path(o.seed).suffix for o in outcomes if o.kind == fuzz.PARSED}
    assert len(parsed_formats) >= 12, parsed_formats
