"""Engine, session factory and the session scope that commits at the edge.

Sizing (see README "Under load and attack"): a web process admits at most
``max_concurrent_requests`` requests past the gate in ``app/http/guard.py``; each holds at most
one pooled connection, and the pool has that many plus ``_SPARE_CONNECTIONS`` for the health
check and background threads. So a request never waits for a connection while holding a thread
that another request needs to finish (the deadlock the issue measured at ~64 concurrent
requests), and the threadpool (40 threads) is always larger than the gate.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

# Connections beyond the request gate: health checks, run followers, retention.
_SPARE_CONNECTIONS = 4
# A writer on SQLite waits this long for the file lock before giving up; writes are short
# and serialised in-process (write_lock), so only another process can hold it this long.
SQLITE_BUSY_TIMEOUT_MS = 30_000


_WRITE_LOCKS: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()


class Base(DeclarativeBase):
    pass


def make_engine(url: str, *, pool_size: int = 16) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        in_memory = not parsed.database or parsed.database == ":memory:"
        # an in-memory database lives in one connection: no pool to size
        pool: dict[str, Any] = (
            {} if in_memory else {"pool_size": pool_size + _SPARE_CONNECTIONS, "max_overflow": 0}
        )
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            **pool,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            # WAL: readers never wait for the writer; the busy timeout makes a second writer
            # queue for the lock instead of failing at once.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        _WRITE_LOCKS[engine] = threading.Lock()
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        url = str(parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False))
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=pool_size + _SPARE_CONNECTIONS,
        max_overflow=0,
        pool_timeout=30,
    )


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def write_lock(factory: sessionmaker[Session]) -> Iterator[None]:
    """Serialise this process's writers on SQLite (one file lock: queue here, in order,
    rather than spin in SQLite's busy handler); a no-op on PostgreSQL."""
    bind = factory.kw.get("bind")
    lock = _WRITE_LOCKS.get(bind) if isinstance(bind, Engine) else None
    if lock is None:
        yield
        return
    with lock:
        yield


@contextmanager
def write_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    with write_lock(factory), session_scope(factory) as session:
        yield session


T = TypeVar("T")


class Snapshots(Generic[T]):
    """Values derived from database rows, kept per database while a stamp is unchanged.

    The caller reads a cheap stamp (an aggregate that changes on every insert, update and
    delete) on each use; the value is rebuilt only when it differs, so an edit by any worker
    or host on the same database is seen by the next request. Values are shared between
    requests and threads: they must be immutable."""

    def __init__(self) -> None:
        self._by_database: dict[str, tuple[Hashable, T]] = {}
        self._lock = threading.Lock()

    def get(self, session: Session, stamp: Hashable, load: Callable[[], T]) -> T:
        key = session.get_bind().engine.url.render_as_string(hide_password=False)
        snap = self._by_database.get(key)
        if snap is not None and snap[0] == stamp:
            return snap[1]
        value = load()  # read after the stamp: a change in between reloads next time
        with self._lock:
            self._by_database[key] = (stamp, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._by_database.clear()
