"""Alembic environment: runs migrations on the URL the caller configured."""

from alembic import context
from sqlalchemy import Connection, engine_from_config, pool, text

from ragloom.db.models import Base
from ragloom.db.session import MIGRATION_LOCK

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        connectable = engine_from_config(
            config.get_section(config.config_ini_section, {}),
            prefix="sqlalchemy.",
            poolclass=pool.NullPool,
        )
        with connectable.connect() as connection:
            _run(connection)
    else:
        _run(connectable)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # processes starting together (an API and its workers on several machines) migrate one at a
            # time; the later ones then find the schema current. Released when the transaction ends.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()


run_migrations_online()
