"""The migrations build exactly the schema the models declare (a column added to a model without a
migration, or the other way round, fails here)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from ragloom.db.models import Base


def test_the_migrated_database_matches_the_models(ctx) -> None:  # type: ignore[no-untyped-def]
    with ctx.db.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diffs == []
