"""Every test of this folder runs on a real PostgreSQL server (``tests/pg.py``), in a fresh database.

The ``settings`` fixture (and so ``ctx``, ``admin`` and ``principal`` of ``tests/conftest.py``) points
at that database, and so does ``RAGLOOM_DATABASE_URL`` while the test runs: a test that builds its own
``Settings`` (an app fixture, a command-line run) gets it too. Test modules of the SQLite suite are run
here again by importing their tests (``test_sqlite_suite_on_pg.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.config import Settings
from tests.pg import PgServer


@pytest.fixture
def pg_url(pg: PgServer) -> Iterator[str]:
    """A fresh, empty PostgreSQL database (dropped after the test)."""
    url = pg.new_database()
    yield url
    pg.drop_database(url)


@pytest.fixture(autouse=True)
def _on_postgres(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLOOM_DATABASE_URL", pg_url)


@pytest.fixture
def settings(tmp_path: Path, pg_url: str) -> Settings:
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, database_url=pg_url,
                    source_roots=[tmp_path / "shared"], _env_file=None)  # tests/sources' folder (``shared``)
