"""A stored experiment read straight through the database driver for its exports
(`scorelab export --json/--csv/--html`): its record, its items a page at a time with their stored
results and reviews, and its judge usage per scorer and prompt step; no SQLAlchemy, no
sqlmodel, no Alembic, which are most of the command's start-up (bench/cli_startup.py;
docs/storage.md, "The quick listing").

Like `core.storage.listing`, it answers only a database already at the shipped schema
revision, opened read-only (SQLite) or in read-only autocommit (PostgreSQL: one short query
at a time, as the `Store` reads pages); `open_experiment` gives None for anything else (no
such file or experiment, an older schema, a URL the driver does not take, any error), and
the caller reads through the `Store`, which upgrades, creates or reports the problem as
always. Every record is built as the `Store` builds it (core/storage/_rows.py): the same
files, byte for byte (tests/test_cli_export_quick.py compares them)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from core.records import (
    DatasetItem,
    ExperimentInfo,
    Review,
    RunCounts,
    ScorerOutcome,
    ScorerUsage,
    StepUsage,
)
from core.run_results import ITEM_TEXT_KEYS, STEP_USAGE_KEYS, JudgeUsage
from core.storage._info import _LIVE_STATUSES, _USAGE_COLUMNS, _experiment_info
from core.storage._light import STALE_AFTER_S, default_database_url, shipped_heads
from core.storage.step_usage import apply_steps, steps_query

__all__ = ["ExportPage", "ExportReader", "open_experiment"]

_LIVE = _LIVE_STATUSES
_USAGE = _USAGE_COLUMNS
_KEY_PAGE = 500
"""Item ids per `IN (...)` of the reviews' query (as the `Store` reads them)."""

_EXPERIMENT_COLUMNS = (
    "id", "name", "dataset_id", "dataset_fingerprint", "scorers", "scorer_ids", "judge_model",
    "api_base", "judge_settings", "concurrency", "judge_cache", "max_cost", "judge_rpm",
    "judge_tpm", "status", "error", "total_items", "total_runs", "done_runs", "succeeded_runs",
    "failed_runs", *(f"failed_{name}" for name in _USAGE), "failed_judge_calls",
    "failed_judge_attempts", "failed_cached_calls", "created_at", "started_at", "finished_at",
    "heartbeat_at", "note", "tags",
)  # fmt: skip
_EXPERIMENT_JSON = ("scorers", "scorer_ids", "judge_settings", "tags")

_RESULT_COLUMNS = (
    "item_id", "scorer_id", "score", "reason", "result", "duration_ms", *_USAGE, "judge_calls",
    "judge_attempts", "cached_calls", "item_texts",
)  # fmt: skip
_ITEM_TEXTS = ("item_input", "item_output", "item_ground_truth", "item_metadata")

_REVIEW_COLUMNS = (
    "id", "experiment_id", "item_id", "scorer_id", "reviewer", "verdict", "score", "note",
    "created_at", "updated_at",
)  # fmt: skip

_NULLABLE_TIMES = ("finished_at", "heartbeat_at", "started_at")
"""The experiment row's timestamps that may be NULL (`created_at` may not)."""
_RUN_SUMS = ("judge_calls", "judge_attempts", "cached_calls", "duration_ms", *_USAGE)
_TOKENS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "totalTokens": "total_tokens",
    "reasoningTokens": "reasoning_tokens",
    "cachedInputTokens": "cached_input_tokens",
}


class ExportPage:
    """One page of an experiment's items, with their stored results (in the order written)
    and reviews (oldest first)."""

    __slots__ = ("items", "results", "reviews")

    def __init__(
        self, items: list[DatasetItem], results: list[ScorerOutcome], reviews: list[Review]
    ) -> None:
        self.items = items
        self.results = results
        self.reviews = reviews


class _Driver:
    """One connection through the driver: SQLite's sqlite3 (qmark) or psycopg (format)."""

    def __init__(self, connection: Any, dialect: str) -> None:
        self.connection = connection
        self.dialect = dialect

    def rows(self, query: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.dialect == "postgresql":
            query = query.replace("?", "%s")
        cursor = self.connection.cursor()
        try:
            cursor.execute(query, tuple(parameters))
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            cursor.close()

    def json(self, value: Any) -> Any:
        """A JSON column's value: SQLite gives its text (or a bare number, by its numeric
        affinity), PostgreSQL's driver decodes it."""
        if self.dialect == "postgresql" or value is None or isinstance(value, int | float):
            return value
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:  # what orjson refuses (an integer over 64 bits)
            return json.loads(value)

    def time(self, value: Any) -> datetime | None:
        """A timestamp as the `Store` gives it: timezone-aware (SQLite's text is UTC)."""
        if value is None:
            return None
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def moment(self, value: Any) -> datetime:
        """A timestamp never NULL (a NOT NULL column), as `time` gives it."""
        found = self.time(value)
        if found is None:
            raise ValueError("a NOT NULL timestamp read as NULL")
        return found

    def close(self) -> None:
        with suppress(Exception):
            self.connection.close()


def open_experiment(
    database_url: str | None, experiment_id: str, *, stale_after_s: float = STALE_AFTER_S
) -> ExportReader | None:
    """A reader of the experiment, or None when this path cannot answer (see the module):
    the caller reads through the `Store`. The reader must be `close`d."""
    driver: _Driver | None = None
    try:
        url = (database_url or default_database_url()).strip()
        driver = _connect(url)
        if driver is None:
            return None
        versions = driver.rows("SELECT version_num FROM alembic_version")
        if frozenset(str(row[0]) for row in versions) != shipped_heads():
            driver.close()
            return None
        reader = ExportReader(driver, experiment_id, stale_after_s)
        if not reader.found:
            driver.close()
            return None
        return reader
    except Exception:
        if driver is not None:
            driver.close()
        return None


def _connect(url: str) -> _Driver | None:
    if url.startswith("sqlite:///"):
        path, _, query = url[len("sqlite:///") :].partition("?")
        if query or not path or path == ":memory:" or not Path(path).is_file():
            return None
        return _Driver(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0), "sqlite")
    if url.split("://", 1)[0] in ("postgres", "postgresql", "postgresql+psycopg"):
        import psycopg

        connection = psycopg.connect("postgresql://" + url.split("://", 1)[1], autocommit=True)
        connection.read_only = True
        return _Driver(connection, "postgresql")
    return None


class ExportReader:
    """What the exports read of one experiment, through one driver connection."""

    def __init__(self, driver: _Driver, experiment_id: str, stale_after_s: float) -> None:
        self._driver = driver
        self._id = experiment_id
        self._stale_after_s = stale_after_s
        self._row = self._experiment_row()
        self.found = self._row is not None and self._dataset_exists()
        self._totals: list[dict[str, Any]] | None = None

    def close(self) -> None:
        """Close the connection."""
        self._driver.close()

    @property
    def has_thresholds(self) -> bool:
        """Whether pass/fail thresholds are kept with the experiment."""
        query = "SELECT COUNT(*) FROM thresholds WHERE experiment_id = ?"
        return bool(self._driver.rows(query, (self._id,))[0][0])

    # ---- the experiment's record ----

    def _experiment_row(self) -> dict[str, Any] | None:
        columns = ", ".join(f"e.{name}" for name in _EXPERIMENT_COLUMNS)
        query = (
            f"SELECT {columns}, d.name FROM experiments e "
            "LEFT OUTER JOIN datasets d ON d.id = e.dataset_id WHERE e.id = ?"
        )
        found = self._driver.rows(query, (self._id,))
        if not found:
            return None
        row = dict(zip((*_EXPERIMENT_COLUMNS, "dataset_name"), found[0], strict=True))
        for name in _EXPERIMENT_JSON:
            row[name] = self._driver.json(row[name])
        return row

    def _dataset_exists(self) -> bool:
        assert self._row is not None
        query = "SELECT COUNT(*) FROM datasets WHERE id = ?"
        return bool(self._driver.rows(query, (self._row["dataset_id"],))[0][0])

    def info(self) -> ExperimentInfo:
        """The experiment's record, as `Store.get_experiment` gives it."""
        row = self._row
        assert row is not None
        totals = self._scorer_totals()
        scores = {t["scorer_id"]: t["mean"] for t in totals if t["mean"] is not None}
        successes = RunCounts()
        for found in totals:
            successes = successes + RunCounts(
                succeeded=found["count"],
                usage=found["usage"],
                judge_calls=found["judge_calls"],
                judge_attempts=found["judge_attempts"],
                cached_calls=found["cached_calls"],
            )
        time = self._driver.time
        timed = {name: time(row[name]) for name in _NULLABLE_TIMES}
        timed["created_at"] = self._driver.moment(row["created_at"])
        stale_before = datetime.now(UTC) - timedelta(seconds=self._stale_after_s)
        return _experiment_info({**row, **timed}, scores, successes, stale_before)

    def _settled_text(self) -> str | None:
        """The experiment's state as `experiment_totals.settled` holds it (None while it is
        live): its status, end and counters (core/storage/_rows.py, `_settled_key`)."""
        row = self._row
        assert row is not None
        if row["status"] in _LIVE:
            return None
        finished = row["finished_at"]
        if finished is not None and not isinstance(finished, datetime):
            finished = datetime.fromisoformat(str(finished))  # SQLAlchemy's naive value
        key = [row["status"], finished, row["done_runs"], row["succeeded_runs"]]
        return json.dumps([v.isoformat() if isinstance(v, datetime) else v for v in key])

    def _kept(self) -> Any:
        """The `experiment_totals` row kept for the experiment's present state: (totals,
        histograms), or None."""
        settled = self._settled_text()
        if settled is None:
            return None
        found = self._driver.rows(
            "SELECT settled, totals, histograms FROM experiment_totals WHERE experiment_id = ?",
            (self._id,),
        )
        if not found or found[0][0] != settled:
            return None
        return self._driver.json(found[0][1]), self._driver.json(found[0][2])

    def _scorer_totals(self) -> list[dict[str, Any]]:
        """Per scorer (in id order): its stored runs' count, mean and judge sums, kept with a
        finished experiment or summed now (`reads.scorer_totals`)."""
        if self._totals is not None:
            return self._totals
        kept = self._kept()
        if kept is not None:
            self._totals = [
                {**found, "usage": JudgeUsage.model_validate(found["usage"])} for found in kept[0]
            ]
            return self._totals
        counted = self._driver.rows(
            "SELECT scorer_id, COUNT(*), AVG(score) FROM scorer_results "
            "WHERE experiment_id = ? GROUP BY experiment_id, scorer_id "
            "ORDER BY experiment_id, scorer_id",
            (self._id,),
        )
        sums = ", ".join(f"SUM({name})" for name in _RUN_SUMS)
        summed = {
            row[0]: row[1:]
            for row in self._driver.rows(
                f"SELECT scorer_id, COUNT(*), {sums} FROM scorer_results "
                "WHERE experiment_id = ? AND (judge_attempts > 0 OR cached_calls > 0) "
                "GROUP BY experiment_id, scorer_id",
                (self._id,),
            )
        }
        totals = []
        for scorer_id, count, mean in counted:
            judged = summed.get(scorer_id) or (None,) * (1 + len(_RUN_SUMS))
            values = dict(zip(_RUN_SUMS, judged[1:], strict=True))
            totals.append(
                {
                    "scorer_id": scorer_id,
                    "count": int(count),
                    "mean": None if mean is None else float(mean),
                    "judged_runs": int(judged[0] or 0),
                    **{name: int(values[name] or 0) for name in _RUN_SUMS[:4]},
                    "usage": JudgeUsage(**{name: _int(values[name]) for name in _USAGE}),
                }
            )
        self._totals = totals
        return totals

    # ---- the judge usage per scorer and step ----

    def judge_usage(self) -> list[ScorerUsage]:
        """`Store.judge_usage`: per scorer, its stored runs that called the judge, with their
        per-step split (kept with a finished experiment, or summed now), without a cost."""
        row = self._row
        assert row is not None
        usages = [
            ScorerUsage(
                scorer_id=found["scorer_id"],
                model=row["judge_model"],
                runs=found["judged_runs"],
                judge_calls=found["judge_calls"],
                judge_attempts=found["judge_attempts"],
                cached_calls=found["cached_calls"],
                duration_ms=found["duration_ms"],
                usage=found["usage"],
            )
            for found in self._scorer_totals()
        ]
        if not any(usage.runs for usage in usages):
            return usages
        kept = self._kept()
        steps = None if kept is None else (kept[1] or {}).get("steps")
        if not isinstance(steps, dict):
            steps = self._step_sums()
        return apply_steps(usages, steps)

    def _step_sums(self) -> dict[str, Any]:
        """`step_usage.step_sums` through the driver."""
        query = steps_query(self._driver.dialect, "?")
        steps: dict[str, list[dict[str, Any]]] = {}
        for found in self._driver.rows(query, (self._id,)):
            values = dict(zip(STEP_USAGE_KEYS, (int(v or 0) for v in found[4:]), strict=True))
            usage = StepUsage(
                step=found[1] or "",
                model=found[2] or None,
                runs=int(found[3]),
                judge_calls=values["calls"],
                judge_attempts=values["attempts"],
                cached_calls=values["cached"],
                usage=JudgeUsage(**{field: values[key] for key, field in _TOKENS.items()}),
                duration_ms=values["durationMs"],
            )
            steps.setdefault(found[0], []).append(usage.model_dump(mode="json"))
        if not steps:
            return {"steps": {}, "split": {}}
        sums = ", ".join(f"SUM({name})" for name in _RUN_SUMS)
        split = {
            found[0]: dict(zip(("runs", *_RUN_SUMS), (int(v or 0) for v in found[1:]), strict=True))
            for found in self._driver.rows(
                f"SELECT scorer_id, COUNT(*), {sums} FROM scorer_results "
                "WHERE experiment_id = ? AND step_usage IS NOT NULL "
                "AND (judge_attempts > 0 OR cached_calls > 0) GROUP BY scorer_id",
                (self._id,),
            )
        }
        return {"steps": steps, "split": split}

    # ---- the items, a page at a time ----

    def pages(self, page_size: int = 2_000) -> Iterator[ExportPage]:
        """The experiment's items in dataset order, `page_size` at a time, each page with its
        items' stored results and reviews (one page at least, maybe empty)."""
        row = self._row
        assert row is not None
        position, given = 0, False
        while True:
            found = self._driver.rows(
                "SELECT position, item_id, input, output, ground_truth, item_metadata "
                "FROM dataset_items WHERE dataset_id = ? AND position >= ? "
                "ORDER BY position LIMIT ?",
                (row["dataset_id"], position, page_size),
            )
            if found or not given:
                yield self._page(found)
                given = True
            if len(found) < page_size:
                return
            position = found[-1][0] + 1

    def _page(self, rows: list[tuple[Any, ...]]) -> ExportPage:
        load = self._driver.json
        items = [
            DatasetItem(
                id=item_id,
                input=load(item_input),
                output=load(output),
                ground_truth=load(truth),
                metadata=load(metadata) or {},
            )
            for _, item_id, item_input, output, truth, metadata in rows
        ]
        ids = [item.id for item in items]
        return ExportPage(items, self._results(ids), self._reviews(ids))

    def _results(self, item_ids: list[str]) -> list[ScorerOutcome]:
        """The stored outcomes of these items, in the order written, as `_rows._outcome`
        builds them (a result stored without its item's texts gets them back)."""
        if not item_ids:
            return []
        row = self._row
        assert row is not None
        marks = ", ".join("?" * len(item_ids))
        columns = ", ".join(f"r.{name}" for name in _RESULT_COLUMNS)
        texts = "i.input, i.output, i.ground_truth, i.item_metadata"
        query = (
            f"SELECT {columns}, {texts} FROM scorer_results r LEFT OUTER JOIN dataset_items i "
            "ON i.dataset_id = ? AND i.item_id = r.item_id AND r.item_texts "
            f"WHERE r.experiment_id = ? AND r.item_id IN ({marks}) ORDER BY r.id"
        )
        load = self._driver.json
        outcomes = []
        for found in self._driver.rows(query, (row["dataset_id"], self._id, *item_ids)):
            values = dict(zip((*_RESULT_COLUMNS, *_ITEM_TEXTS), found, strict=True))
            result = load(values["result"])
            if values["item_texts"] and isinstance(result, dict):
                result = _with_item_texts(result, [load(values[name]) for name in _ITEM_TEXTS])
            outcomes.append(
                ScorerOutcome(
                    item_id=values["item_id"],
                    scorer_id=values["scorer_id"],
                    status="success",
                    score=values["score"],
                    reason=load(values["reason"]),
                    result=result,
                    duration_ms=values["duration_ms"],
                    usage=JudgeUsage(**{name: values[name] for name in _USAGE}),
                    judge_calls=values["judge_calls"],
                    judge_attempts=values["judge_attempts"],
                    cached_calls=values["cached_calls"] or 0,
                )
            )
        return outcomes

    def reviews(self) -> list[Review]:
        """Every review of the experiment, oldest first (`reviews.read_reviews`)."""
        query = f"SELECT {', '.join(_REVIEW_COLUMNS)} FROM reviews WHERE experiment_id = ?"
        return self._review_records(self._driver.rows(query + " ORDER BY id", (self._id,)))

    def _reviews(self, item_ids: list[str]) -> list[Review]:
        """The reviews of these items, oldest first (`reviews.read_reviews`)."""
        columns = ", ".join(_REVIEW_COLUMNS)
        wanted = list(dict.fromkeys(item_ids))
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), _KEY_PAGE):
            chunk = wanted[start : start + _KEY_PAGE]
            rows += self._driver.rows(
                f"SELECT {columns} FROM reviews WHERE experiment_id = ? "
                f"AND item_id IN ({', '.join('?' * len(chunk))})",
                (self._id, *chunk),
            )
        rows.sort(key=lambda found: found[0])
        return self._review_records(rows)

    def _review_records(self, rows: list[tuple[Any, ...]]) -> list[Review]:
        reviews = []
        for found in rows:
            values = dict(zip(_REVIEW_COLUMNS, found, strict=True))
            reviews.append(
                Review(
                    experiment_id=values["experiment_id"],
                    item_id=values["item_id"],
                    scorer_id=values["scorer_id"],
                    verdict=values["verdict"],
                    score=values["score"],
                    note=values["note"] or "",
                    reviewer=values["reviewer"],
                    created_at=self._driver.moment(values["created_at"]),
                    updated_at=self._driver.moment(values["updated_at"]),
                )
            )
        return reviews


def _with_item_texts(result: dict[str, Any], texts: list[Any]) -> dict[str, Any]:
    """A result stored without its item's texts, with them back after `runId` (a None one
    absent; an item without metadata ran without request context), as the `Store` does."""
    texts[3] = texts[3] or None
    rebuilt = {"runId": result["runId"]} if "runId" in result else {}
    rebuilt.update(
        (key, value) for key, value in zip(ITEM_TEXT_KEYS, texts, strict=True) if value is not None
    )
    rebuilt.update(result)
    return rebuilt


def _int(value: Any) -> int | None:
    # SUM of integers is a Decimal on PostgreSQL (NUMERIC), NULL when every value is NULL.
    return None if value is None else int(value)
