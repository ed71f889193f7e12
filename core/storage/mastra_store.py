"""Reading (and writing) a Mastra project's own store: `@mastra/libsql` (an SQLite-format file) or
`@mastra/pg` (a PostgreSQL database). docs/mastra.md describes the tables and what is read.

Rows come out as plain dicts keyed by Mastra's own (camelCase) column names, JSON columns
decoded. LibSQL keeps its `jsonb` columns as SQLite JSONB blobs, which only SQLite >= 3.45 reads:
the file is opened with `apsw`, which bundles a current SQLite (Python's `sqlite3` may be older).
PostgreSQL is read with psycopg, the driver scorelab's own store uses.

Only the columns this module knows are read (a newer Mastra may add others: they are named in
`MastraStore.skipped`, never an error); a missing table or column this module needs is a
`MastraStoreError` naming it. The file is opened read-only for reading: importing never changes
the Mastra store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import apsw

__all__ = [
    "DATASETS",
    "DATASET_ITEMS",
    "DATASET_VERSIONS",
    "EXPERIMENTS",
    "EXPERIMENT_RESULTS",
    "SCORES",
    "MastraStore",
    "MastraStoreError",
    "open_mastra_store",
]


class MastraStoreError(RuntimeError):
    """The Mastra store cannot be read (or written): the message names the store and the cause."""


@dataclass(frozen=True)
class _Table:
    name: str
    needed: tuple[str, ...]
    """Columns without which its rows mean nothing: missing, the store is refused."""
    optional: tuple[str, ...] = ()
    """Columns read when present (older Mastra versions lack some)."""
    json_columns: frozenset[str] = field(default_factory=frozenset)

    @property
    def known(self) -> tuple[str, ...]:
        return self.needed + self.optional


DATASETS = _Table(
    "mastra_datasets",
    ("id", "name", "version"),
    ("description", "metadata", "tags", "createdAt", "updatedAt"),
    frozenset({"metadata", "tags"}),
)
DATASET_ITEMS = _Table(
    "mastra_dataset_items",
    ("id", "datasetId", "datasetVersion", "input"),
    ("groundTruth", "metadata", "validTo", "isDeleted", "externalId", "createdAt"),
    frozenset({"input", "groundTruth", "metadata"}),
)
EXPERIMENTS = _Table(
    "mastra_experiments",
    ("id", "status"),
    (
        "name",
        "description",
        "metadata",
        "datasetId",
        "datasetVersion",
        "targetType",
        "targetId",
        "totalItems",
        "succeededCount",
        "failedCount",
        "skippedCount",
        "startedAt",
        "completedAt",
        "createdAt",
        "scorerIds",
        "updatedAt",
    ),
    frozenset({"metadata", "scorerIds"}),
)
EXPERIMENT_RESULTS = _Table(
    "mastra_experiment_results",
    ("id", "experimentId", "itemId", "input"),
    (
        "itemDatasetVersion",
        "output",
        "groundTruth",
        "metadata",
        "error",
        "startedAt",
        "completedAt",
        "traceId",
        "status",
        "tags",
        "comment",
        "createdAt",
    ),
    frozenset({"input", "output", "groundTruth", "metadata", "error", "tags"}),
)
SCORES = _Table(
    "mastra_scorers",
    ("id", "scorerId", "runId", "score", "source"),
    (
        "scorer",
        "traceId",
        "spanId",
        "preprocessStepResult",
        "extractStepResult",
        "analyzeStepResult",
        "reason",
        "metadata",
        "preprocessPrompt",
        "extractPrompt",
        "generateScorePrompt",
        "generateReasonPrompt",
        "analyzePrompt",
        "reasonPrompt",
        "input",
        "output",
        "additionalContext",
        "requestContext",
        "entityType",
        "entity",
        "entityId",
        "resourceId",
        "threadId",
        "datasetId",
        "datasetItemId",
        "createdAt",
    ),
    frozenset(
        {
            "scorer",
            "preprocessStepResult",
            "extractStepResult",
            "analyzeStepResult",
            "metadata",
            "input",
            "output",
            "additionalContext",
            "requestContext",
            "entity",
        }
    ),
)
DATASET_VERSIONS = _Table("mastra_dataset_versions", ("id", "datasetId", "version"), ("createdAt",))
_TABLES = (DATASETS, DATASET_ITEMS, EXPERIMENTS, EXPERIMENT_RESULTS, SCORES)
_OPTIONAL_TABLES = (DATASET_VERSIONS,)
"""Read or written when present; a store without them is still a Mastra store."""
_PAGE = 5_000


class _Backend(Protocol):
    placeholder: str

    def columns(self, table: str) -> list[str] | None: ...

    def rows(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]: ...

    def begin(self) -> None: ...

    def end(self) -> None: ...

    json_param: str

    def json_value(self, value: Any) -> Any: ...

    def plain_value(self, value: Any) -> Any: ...

    def begin_write(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def execute_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None: ...

    def close(self) -> None: ...


class _SQLiteBackend:
    """A LibSQL file through apsw (read-only unless `writable`)."""

    placeholder = "?"

    def __init__(self, path: Path, writable: bool) -> None:
        if not path.is_file():
            raise MastraStoreError(f"No Mastra store at {path}: the file does not exist")
        self.path = path
        flags = apsw.SQLITE_OPEN_READWRITE if writable else apsw.SQLITE_OPEN_READONLY
        try:
            self.connection = apsw.Connection(str(path), flags=flags)
            self.connection.set_busy_timeout(2_000)
            # A file that is not SQLite at all fails on the first read, not on open.
            self.connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except apsw.Error as error:
            raise MastraStoreError(f"Cannot read {path} as a Mastra store: {error}") from error

    def columns(self, table: str) -> list[str] | None:
        found = [row[1] for row in self.connection.execute(f'PRAGMA table_info("{table}")')]
        return found or None

    def rows(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self.connection.execute(sql, tuple(params))
        except apsw.BusyError as error:
            raise MastraStoreError(
                f"{self.path} is locked by another process (a Mastra run writing it?): try again "
                f"when it has finished ({error})"
            ) from error
        except apsw.Error as error:
            raise MastraStoreError(f"Cannot read {self.path}: {_first_line(error)}") from error

    def begin(self) -> None:
        self._run("BEGIN")
        # the snapshot starts with the first read: take it now
        list(self.rows("SELECT count(*) FROM sqlite_master", ()))

    def end(self) -> None:
        if not self.connection.getautocommit():
            self._run("COMMIT")

    def _run(self, sql: str) -> None:
        list(self.rows(sql, ()))

    json_param = "jsonb(?)"  # as Mastra's LibSQL store writes them

    def json_value(self, value: Any) -> Any:
        return None if value is None else json.dumps(value, ensure_ascii=False, default=str)

    def plain_value(self, value: Any) -> Any:
        if isinstance(value, datetime):
            return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if isinstance(value, bool):
            return int(value)
        return value

    def begin_write(self) -> None:
        self._run("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._run("COMMIT")

    def rollback(self) -> None:
        if not self.connection.getautocommit():
            self.connection.execute("ROLLBACK")

    def execute_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        try:
            self.connection.executemany(sql, rows)
        except apsw.Error as error:
            raise MastraStoreError(f"Cannot write {self.path}: {_first_line(error)}") from error

    def close(self) -> None:
        self.connection.close()


class _PostgresBackend:
    """A `@mastra/pg` database through psycopg (its tables in `schema`, `public` by default)."""

    placeholder = "%s"

    def __init__(self, url: str, schema: str, writable: bool = False) -> None:
        import psycopg  # lazily: only a PostgreSQL store needs the driver

        self.schema = schema
        self.url = _safe(url)
        try:
            self.connection = psycopg.connect(_libpq_url(url), connect_timeout=5)
        except psycopg.Error as error:
            raise MastraStoreError(
                f"Cannot connect to the Mastra store {_safe(url)}: {_first_line(error)}"
            ) from error
        self.connection.read_only = not writable
        self.connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ

    def begin(self) -> None:
        pass  # psycopg opens a transaction at the first query (not autocommit)

    def end(self) -> None:
        self.connection.rollback()  # read only: nothing to keep

    json_param = "%s"

    def json_value(self, value: Any) -> Any:
        from psycopg.types.json import Jsonb

        return None if value is None else Jsonb(value, dumps=lambda v: json.dumps(v, default=str))

    def plain_value(self, value: Any) -> Any:
        return value

    def begin_write(self) -> None:
        self.connection.rollback()  # whatever was read before: a fresh transaction
        self.connection.isolation_level = None  # the server's default (read committed)

    def commit(self) -> None:
        self.connection.commit()

    def rollback(self) -> None:
        self.connection.rollback()

    def execute_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        import psycopg

        try:
            with self.connection.cursor() as cursor:
                cursor.executemany(sql.replace('INTO "', f'INTO "{self.schema}"."'), rows)
        except psycopg.Error as error:
            raise MastraStoreError(f"Cannot write {self.url}: {_first_line(error)}") from error

    def columns(self, table: str) -> list[str] | None:
        query = (
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position"
        )
        with self.connection.cursor() as cursor:
            cursor.execute(query, (self.schema, table))
            found = [str(row[0]) for row in cursor.fetchall()]
        return found or None

    def rows(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        import psycopg

        try:
            with self.connection.cursor() as cursor:
                cursor.execute(sql.replace('FROM "', f'FROM "{self.schema}"."'), tuple(params))
                yield from cursor
        except psycopg.Error as error:
            self.connection.rollback()
            raise MastraStoreError(f"Cannot read {self.url}: {_first_line(error)}") from error

    def close(self) -> None:
        self.connection.close()


class MastraStore:
    """An open Mastra store. Use `open_mastra_store(location)`; close it (or use `with`)."""

    def __init__(self, location: str, backend: _Backend) -> None:
        self.location = location
        """The store as given (a PostgreSQL URL with its password hidden)."""
        self._backend = backend
        self._columns: dict[str, tuple[str, ...]] = {}
        self._present: dict[str, tuple[str, ...]] = {}
        self.skipped: list[str] = []
        """`table.column` of every column of Mastra's tables this reader does not know."""
        missing: list[str] = []
        for table in _TABLES:
            present = backend.columns(table.name)
            if present is None:
                missing.append(f"table {table.name}")
                continue
            missing += [f"{table.name}.{c}" for c in table.needed if c not in present]
            self._columns[table.name] = tuple(c for c in table.known if c in present)
            self._present[table.name] = tuple(present)
            self.skipped += [f"{table.name}.{c}" for c in present if c not in table.known]
        for table in _OPTIONAL_TABLES:
            present = backend.columns(table.name)
            if present is not None:
                self._present[table.name] = tuple(present)
        if missing:
            backend.close()
            raise MastraStoreError(
                f"{location} is not a Mastra store (or not one this scorelab reads): missing "
                + ", ".join(missing)
            )

    def __enter__(self) -> MastraStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside in one read transaction: a consistent view of the store even while
        a Mastra process writes it (SQLite's snapshot; PostgreSQL's repeatable read)."""
        self._backend.begin()
        try:
            yield
        finally:
            self._backend.end()

    def _select(
        self,
        table: _Table,
        where: str = "",
        params: Sequence[Any] = (),
        order: str = '"id"',
        *,
        only: Sequence[str] | None = None,
        raw_json: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Rows of `table` (the known columns present, or those of `only`); JSON columns
        decoded, or with `raw_json` as JSON text (None for SQL NULL), not decoded."""
        columns = self._columns[table.name]
        if only is not None:
            columns = tuple(c for c in only if c in columns)
        listed = ", ".join(self._column_sql(table, c) for c in columns)
        sql = f'SELECT {listed} FROM "{table.name}"'
        if where:
            sql += " WHERE " + where.replace("?", self._backend.placeholder)
        sql += f" ORDER BY {order}"
        json_columns = table.json_columns
        convert = _json_text if raw_json else _decoded
        for row in self._backend.rows(sql, params):
            yield {
                name: convert(value) if name in json_columns else value
                for name, value in zip(columns, row, strict=True)
            }

    def _column_sql(self, table: _Table, column: str) -> str:
        if column in table.json_columns and isinstance(self._backend, _SQLiteBackend):
            # JSONB blob -> JSON text (text columns are read as they are)
            return (
                f'CASE WHEN typeof("{column}") = \'blob\' THEN json("{column}") ELSE "{column}" END'
            )
        return f'"{column}"'

    # ---- writing (the export: core/exchange/mastra_export.py) ----

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Every `insert` inside in one write transaction: committed whole at the end, rolled
        back whole on any error (the store is left as it was)."""
        self._backend.begin_write()
        try:
            yield
        except BaseException:
            self._backend.rollback()
            raise
        self._backend.commit()

    def insert(self, table: _Table, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows (Mastra's column names; JSON columns given as Python values) into one of
        Mastra's tables; a column the table lacks is left out (an older Mastra)."""
        if not rows or table.name not in self._present:
            return
        present = set(self._present[table.name])
        columns = [c for c in rows[0] if c in present]
        values = ", ".join(
            self._backend.json_param if c in table.json_columns else self._backend.placeholder
            for c in columns
        )
        listed = ", ".join(f'"{c}"' for c in columns)
        sql = f'INSERT INTO "{table.name}" ({listed}) VALUES ({values})'
        self._backend.execute_many(
            sql,
            [
                tuple(
                    self._backend.json_value(row.get(c))
                    if c in table.json_columns
                    else self._backend.plain_value(row.get(c))
                    for c in columns
                )
                for row in rows
            ],
        )

    # ---- what there is ----

    def datasets(self) -> list[dict[str, Any]]:
        """Every dataset, with `itemCount`: its live items at its current version."""
        found = list(self._select(DATASETS))
        for dataset in found:
            light = ("id", "datasetVersion", "isDeleted")
            dataset["itemCount"] = sum(1 for _ in self.dataset_items(dataset["id"], only=light))
        return found

    def dataset_items(
        self, dataset_id: str, version: int | None = None, *, only: Sequence[str] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The items of a dataset as of `version` (None: the newest): for each item id, its row
        with the highest `datasetVersion` at or below it, unless that row is a deletion."""
        where, params = '"datasetId" = ?', list[Any]([dataset_id])
        if version is not None:
            where += ' AND "datasetVersion" <= ?'
            params.append(version)
        newest: dict[str, dict[str, Any]] = {}
        for row in self._select(
            DATASET_ITEMS, where, params, order='"datasetVersion", "id"', only=only
        ):
            newest[row["id"]] = row
        for row in newest.values():
            if not row.get("isDeleted"):
                yield row

    def experiments(self) -> list[dict[str, Any]]:
        """Every experiment, with `resultCount` (stored item results) and `scoreCount`."""
        found = list(self._select(EXPERIMENTS, order='"createdAt", "id"'))
        results = self._counts(EXPERIMENT_RESULTS.name, "experimentId")
        scores = self._counts(SCORES.name, "runId")
        for experiment in found:
            experiment["resultCount"] = results.get(experiment["id"], 0)
            experiment["scoreCount"] = scores.get(experiment["id"], 0)
        return found

    def _counts(self, table: str, column: str) -> dict[str, int]:
        sql = f'SELECT "{column}", count(*) FROM "{table}" GROUP BY "{column}"'
        return {str(key): int(n) for key, n in self._backend.rows(sql, ())}

    def experiment_results(self, experiment_id: str) -> Iterator[dict[str, Any]]:
        """An experiment's item results (input, output, ground truth, comment, tags...)."""
        return self._select(EXPERIMENT_RESULTS, '"experimentId" = ?', [experiment_id])

    def scores(self, run_id: str, *, raw_json: bool = False) -> Iterator[dict[str, Any]]:
        """The scores of one run (an experiment's id), newest first (`raw_json`: JSON columns
        as text, as `_select`)."""
        return self._select(
            SCORES, '"runId" = ?', [run_id], order='"createdAt" DESC, "id"', raw_json=raw_json
        )

    def live_scores(
        self, entity: tuple[str, str] | None = None, *, raw_json: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Scores sampled from a running agent or workflow (`source` LIVE), newest first; of one
        (entity type, entity id) when given."""
        where, params = "\"source\" = 'LIVE'", list[Any]()
        if entity is not None:
            where += ' AND "entityType" = ? AND "entityId" = ?'
            params += list(entity)
        return self._select(
            SCORES, where, params, order='"createdAt" DESC, "id"', raw_json=raw_json
        )

    def live_scorer_ids(self) -> dict[tuple[str, str], list[str]]:
        """The scorer ids of each (entity type, entity id)'s live scores."""
        sql = (
            f'SELECT DISTINCT "entityType", "entityId", "scorerId" FROM "{SCORES.name}" '
            "WHERE \"source\" = 'LIVE' ORDER BY 1, 2, 3"
        )
        found: dict[tuple[str, str], list[str]] = {}
        for kind, entity, scorer_id in self._backend.rows(sql, ()):
            found.setdefault((str(kind), str(entity)), []).append(str(scorer_id))
        return found

    def scorer_ids_by_run(self) -> dict[str, list[str]]:
        """The scorer ids of each run id's scores."""
        sql = f'SELECT DISTINCT "runId", "scorerId" FROM "{SCORES.name}" ORDER BY 1, 2'
        found: dict[str, list[str]] = {}
        for run_id, scorer_id in self._backend.rows(sql, ()):
            found.setdefault(str(run_id), []).append(str(scorer_id))
        return found

    def live_score_groups(self) -> dict[tuple[str, str], int]:
        """How many live scores each (entity type, entity id) has."""
        sql = (
            f'SELECT "entityType", "entityId", count(*) FROM "{SCORES.name}" '
            "WHERE \"source\" = 'LIVE' GROUP BY 1, 2 ORDER BY 1, 2"
        )
        return {(str(k), str(e)): int(n) for k, e, n in self._backend.rows(sql, ())}


def open_mastra_store(
    location: str, *, schema: str = "public", writable: bool = False
) -> MastraStore:
    """Open a Mastra store for reading: a LibSQL file (a path, `file:PATH` as Mastra's own
    `LibSQLStore({url})` takes it, or `sqlite:///PATH`) or a PostgreSQL URL
    (`postgresql://user:password@host:port/db`, with `?schema=NAME` when `@mastra/pg` was given
    a `schemaName`; `schema`: the default, `public`).

    Raises MastraStoreError, naming the store and what is wrong (no such file, not SQLite, not
    a Mastra store: which table or column is missing, a refused connection)."""
    location = location.strip()
    if not location:
        raise MastraStoreError("No Mastra store given: a LibSQL file path or a PostgreSQL URL")
    if location.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
        url, schema = _schema_of(location, schema)
        return MastraStore(_safe(location), _PostgresBackend(url, schema, writable))
    if "://" in location and not location.startswith(("file:", "sqlite:")):
        scheme = location.split("://", 1)[0]
        raise MastraStoreError(
            f"Cannot open {location!r} as a Mastra store: scheme {scheme!r} is neither a LibSQL "
            "file (a path or file:PATH) nor PostgreSQL (postgresql://...)"
        )
    path = sqlite_path(location)
    return MastraStore(str(path), _SQLiteBackend(path, writable))


def sqlite_path(location: str) -> Path:
    """The file of a LibSQL location: `file:PATH`, `file:///PATH`, `sqlite:///PATH` or a path."""
    if location.startswith("sqlite:///"):
        return Path(location.removeprefix("sqlite:///"))
    if location.startswith("file:"):
        rest = location.removeprefix("file:")
        if rest.startswith("//"):
            rest = urlsplit(location).path
        return Path(unquote(rest.split("?", 1)[0]))
    return Path(os.path.expanduser(location))


def _schema_of(url: str, default: str) -> tuple[str, str]:
    """A PostgreSQL URL without its `schema=NAME` query parameter (where `@mastra/pg` made its
    tables: its `schemaName`), and that schema (`default` without one)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == "schema"]
    rest = urlencode([(key, value) for key, value in query if key != "schema"])
    return parts._replace(query=rest).geturl(), (schemas[-1] if schemas else default)


def _libpq_url(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _safe(url: str) -> str:
    """A URL with its password hidden."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    if isinstance(value, bytes | memoryview):
        return _decoded(bytes(value).decode("utf-8", errors="replace"))
    return value


def _json_text(value: Any) -> str | None:
    """A JSON column's value as JSON text (PostgreSQL's driver hands jsonb over decoded)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    return json.dumps(value, ensure_ascii=False, default=str)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
