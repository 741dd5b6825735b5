"""The Alembic migrations on PostgreSQL: from an empty database to the newest revision and back, and the
migrated schema is the one the models declare (what ``tests/test_migrations.py`` checks on SQLite)."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from ragloom.db.models import Base
from ragloom.db.session import _MIGRATIONS, Database, create_schema, make_engine, upgrade
from tests.pg import PgServer


def _config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.attributes["configure_logger"] = False
    return cfg


def _diffs(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(compare_metadata(MigrationContext.configure(conn), Base.metadata))
    finally:
        engine.dispose()


def test_migrations_run_from_empty_to_head_and_match_the_models(pg_url: str) -> None:
    upgrade(pg_url)
    assert _diffs(pg_url) == []
    engine = make_engine(pg_url)
    try:
        head = ScriptDirectory.from_config(_config(pg_url)).get_current_head()
        with engine.connect() as conn:
            assert conn.scalar(text("SELECT version_num FROM alembic_version")) == head
        columns = {c["name"]: c["type"] for c in inspect(engine).get_columns("task")}
    finally:
        engine.dispose()
    # native types, not SQLite's text and integers
    assert str(columns["heartbeat_at"]) == "TIMESTAMP" and columns["heartbeat_at"].timezone  # type: ignore[attr-defined]
    assert str(columns["cancel_requested"]) == "BOOLEAN"
    assert str(columns["coverage"]) == "JSON"


def test_migrations_go_down_to_empty_and_up_again(pg_url: str) -> None:
    cfg = _config(pg_url)
    command.upgrade(cfg, "head")
    command.downgrade(cfg, "base")
    engine = make_engine(pg_url)
    try:
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    finally:
        engine.dispose()
    command.upgrade(cfg, "head")
    assert _diffs(pg_url) == []


def test_an_upgrade_keeps_the_rows_of_an_older_schema(pg_url: str) -> None:
    """Columns added with a server default (0002, 0003, 0007, 0008, 0010) fill existing rows on PostgreSQL."""
    cfg = _config(pg_url)
    command.upgrade(cfg, "0001")
    engine = make_engine(pg_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO tenant (id, name, created_at) VALUES ('t1', 't', now())"))
            conn.execute(text(
                "INSERT INTO knowledgebase (id, tenant_id, name, description, language, permission, embedding_model,"
                " embedding_dim, chunk_method, parser_config, similarity_threshold, vector_similarity_weight,"
                " created_at, updated_at) VALUES ('kb1', 't1', 'kb', '', 'en', 'me', 'm', 8, 'naive', '{}', 0.2, 0.3,"
                " now(), now())"))
        command.upgrade(cfg, "head")
        with engine.connect() as conn:
            row = conn.execute(text("SELECT pagerank, synonyms, tag_kb_ids, topn_tags, build_config "
                                    "FROM knowledgebase")).one()
    finally:
        engine.dispose()
    assert tuple(row) == (0, [], [], 3, {})


def test_processes_starting_together_migrate_once(pg_url: str) -> None:
    """An API and its workers on several machines start at once: each migrates, one at a time (an advisory
    lock), and none fails on a table another has just made. (Processes, not threads: Alembic's
    environment is global to a process.)"""
    import subprocess
    import sys

    code = "import sys; from ragloom.db.session import upgrade; upgrade(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, pg_url], stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs if p.wait(timeout=120) != 0]
    assert errors == []
    assert _diffs(pg_url) == []


def test_a_new_database_made_from_the_models_is_the_migrated_one(pg: PgServer, pg_url: str) -> None:
    from tests.test_migrations import schema

    Database(pg_url).migrate()  # empty: made from the models in one step, under the advisory lock
    migrated = pg.new_database()
    try:
        upgrade(migrated)
        assert schema(pg_url) == schema(migrated)
    finally:
        pg.drop_database(migrated)
    engine = make_engine(pg_url)
    try:
        assert not create_schema(engine)  # a database with tables is never made again
    finally:
        engine.dispose()
