"""SQLite's trigram index of a dataset's texts (revision 0015), filled when it may be wanted
rather than by the import: an import of a million items pays nothing for a search nobody may
run. The dashboard's experiment page asks for its dataset's index when it opens
(`SearchIndexer.start`: built in a thread of its own while the person reads the page), and a
search finding no index builds a small dataset's itself; a large one's is started in the
background and the search answered by reading the texts meanwhile (the same answers: the index
only narrows which texts are read). Either way a chunk of items per transaction, so a run
writing its results at the same time waits at most one chunk for the write lock; a background
build also pauses between chunks while this process reads a page and for `QUIET_S` after
(`SearchIndexer.searching`), so the first search, which reads the texts, does not share the
machine with the build (docs/storage.md, Text search).

PostgreSQL's equivalent (revision 0016): a partial GIN trigram index of one dataset's searched
texts (`build_postgres_index`: `CREATE INDEX CONCURRENTLY ... WHERE dataset_id = '<id>'`,
which lets the import and the runs write meanwhile), built in a thread started by the same
page hook and by a search finding it missing; the searches meanwhile are the same statements,
which the planner answers from the index once it is valid. One statement on the server: it
cannot pause for the pages the way SQLite's chunks do."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Literal

from sqlalchemy.engine import Connection, Engine

from core.storage.tables import SEARCH_DATASETS, SEARCH_ROWID_SPAN, SEARCH_TABLE, SEARCHED_TEXT
from core.storage.text_search import dataset_index_name, literal_dataset_id

__all__ = [
    "INDEX_CHUNK",
    "SYNC_LIMIT",
    "SearchIndexer",
    "build_postgres_index",
    "drop_postgres_index",
    "index_dataset_texts",
    "postgres_index_state",
]

INDEX_CHUNK = 5_000
"""Items indexed per transaction: a page read waits for the chunk being written (about 50 ms
of a million items' 10 s build), and a run writing results for the write lock."""

SYNC_LIMIT = 50_000
"""The most items a search indexes itself before answering (well under a second of indexing);
a larger dataset's index is built in the background while searches read the texts."""

QUIET_S = 0.5
"""How long a background build waits after this process's last page read before writing its
next chunk: a page's run reads several times and renders in between, time whose CPU the build
would otherwise take (on a loaded machine, the first search's)."""

PATIENCE_S = 2.0
"""The longest a background build waits for a quiet spell before writing a chunk anyway: a
dashboard read without pause by many people still gets its index (a chunk every 2 s)."""

_log = logging.getLogger(__name__)


class SearchIndexer:
    """Who builds which dataset's index in this process: at most one thread per dataset, each
    a daemon (a process ending mid-chunk loses only that chunk's transaction, taken up again
    by the next build)."""

    def __init__(
        self,
        engine: Callable[[], Engine],
        *,
        chunk: int = INDEX_CHUNK,
        sync_limit: int = SYNC_LIMIT,
        quiet_s: float = QUIET_S,
        patience_s: float = PATIENCE_S,
    ) -> None:
        self._engine = engine
        self._chunk = chunk
        self._sync_limit = sync_limit
        self._quiet_s = quiet_s
        self._patience_s = patience_s
        self._lock = threading.Lock()
        self._builds: dict[str, threading.Thread] = {}
        self._quiet = threading.Condition()
        self._reading = 0
        self._read_ended = -float("inf")
        self._writing = threading.Lock()
        """Held by a background build while it writes a chunk."""
        self._whole: set[str] = set()
        """PostgreSQL: the datasets whose index was found valid, or cannot be made (no
        `pg_trgm`), so that a search does not ask the database again. A dataset deleted
        leaves its id here: ids are never reused."""

    def for_search(self, dataset_id: str, item_count: int) -> None:
        """Before a search of the dataset: its index built first when the dataset is small;
        otherwise its build started (or left running) in the background, the search then
        answered without it until it is whole."""
        if self.building(dataset_id):
            return
        if self._engine().dialect.name == "postgresql":
            if item_count > self._sync_limit:  # never built first: it may wait for others
                self.start(dataset_id, item_count)
        elif item_count <= self._sync_limit:
            index_dataset_texts(self._engine(), dataset_id, self._chunk)
        else:
            self.start(dataset_id)

    def start(self, dataset_id: str, item_count: int | None = None) -> bool:
        """Build the dataset's index in a thread of its own unless it is whole or being built;
        whether a build is now running (on PostgreSQL, the dataset's partial trigram index,
        `build_postgres_index`, for a dataset of over `sync_limit` items: `item_count`, when
        the caller has it, spares asking the database)."""
        engine = self._engine()
        if dataset_id in self._whole:
            return False
        postgres = engine.dialect.name == "postgresql"
        if postgres and item_count is not None and item_count <= self._sync_limit:
            return False  # scanned, never indexed
        with engine.connect() as connection:
            if postgres:
                missing = self._postgres_wanted(connection, dataset_id, item_count)
            else:
                missing = _state(connection, dataset_id) is False  # not whole, and an index here
        if not missing:
            return False
        target = self._build_postgres if postgres else self._build
        with self._lock:
            if dataset_id in self._builds:
                return True
            build = threading.Thread(
                target=target,
                args=(engine, dataset_id),
                name=f"scorelab-search-index-{dataset_id}",
                daemon=True,
            )
            self._builds[dataset_id] = build
        build.start()
        return True

    def _postgres_wanted(
        self, connection: Connection, dataset_id: str, item_count: int | None
    ) -> bool:
        """Whether the dataset's PostgreSQL index is to be built: it is missing or invalid,
        and the dataset has over `sync_limit` items (fewer are scanned in well under 0.1 s,
        which an index, also kept up by every later insert of theirs, would not repay)."""
        state = postgres_index_state(connection, dataset_id)
        if state not in ("missing", "invalid"):
            self._whole.add(dataset_id)  # valid, or none can be: not asked again
            return False
        items = item_count
        if items is None:
            items = connection.exec_driver_sql(
                "SELECT item_count FROM datasets WHERE id = %s", (dataset_id,)
            ).scalar()
        return items is not None and int(items) > self._sync_limit

    @contextmanager
    def searching(self) -> Iterator[None]:
        """While a page of this process is read, and `quiet_s` after: the background builds
        write no chunk (the one being written finishes first, then they wait), so the page's
        run has the machine, the database's pages and the write-ahead log to itself. At a
        million items on one core, the first search read the texts in 0.2-0.3 s so and in
        0.4-0.6 s beside the build."""
        with self._quiet:
            self._reading += 1
        try:
            with self._writing:  # the chunk being written, if any, finishes first
                pass
            yield
        finally:
            with self._quiet:
                self._reading -= 1
                self._read_ended = time.monotonic()
                self._quiet.notify_all()

    @contextmanager
    def _chunk_turn(self) -> Iterator[None]:
        """A background build's turn to write a chunk: when no page has been read for
        `quiet_s`, or after `patience_s` of waiting for that."""
        with self._quiet:
            until = time.monotonic() + self._patience_s
            while (self._reading or self._quiet_left() > 0) and time.monotonic() < until:
                left = until - time.monotonic()
                self._quiet.wait(left if self._reading else min(left, self._quiet_left()))
            self._writing.acquire()  # under the condition: no read starts unseen meanwhile
        try:
            yield
        finally:
            self._writing.release()

    def _quiet_left(self) -> float:
        """Seconds of `quiet_s` left since the last read ended (under `_quiet`)."""
        return self._read_ended + self._quiet_s - time.monotonic()

    def building(self, dataset_id: str) -> bool:
        """Whether this process is building the dataset's index now."""
        with self._lock:
            return dataset_id in self._builds

    def wait(self, dataset_id: str, timeout_s: float | None = None) -> bool:
        """Wait for this process's build of the dataset's index, if any; whether none runs
        any more."""
        with self._lock:
            build = self._builds.get(dataset_id)
        if build is not None:
            build.join(timeout_s)
        return not self.building(dataset_id)

    def _build_postgres(self, engine: Engine, dataset_id: str) -> None:
        try:
            if build_postgres_index(engine, dataset_id):
                self._whole.add(dataset_id)
        except Exception:  # an optimisation: the next search or page opened tries again
            _log.warning(
                "Building the trigram index of dataset %s stopped", dataset_id, exc_info=True
            )
        finally:
            with self._lock:
                self._builds.pop(dataset_id, None)

    def _build(self, engine: Engine, dataset_id: str) -> None:
        try:
            index_dataset_texts(engine, dataset_id, self._chunk, self._chunk_turn)
        except Exception:  # a build is an optimisation: the next search takes it up again
            _log.warning(
                "Building the text search index of dataset %s stopped", dataset_id, exc_info=True
            )
        finally:
            with self._lock:
                self._builds.pop(dataset_id, None)


_TEXTS = "item_id, input, output, ground_truth"


def index_dataset_texts(
    engine: Engine,
    dataset_id: str,
    chunk: int = INDEX_CHUNK,
    turn: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> bool:
    """Index the texts of the dataset's items not indexed yet, each chunk within `turn()`
    (a background build's wait for no page being read); True when the whole dataset is
    (then every later change of its items is kept by the triggers), False on PostgreSQL, on a
    SQLite without FTS5's trigrams, and for an unknown dataset. Another process indexing the
    same dataset at the same time is harmless: each chunk is one transaction that starts by
    taking the write lock, then reads how far the index has got."""
    if engine.dialect.name != "sqlite":
        return False
    with engine.connect() as connection:
        state = _state(connection, dataset_id)
    if state is None:
        return False
    while not state:
        with turn(), engine.begin() as connection:
            state = _index_next_chunk(connection, dataset_id, chunk)
        if state is None:
            return False
    return True


def _state(connection: Connection, dataset_id: str) -> bool | None:
    """Whether the dataset is wholly indexed (None: no index on this database)."""
    there = connection.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SEARCH_TABLE,)
    ).first()
    if there is None:
        return None
    done = connection.exec_driver_sql(
        f"SELECT complete FROM {SEARCH_DATASETS} WHERE dataset_id = ?", (dataset_id,)
    ).scalar()
    return bool(done)


def _index_next_chunk(connection: Connection, dataset_id: str, chunk: int) -> bool | None:
    """Index the next `chunk` items of the dataset; whether it is now wholly indexed (None for
    a dataset that is no more)."""
    # A write first: it takes the write lock (waiting its turn), so what is read next is not
    # a snapshot another writer could have moved past.
    connection.exec_driver_sql(
        f"INSERT OR IGNORE INTO {SEARCH_DATASETS} (dataset_id) "
        "SELECT id FROM datasets WHERE id = ?",
        (dataset_id,),
    )
    row = connection.exec_driver_sql(
        f"SELECT ordinal, indexed_below, complete FROM {SEARCH_DATASETS} WHERE dataset_id = ?",
        (dataset_id,),
    ).first()
    if row is None:
        return None
    ordinal, below, complete = row
    if complete:
        return True
    above = below + chunk
    connection.exec_driver_sql(
        f"INSERT INTO {SEARCH_TABLE} (rowid, {_TEXTS}) "
        f"SELECT ? * {SEARCH_ROWID_SPAN} + position, {_TEXTS} FROM dataset_items "
        "WHERE dataset_id = ? AND position >= ? AND position < ? ORDER BY position",
        (ordinal, dataset_id, below, above),
    )
    more = connection.exec_driver_sql(
        "SELECT 1 FROM dataset_items WHERE dataset_id = ? AND position >= ? LIMIT 1",
        (dataset_id, above),
    ).first()
    connection.exec_driver_sql(
        f"UPDATE {SEARCH_DATASETS} SET indexed_below = ?, complete = ? WHERE dataset_id = ?",
        (above, 0 if more else 1, dataset_id),
    )
    return more is None


_LOCK_SPACE = 0x5C0E
"""The first key of the advisory locks taken while a dataset's PostgreSQL index is built."""

IndexState = Literal["valid", "invalid", "missing"]


def postgres_index_state(connection: Connection, dataset_id: str) -> IndexState | None:
    """PostgreSQL: whether the dataset's partial trigram index is there and valid (`invalid`:
    a concurrent build under way, or one interrupted, which left its index unusable); None
    when it cannot be (not PostgreSQL, no `pg_trgm`, an id the store does not make)."""
    name = dataset_index_name(dataset_id)
    if connection.dialect.name != "postgresql" or name is None:
        return None
    if _trigram_schema(connection) is None:
        return None
    valid = connection.exec_driver_sql(
        "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", (name,)
    ).scalar()
    if valid is None:
        return "missing"
    return "valid" if valid else "invalid"


def build_postgres_index(engine: Engine, dataset_id: str) -> bool:
    """Build the dataset's partial trigram index on PostgreSQL unless it is valid already
    (an invalid one, left by an interrupted build, is dropped and built again); whether it is
    valid now. `CREATE INDEX CONCURRENTLY`, from an autocommit connection: the items and
    results stay writable meanwhile. Under an advisory lock of the dataset: a process finding
    another's build under way returns at once (False), so no two build the same index."""
    name, literal = dataset_index_name(dataset_id), literal_dataset_id(dataset_id)
    if engine.dialect.name != "postgresql" or name is None or literal is None:
        return False
    lock = (_LOCK_SPACE, _lock_key(dataset_id))
    with engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        if not connection.exec_driver_sql("SELECT pg_try_advisory_lock(%s, %s)", lock).scalar():
            return False
        try:
            return _build_under_lock(connection, dataset_id, name, literal)
        finally:
            connection.exec_driver_sql("SELECT pg_advisory_unlock(%s, %s)", lock)


def _build_under_lock(connection: Connection, dataset_id: str, name: str, literal: str) -> bool:
    state = postgres_index_state(connection, dataset_id)
    if state is None or state == "valid":
        return state == "valid"
    if state == "invalid":  # no build of ours runs (the lock): an interrupted one's leftover
        connection.exec_driver_sql(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    if not _dataset_exists(connection, dataset_id):
        return False
    schema = _trigram_schema(connection)
    connection.exec_driver_sql(
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON dataset_items USING gin "
        f'(({SEARCHED_TEXT}) "{schema}".gin_trgm_ops) WHERE dataset_id = {literal}'
    )
    if not _dataset_exists(connection, dataset_id):  # deleted meanwhile: its index goes too
        connection.exec_driver_sql(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        return False
    return postgres_index_state(connection, dataset_id) == "valid"


def drop_postgres_index(connection: Connection, dataset_id: str) -> None:
    """Drop the dataset's partial trigram index (PostgreSQL; nothing elsewhere), within the
    caller's transaction, which deletes the dataset. While a build of it runs (its advisory
    lock held) the build drops it itself when it finds the dataset gone: a `DROP INDEX` here
    would wait for the whole build, holding every reader of the items behind it."""
    name = dataset_index_name(dataset_id)
    if connection.dialect.name != "postgresql" or name is None:
        return
    lock = (_LOCK_SPACE, _lock_key(dataset_id))
    if connection.exec_driver_sql("SELECT pg_try_advisory_xact_lock(%s, %s)", lock).scalar():
        connection.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")


def _lock_key(dataset_id: str) -> int:
    """The second key of the dataset's advisory lock (a signed 32-bit number of its id's last
    hex digits)."""
    return int(dataset_id[-8:], 16) - 2**31


def _dataset_exists(connection: Connection, dataset_id: str) -> bool:
    found = connection.exec_driver_sql("SELECT 1 FROM datasets WHERE id = %s", (dataset_id,))
    return found.first() is not None


def _trigram_schema(connection: Connection) -> str | None:
    """The schema holding the `pg_trgm` extension, None without it."""
    schema = connection.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'pg_trgm'"
    ).scalar()
    return None if schema is None else str(schema)
