"""The experiments list read straight through the database driver, for the `scorelab` commands
that only look (`scorelab experiments`, a refused `scorelab resume`): no SQLAlchemy, no
sqlmodel, no Alembic, which are most of a command's start-up (bench/cli_startup.py;
docs/storage.md, "The quick listing").

It answers only a database already at the shipped schema revision, opened read-only (SQLite)
or in a read-only transaction (PostgreSQL); anything else (no such file, an older schema to
upgrade, a URL the driver does not take, any error) gives None, and the caller opens the
`Store`, which upgrades, creates or reports the problem as always. The figures are the
`Store`'s: a live experiment without a fresh heartbeat is `interrupted` (`STALE_AFTER_S`),
succeeded runs are the stored results, failed runs the row's counter."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.records import ExperimentListing
from core.storage._light import STALE_AFTER_S, default_database_url, shipped_heads

__all__ = ["listed_experiments"]

_LIVE = ("pending", "running")

_QUERY = """
SELECT e.id, e.name, e.dataset_id, d.name, e.status, e.total_items, e.failed_runs,
       e.created_at, e.started_at, e.finished_at, e.heartbeat_at,
       (SELECT COUNT(*) FROM scorer_results r WHERE r.experiment_id = e.id), e.judge_model
FROM experiments e LEFT OUTER JOIN datasets d ON d.id = e.dataset_id
{where}
ORDER BY e.created_at DESC
"""


def listed_experiments(
    database_url: str | None,
    experiment_id: str | None = None,
    *,
    stale_after_s: float = STALE_AFTER_S,
) -> list[ExperimentListing] | None:
    """Every experiment (or the one with `experiment_id`: a list of one, or empty), newest
    first; None when this read cannot answer and the `Store` must (see the module)."""
    try:
        url = (database_url or default_database_url()).strip()
        if url.startswith("sqlite:///"):
            return _sqlite(url, experiment_id, stale_after_s)
        if url.split("://", 1)[0] in ("postgres", "postgresql", "postgresql+psycopg"):
            return _postgres(url, experiment_id, stale_after_s)
    except Exception:
        return None
    return None


def _sqlite(
    url: str, experiment_id: str | None, stale_after_s: float
) -> list[ExperimentListing] | None:
    path, _, query = url[len("sqlite:///") :].partition("?")
    if query or not path or path == ":memory:" or not Path(path).is_file():
        return None
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    try:
        if not _current(connection.execute("SELECT version_num FROM alembic_version")):
            return None
        where, parameters = ("WHERE e.id = ?", (experiment_id,)) if experiment_id else ("", ())
        rows = connection.execute(_QUERY.format(where=where), parameters).fetchall()
    finally:
        connection.close()
    return _listings(rows, stale_after_s, _sqlite_time)


def _postgres(
    url: str, experiment_id: str | None, stale_after_s: float
) -> list[ExperimentListing] | None:
    import psycopg

    conninfo = "postgresql://" + url.split("://", 1)[1]
    with psycopg.connect(conninfo) as connection:
        connection.read_only = True
        with connection.cursor() as cursor:
            cursor.execute("SELECT version_num FROM alembic_version")
            if not _current(cursor.fetchall()):
                return None
            where, parameters = ("WHERE e.id = %s", (experiment_id,)) if experiment_id else ("", ())
            cursor.execute(_QUERY.format(where=where), parameters)
            rows = cursor.fetchall()
    return _listings(rows, stale_after_s, _aware)


def _current(rows: Any) -> bool:
    return frozenset(str(row[0]) for row in rows) == shipped_heads()


def _listings(
    rows: Sequence[Sequence[Any]], stale_after_s: float, moment: Any
) -> list[ExperimentListing]:
    stale_before = datetime.now(UTC) - timedelta(seconds=stale_after_s)
    listed = []
    for row in rows:
        status, finished_at = row[4], moment(row[9])
        created_at, started_at, heartbeat_at = moment(row[7]), moment(row[8]), moment(row[10])
        if status in _LIVE:  # as the Store reports it (core/storage/_rows.py)
            seen = heartbeat_at or started_at or created_at
            if seen is not None and seen < stale_before:
                status, finished_at = "interrupted", seen
        listed.append(
            ExperimentListing(
                id=row[0],
                name=row[1],
                dataset_id=row[2],
                dataset_name=row[3],
                status=status,
                total_items=row[5],
                succeeded=int(row[11] or 0),
                failed=int(row[6] or 0),
                judge_model=row[12],
                created_at=created_at,
                started_at=started_at,
                finished_at=finished_at,
            )
        )
    return listed


def _sqlite_time(value: Any) -> datetime | None:
    """A timestamp as SQLite holds it (SQLAlchemy's text, written in UTC), timezone-aware."""
    return None if value is None else _aware(datetime.fromisoformat(str(value)))


def _aware(value: datetime | None) -> datetime | None:
    """As the Store gives it: an aware time as it is, a naive one (written in UTC) in UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
