"""The migrations build exactly the schema the models declare (a column added to a model without a
migration, or the other way round, fails here), and go down to an empty database and up again.
The same checks run on PostgreSQL in ``tests/postgres/test_migrations_pg.py``."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from ragloom.db.models import Base
from ragloom.db.session import _MIGRATIONS, make_engine


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
