"""Shared fixtures: every test gets its own data directory, database and index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.service import accounts
from tests.pg import PgServer, pg_server


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, _env_file=None)


@pytest.fixture
def ctx(settings: Settings) -> Iterator[Context]:
    c = Context(settings)
    c.init_storage()
    yield c
    c.close()


@pytest.fixture
def admin(ctx: Context) -> accounts.Bootstrap:
    with ctx.db.session() as s:
        return accounts.bootstrap(s)


@pytest.fixture
def principal(admin: accounts.Bootstrap) -> Principal:
    return admin.principal


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    """A real PostgreSQL server (with pgvector) for this test process; ``pg.new_database()`` per test."""
    with pg_server() as server:
        yield server


@pytest.fixture
def cli_state() -> Iterator[object]:
    """The CLI's module state (its context, client and --json), reset after the test."""
    from ragloom.cli import state

    yield state
    if state._ctx is not None:
        state._ctx.close()
    state._ctx = state._client = None
    state.json = False
