"""Connections of the pgvector search store: the URL setting, a fork-safe pool, error mapping.

The pool opens connections lazily (the first call that needs one), so a store built before
``fork`` opens nothing in the parent that the child could share. A child process notices the
fork by its pid and starts an empty pool of its own; the connections it inherited are never
used nor closed there (psycopg closes a connection only in the process that opened it, so the
parent's sessions stay intact). Threads share the pool: each call takes a connection of its
own for its duration.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import conninfo as pg_conninfo
from psycopg.pq import TransactionStatus

from ragloom.errors import ConfigError, InvalidRequestError, StoreError

URL_SETTING = "RAGLOOM_DOCSTORE_URL"

Connection = psycopg.Connection[tuple[Any, ...]]


def conninfo_from_url(url: str | None, setting: str = URL_SETTING) -> str:
    """The libpq URI of a PostgreSQL URL given as ``postgresql://`` or in SQLAlchemy's
    ``postgresql+psycopg://`` form. A missing or invalid URL is a ``ConfigError`` naming ``setting``
    (never echoing the URL, which may hold a password)."""
    if not url or not url.strip():
        raise ConfigError(
            f"{setting} is not set: the pgvector search store needs a PostgreSQL URL "
            "(postgresql://user:password@host:5432/dbname)"
        )
    scheme, sep, rest = url.strip().partition("://")
    if not sep or scheme.split("+", 1)[0].lower() not in ("postgresql", "postgres"):
        raise ConfigError(f"{setting} must be a PostgreSQL URL (postgresql://... or postgresql+psycopg://...)")
    conninfo = f"postgresql://{rest}"
    try:
        pg_conninfo.conninfo_to_dict(conninfo)
    except psycopg.Error:
        raise ConfigError(f"{setting} is not a valid PostgreSQL URL") from None
    return conninfo


@contextmanager
def pg_errors(what: str) -> Iterator[None]:
    """Map driver errors: bad data (a NUL character, an invalid value) is the caller's
    ``InvalidRequestError``, anything else from PostgreSQL or the connection a ``StoreError``."""
    try:
        yield
    except psycopg.DataError as exc:
        raise InvalidRequestError(f"{what}: invalid value: {exc}") from exc
    except psycopg.Error as exc:
        raise StoreError(f"{what} failed: {exc}") from exc


class ConnectionPool:
    """A small, thread-safe, fork-aware pool of autocommit connections (transactions are explicit).

    ``setup`` runs once on each new connection (type registration, schema bootstrap).
    """

    def __init__(self, conninfo: str, setup: Callable[[Connection], None], *, max_idle: int = 8) -> None:
        self._conninfo = conninfo
        self._setup = setup
        self._max_idle = max_idle
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._idle: list[Connection] = []

    def _after_fork(self) -> None:
        if self._pid != os.getpid():
            # inherited from the parent: dropped unclosed (psycopg leaves them to their own process)
            self._pid = os.getpid()
            self._lock = threading.Lock()
            self._idle = []

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        self._after_fork()
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed:
            conn = self._connect()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _connect(self) -> Connection:
        with pg_errors("connecting to the search store"):
            conn = psycopg.connect(self._conninfo, autocommit=True)
            try:
                self._setup(conn)
            except BaseException:
                conn.close()
                raise
            return conn

    def _give_back(self, conn: Connection) -> None:
        reusable = (
            not conn.closed
            and not conn.broken
            and conn.info.transaction_status == TransactionStatus.IDLE
            and self._pid == os.getpid()
        )
        if reusable:
            with self._lock:
                if len(self._idle) < self._max_idle:
                    self._idle.append(conn)
                    return
        if self._pid == os.getpid():
            conn.close()

    def close(self) -> None:
        """Close the idle connections (a later call opens new ones)."""
        self._after_fork()
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
