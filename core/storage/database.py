"""`Database`: the engine, transactions, live-run rule, settled totals the Store's parts share."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Literal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError

from core.errors import ExperimentConfigError
from core.storage import reads, totals
from core.storage._engines import make_engine, normalise_url
from core.storage._light import DATABASE_URL_ENV, STALE_AFTER_S, default_database_url
from core.storage._rows import _first_line, _settled_key
from core.storage.schema import SchemaError, upgrade_schema
from core.storage.tables import ExperimentRow

__all__ = [
    "DATABASE_URL_ENV",
    "STALE_AFTER_S",
    "STATISTICS_AFTER_ROWS",
    "Database",
    "NotFoundError",
    "StorageError",
    "default_database_url",
]


STATISTICS_AFTER_ROWS = 10_000
"""Rows written at once after which PostgreSQL's statistics of the table are refreshed
(`Database.refresh_statistics`)."""
_REFRESH = {
    "dataset_items": "ANALYZE dataset_items",
    "scorer_results": "VACUUM (ANALYZE) scorer_results",
}
"""What `Database.refresh_statistics` runs for each table. The results are vacuumed as well:
the pages' sums, sorts and score filters are index-only scans, which read the table's row for
every index entry until a VACUUM marks its pages all-visible. At a million results written,
before autovacuum's pass, the sort by score took 0.84 s and a score filter 0.97 s (0.14 and
0.49 s after it). The VACUUM costs 0.5 s at a million new results, against 0.1 s for the
ANALYZE alone. An import is only analysed: its items are read from the table anyway."""
_ANALYZE_WAIT_PAST_DEADLOCK_MS = 1_000
"""How long `Database.refresh_statistics` waits for its lock beyond the server's
`deadlock_timeout` (1 s by default) before it gives up. PostgreSQL cancels an autovacuum that
is in a waiting statement's way only at that deadlock check. A wait of 1 s in all lost the race
to it, so the ANALYZE was skipped whenever autovacuum was vacuuming the table, as it does for
minutes after a large deletion."""
_log = logging.getLogger(__name__)


class StorageError(RuntimeError):
    """The database refused or failed an operation."""


class NotFoundError(LookupError):
    """No dataset or experiment with that id."""


class Database:
    """One database opened (its schema upgraded), shared by the parts of a `Store`."""

    def __init__(self, database_url: str | None, stale_after_s: float = STALE_AFTER_S) -> None:
        self.url = normalise_url(database_url or default_database_url())
        """The database URL (normalised)."""
        self.engine = make_engine(self.url)
        """The SQLAlchemy engine."""
        self.stale_after_s = stale_after_s
        """A running experiment without a heartbeat for this long is `interrupted`."""
        self.settled: dict[str, tuple[tuple[Any, ...], list[reads.ScorerTotals]]] = {}
        """Per-scorer totals of finished experiments, by id, with the row state they hold for."""
        try:
            upgrade_schema(self.engine)  # migrations; safe with other processes opening it too
        except (SQLAlchemyError, SchemaError) as error:
            raise StorageError(
                f"Cannot open the database {self.safe_url}: {_first_line(error)}"
            ) from error

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    def transaction(self, what: str) -> _Transaction:
        """`engine.begin()` whose database errors become StorageError naming `what` failed."""
        return _Transaction(self, what)

    def totals(self, connection: Any, rows: Sequence[Any]) -> dict[str, list[reads.ScorerTotals]]:
        """The per-scorer totals of each experiment row: one pass over the covering index per
        experiment, kept for a finished one until its row changes (a million results take a
        noticeable fraction of a second to sum, and a page asks on every rerun)."""
        found: dict[str, list[reads.ScorerTotals]] = {}
        for row in rows:
            key = _settled_key(row)
            kept = self.settled.get(row["id"])
            if key is not None and kept is not None and kept[0] == key:
                found[row["id"]] = kept[1]
                continue
            stored = None if key is None else totals.kept_totals(connection, row["id"], key)
            found[row["id"]] = (
                reads.scorer_totals(connection, row["id"]) if stored is None else stored
            )
            if key is not None:
                self.settled[row["id"]] = (key, found[row["id"]])
        return found

    def refresh_statistics(self, table: str, rows_written: int) -> None:
        """PostgreSQL: refresh `table`'s statistics after `rows_written` rows (at least
        `STATISTICS_AFTER_ROWS`) went into it, so the next query is planned on them: until
        autovacuum's own ANALYZE, minutes later, the planner took a dataset just imported for a
        few rows, and the first search of a million-item dataset under a score filter scanned
        it whole once per sampled item (over 2 minutes, against 16 ms once analysed;
        docs/storage.md, Reading a large experiment). `ANALYZE dataset_items`: 0.1-0.2 s at a
        million rows. `scorer_results` is vacuumed as well (`_REFRESH`). Best effort: a
        failure is logged, never raised. SQLite plans without statistics (none are kept)."""
        statement = _REFRESH.get(table)
        if statement is None:
            raise ValueError(f"not a table whose statistics are refreshed: {table!r}")
        if self.engine.dialect.name != "postgresql" or rows_written < STATISTICS_AFTER_ROWS:
            return
        try:
            # VACUUM runs outside a transaction only, so the wait is set for the session and
            # reset before the connection goes back to the pool.
            autocommit = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            with autocommit as connection:
                # Both wait for the table's SHARE UPDATE EXCLUSIVE lock. Autovacuum holds it,
                # and gives it up at the server's deadlock check. A dataset's trigram index
                # being built CONCURRENTLY holds it for a minute at a million items, and the
                # import would seem to hang: past the wait, the refresh is skipped and
                # autovacuum does it later.
                connection.exec_driver_sql(
                    "SELECT set_config('lock_timeout', (extract(epoch FROM "
                    "current_setting('deadlock_timeout')::interval) * 1000 + "
                    f"{_ANALYZE_WAIT_PAST_DEADLOCK_MS})::bigint::text || 'ms', false)"
                )
                try:
                    connection.exec_driver_sql(statement)
                finally:
                    connection.exec_driver_sql("RESET lock_timeout")
        except SQLAlchemyError as error:
            _log.warning("%s skipped: %s", statement, _first_line(error))

    def refuse_live_runs(
        self,
        connection: Connection,
        kind: Literal["dataset", "experiment"],
        *,
        dataset_id: str | None = None,
        experiment_id: str | None = None,
    ) -> None:
        """Raise ExperimentConfigError naming the experiment when deleting this dataset (or
        experiment) would take a run some process is making now; called inside the deleting
        transaction, so a run that is live when the deletion starts is never deleted."""
        live = self.live(connection, self.which(dataset_id, experiment_id))
        if not live:
            return
        named = ", ".join(f"{name!r} ({experiment_id})" for experiment_id, name in live[:3])
        if len(live) > 3:
            named += f" and {len(live) - 3} more"
        verb = "is" if len(live) == 1 else "are"
        raise ExperimentConfigError(
            f"Cannot delete the {kind}: experiment {named} {verb} running (in this process or "
            "another process: a CLI, a second dashboard, a team server, whose heartbeat is "
            f"less than {self.stale_after_s:g} s old). Wait for it to finish or cancel it "
            "where it runs, then delete"
        )

    @staticmethod
    def which(dataset_id: str | None, experiment_id: str | None) -> ColumnElement[bool]:
        """The experiments of a dataset, or the one experiment."""
        table = ExperimentRow.__table__
        if experiment_id is not None:
            return table.c.id == experiment_id
        return table.c.dataset_id == dataset_id

    def live(self, connection: Connection, which: ColumnElement[bool]) -> list[tuple[str, str]]:
        """(id, name) of the `which` experiments running with a fresh heartbeat."""
        table = ExperimentRow.__table__
        fresh_since = datetime.now(UTC) - timedelta(seconds=self.stale_after_s)
        seen = func.coalesce(table.c.heartbeat_at, table.c.started_at, table.c.created_at)
        query = (
            select(table.c.id, table.c.name)
            .where(which, table.c.status == "running", seen >= fresh_since)
            .order_by(table.c.created_at)
        )
        return [(row.id, row.name) for row in connection.execute(query)]


class _Transaction:
    """`engine.begin()` whose database errors become StorageError naming what failed."""

    def __init__(self, database: Database, what: str) -> None:
        self._database = database
        self._what = what
        self._context: AbstractContextManager[Connection] | None = None

    def __enter__(self) -> Connection:
        try:
            self._context = self._database.engine.begin()
            return self._context.__enter__()
        except SQLAlchemyError as error:
            raise StorageError(f"Could not {self._what}: {_first_line(error)}") from error

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        try:
            if self._context is not None:  # set by __enter__, which the with statement ran
                self._context.__exit__(kind, error, traceback)
        except SQLAlchemyError as failure:
            raise StorageError(f"Could not {self._what}: {_first_line(failure)}") from failure
        if isinstance(error, SQLAlchemyError):
            raise StorageError(f"Could not {self._what}: {_first_line(error)}") from error
        return False
