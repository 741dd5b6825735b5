"""The migrations build exactly the schema the models declare (a column added to a model without a
migration, or the other way round, fails here), and go down to an empty database and up again. A new
database, made from the models in one step, is the migrated one.
The same checks run on PostgreSQL in ``tests/postgres/test_migrations_pg.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from ragloom.db.models import Base
from ragloom.db.session import (
    _MIGRATIONS,
    Database,
    create_schema,
    current_revisions,
    head_revisions,
    make_engine,
    upgrade,
)

# Server defaults a migration gave a new column only to fill the rows that existed then (0008: existing
# assistants were shared with the team); new rows always get the model's value from the ORM.
BACKFILL_ONLY = {("assistant", "permission")}


def schema(url: str) -> dict[str, object]:
    """What a database holds, as inspection reads it: every table's columns, keys, indexes and
    constraints, and the migration it is stamped with."""
    engine = make_engine(url)
    try:
        found = inspect(engine)
        tables: dict[str, object] = {}
        for table in sorted(found.get_table_names()):
            tables[table] = (
                sorted((c["name"], str(c["type"]), c["nullable"],
                        None if (table, c["name"]) in BACKFILL_ONLY else c.get("default"))
                       for c in found.get_columns(table)),  # a migration adds a column last: order aside
                found.get_pk_constraint(table)["constrained_columns"],
                sorted((fk["constrained_columns"], fk["referred_table"], fk["referred_columns"],
                        fk.get("options", {}).get("ondelete")) for fk in found.get_foreign_keys(table)),
                sorted((ix["name"], ix["column_names"], bool(ix["unique"])) for ix in found.get_indexes(table)),
                sorted((uc["column_names"]) for uc in found.get_unique_constraints(table)),
            )
        tables["(stamp)"] = sorted(current_revisions(engine))
        return tables
    finally:
        engine.dispose()


def test_a_new_database_made_from_the_models_is_the_migrated_one(tmp_path: Path) -> None:
    created, migrated = f"sqlite:///{tmp_path / 'new.db'}", f"sqlite:///{tmp_path / 'migrated.db'}"
    Database(created).migrate()  # empty: made from the models in one step
    upgrade(migrated)  # every migration, in order
    assert schema(created) == schema(migrated)
    engine = make_engine(migrated)
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
        assert not create_schema(engine)  # a database with tables is never made again
    finally:
        engine.dispose()


def test_the_context_database_matches_the_models(ctx) -> None:  # type: ignore[no-untyped-def]
    with ctx.db.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diffs == []


def test_migrations_go_down_to_empty_and_up_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "head")
    command.downgrade(cfg, "base")
    engine = make_engine(url)
    try:
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        command.upgrade(cfg, "head")
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    finally:
        engine.dispose()


def test_the_heads_read_from_the_scripts_are_alembics(tmp_path: Path) -> None:
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    assert head_revisions() == frozenset(ScriptDirectory.from_config(cfg).get_heads())
    # a merge revision (a tuple of parents) and an annotated line are read too
    (tmp_path / "a.py").write_text("revision = 'a'\ndown_revision = None\n")
    (tmp_path / "b.py").write_text("revision: str = 'b'\ndown_revision: str | None = 'a'\n")
    (tmp_path / "c.py").write_text("revision = 'c'\ndown_revision = 'a'\n")
    assert head_revisions(tmp_path) == {"b", "c"}
    (tmp_path / "d.py").write_text("revision = \"d\"\ndown_revision = ('b', 'c')\n")
    assert head_revisions(tmp_path) == {"d"}


def test_a_current_database_is_opened_without_alembic_and_a_behind_one_is_upgraded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "0001")  # a database left behind by an older ragloom
    probe = ("import sys; from ragloom.db.session import Database; Database(sys.argv[1]).migrate(); "
             "print('alembic' in sys.modules)")
    behind = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True, check=True)
    assert behind.stdout.strip() == "True"
    engine = make_engine(url)
    try:
        assert current_revisions(engine) == head_revisions() != {"0001"}
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    finally:
        engine.dispose()
    current = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True, check=True)
    assert current.stdout.strip() == "False"
