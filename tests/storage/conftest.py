"""Fixtures of the object-store tests: a real S3 server per test process, and each engine in turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.storage.engines import Engine, LocalEngine, S3Engine, S3Server, s3_server

ENGINES = ["local", "s3"]


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """Each object-store engine in turn, on a store of its own."""
    made: Engine = (LocalEngine(tmp_path / "files") if request.param == "local"
                    else S3Engine(request.getfixturevalue("s3")))
    yield made
    made.close()
