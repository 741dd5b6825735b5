"""Engine and session factory; the schema is brought up to date on start.

A new, empty database gets the models' schema in one step, stamped with the newest migration
(Alembic's "building an up-to-date database from scratch"); a database an older ragloom made is
upgraded through Alembic's migrations; one already at the newest migration is opened without
importing Alembic at all, as every CLI call after the first does. ``tests/test_migrations.py``
checks that the migrations build exactly the models' schema, so both paths give the same one."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from ragloom.filemodes import create_private_file

_MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x7261676C6F6F6D  # "ragloom": the advisory lock of schema changes on PostgreSQL
_REVISION_LINE = re.compile(r"^(down_revision|revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.MULTILINE)


def _create_sqlite_file(url: str) -> None:
    """Create a new SQLite database file 0600 before SQLite does (it would make it 0644); its
    ``-wal`` and ``-shm`` files get the database file's mode. An existing file is left as it is."""
    parsed = make_url(url)
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:") or parsed.query.get("uri"):
        return
    path = Path(database)
    if path.parent.is_dir() and not path.exists():
        create_private_file(path)


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets WAL mode, foreign keys and a busy timeout (and a new database
    file is created private to the user); PostgreSQL sessions run in UTC, and NUL characters are dropped
    from the strings sent to it."""
    if url.startswith("sqlite"):
        _create_sqlite_file(url)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "postgresql":

        @event.listens_for(engine, "connect")
        def _utc_session(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            # times come back in UTC, as they were stored, whatever the server's time zone
            cur = dbapi_conn.cursor()
            cur.execute("SET TIME ZONE 'UTC'")
            cur.close()
            dbapi_conn.commit()

        @event.listens_for(engine, "before_cursor_execute", retval=True)
        def _without_nul(_conn: Connection, _cursor: Any, statement: str, parameters: Any, _context: Any,
                         _executemany: bool) -> tuple[str, Any]:
            return statement, _strip_nul(parameters)

    return engine


def _strip_nul(value: Any) -> Any:
    """``value`` (a statement's parameters) without NUL characters in its strings: PostgreSQL's text
    cannot hold one (SQLite's can), and a name or a question with one must not fail the request."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {k: _strip_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_strip_nul(v) for v in value)
    return value


def head_revisions(directory: Path = _MIGRATIONS / "versions") -> frozenset[str]:
    """The newest migrations (Alembic's heads), read from the scripts' ``revision`` and
    ``down_revision`` lines without importing Alembic. ``tests/test_migrations.py`` checks it against
    Alembic's own answer."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in directory.glob("*.py"):
        for name, value in _REVISION_LINE.findall(script.read_text(encoding="utf-8")):
            parsed = ast.literal_eval(value)
            if name == "revision":
                revisions.add(parsed)
            elif isinstance(parsed, str):
                parents.add(parsed)
            elif parsed:  # a merge: a tuple of parents
                parents.update(parsed)
    return frozenset(revisions - parents)


def current_revisions(engine: Engine) -> frozenset[str]:
    """The revisions the database at ``engine`` is stamped with (empty for a new database)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return frozenset()
        return frozenset(row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version")))


def create_schema(engine: Engine, heads: frozenset[str] | None = None) -> bool:
    """Give an empty database the models' schema, stamped with the newest migration; False (and nothing
    done) when it has tables already — another process made them meanwhile, or an older ragloom did."""
    from ragloom.db.models import Base

    stamp = sorted(head_revisions() if heads is None else heads)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # processes starting together create it one at a time
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        if inspect(conn).get_table_names():
            return False
        Base.metadata.create_all(conn)
        # Alembic's own version table, as `alembic stamp head` makes it; written last
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
                          "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"))
        for head in stamp:
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": head})
    return True


def upgrade(url: str) -> None:
    """Bring the database at ``url`` to the newest migration."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "head")


class Database:
    """Owns the engine and hands out sessions (one per unit of work)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._factory = sessionmaker(self.engine, expire_on_commit=False)

    def migrate(self) -> None:
        """Bring the schema up to date: a new database is created from the models, an older one
        upgraded by the migrations, a current one left as it is (Alembic would find nothing to do,
        after importing itself and every script)."""
        current = current_revisions(self.engine)
        heads = head_revisions()
        if current == heads:
            return
        if not current and create_schema(self.engine, heads):
            return
        upgrade(self.url)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session committed on success and rolled back on error."""
        s = self._factory()
        try:
            yield s
            s.commit()
        except BaseException:
            s.rollback()
            raise
        finally:
            s.close()

    def dispose(self) -> None:
        self.engine.dispose()
