"""The migrations build exactly the schema the models declare (a column added to a model without a
migration, or the other way round, fails here), and go down to an empty database and up again.
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
from ragloom.db.session import _MIGRATIONS, current_revisions, head_revisions, make_engine


def test_the_migrated_database_matches_the_models(ctx) -> None:  # type: ignore[no-untyped-def]
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
