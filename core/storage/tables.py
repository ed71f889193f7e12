"""The database tables (SQLModel). Only `core.storage` knows them; the rest of the code sees the
pydantic records of `core.records`.

A change here needs a migration in `core/storage/migrations/versions` (docs/storage.md); a test
checks that the migrations make exactly these tables."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlmodel import Field, SQLModel

__all__ = [
    "TABLES",
    "DatasetItemRow",
    "DatasetRow",
    "ExperimentRow",
    "ExperimentTotalsRow",
    "ReviewRow",
    "ScoreRow",
]


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(JSON, nullable=nullable))


def _counter() -> Any:
    """A count that rows from before its column start at 0 (added by a migration)."""
    return Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))


def _timestamp(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable))


class DatasetRow(SQLModel, table=True):
    """A stored dataset (its items are in `dataset_items`)."""

    __tablename__ = "datasets"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(sa_column=Column(Text, nullable=False))
    file_name: str = Field(sa_column=Column(Text, nullable=False))
    format: str = Field(max_length=16)
    fingerprint: str = Field(max_length=64, index=True)
    item_count: int
    columns: Any = _json()
    mapping: Any = _json()
    created_at: datetime = _timestamp(nullable=False)


class DatasetItemRow(SQLModel, table=True):
    """One item of a dataset; `position` keeps the file's order."""

    __tablename__ = "dataset_items"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it
    __table_args__ = (UniqueConstraint("dataset_id", "item_id"),)

    dataset_id: str = Field(foreign_key="datasets.id", primary_key=True, max_length=64)
    position: int = Field(primary_key=True)
    item_id: str = Field(sa_column=Column(Text, nullable=False))
    input: Any = _json()
    output: Any = _json()
    ground_truth: Any = _json()
    item_metadata: Any = _json()


class ExperimentRow(SQLModel, table=True):
    """An experiment: what ran, how far it got, and what the judge cost (never any key).

    The run counters and judge totals are what the process running it counted over every
    finished run, as of its last write. What is shown of the successful runs is counted from
    `scorer_results` instead (a crash leaves this row behind them); the failed runs, never
    stored, are known from `failed_runs` and the `failed_*` totals only."""

    __tablename__ = "experiments"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(sa_column=Column(Text, nullable=False))
    dataset_id: str = Field(foreign_key="datasets.id", index=True, max_length=64)
    dataset_fingerprint: str = Field(max_length=64)
    scorers: Any = _json()
    scorer_ids: Any = _json()
    judge_model: str | None = Field(default=None, sa_column=Column(Text))
    api_base: str | None = Field(default=None, sa_column=Column(Text))
    judge_settings: Any = _json()
    concurrency: int = 8
    judge_cache: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    """Whether its judge calls read and wrote the judge cache."""
    max_cost: float | None = None
    """Its judge spend cap in USD (litellm's prices), if it had one."""
    judge_rpm: int | None = None
    """Its judge rate limit's requests per minute, if it set one (else the provider's)."""
    judge_tpm: int | None = None
    """Its judge rate limit's tokens per minute, if it set one (else the provider's)."""
    status: str = Field(default="pending", max_length=16)
    error: str | None = Field(default=None, sa_column=Column(Text))
    total_items: int = 0
    total_runs: int = 0
    done_runs: int = 0
    succeeded_runs: int = 0
    failed_runs: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    judge_calls: int = 0
    judge_attempts: int = 0
    failed_input_tokens: int | None = None
    failed_output_tokens: int | None = None
    failed_total_tokens: int | None = None
    failed_reasoning_tokens: int | None = None
    failed_cached_input_tokens: int | None = None
    failed_cache_creation_input_tokens: int | None = None
    failed_judge_calls: int = _counter()
    failed_judge_attempts: int = _counter()
    cached_calls: int = _counter()
    """Judge executions answered from the judge cache, over every finished run."""
    failed_cached_calls: int = _counter()
    created_at: datetime = _timestamp(nullable=False)
    started_at: datetime | None = _timestamp()
    finished_at: datetime | None = _timestamp()
    heartbeat_at: datetime | None = _timestamp()
    """Last sign of life of the process running it: a pending or running experiment whose
    heartbeat is old is reported as interrupted (its process died)."""
    note: str | None = Field(default=None, sa_column=Column(Text))
    """A person's note about it (revision 0006)."""
    tags: Any = _json()
    """Its tags, a JSON list of short strings (revision 0006; None: no tag)."""


AGGREGATE_COLUMNS = (
    "experiment_id",
    "scorer_id",
    "score",
    "id",
    "judge_calls",
    "judge_attempts",
    "cached_calls",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)
"""The columns of `ix_scorer_results_aggregates`, in its order."""


class ScoreRow(SQLModel, table=True):
    """A successful scorer run: score, reason, and the full Mastra-format result (step results,
    prompts, judge executions). Failed runs are never stored here."""

    __tablename__ = "scorer_results"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it
    __table_args__ = (
        UniqueConstraint("experiment_id", "item_id", "scorer_id"),
        # Revision 0005: the per-scorer aggregates read this index alone (it holds every
        # column they sum), never the rows with their result JSON; the score filter, the
        # histograms and the sort by score walk it in score order.
        Index("ix_scorer_results_aggregates", *AGGREGATE_COLUMNS),
    )

    id: int | None = Field(default=None, primary_key=True)
    experiment_id: str = Field(max_length=64)
    """Its experiment's id. No foreign key (revision 0017; SQLite's from revision 0001 is kept
    there): the store refuses a batch for an unknown experiment, once per batch, and deletes
    an experiment's results with it (docs/storage.md, "The write path")."""
    item_id: str = Field(sa_column=Column(Text, nullable=False))
    scorer_id: str = Field(sa_column=Column(Text, nullable=False))
    score: float | None = None
    reason: Any = _json()
    result: Any = _json()
    duration_ms: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    judge_calls: int = 0
    judge_attempts: int = 0
    cached_calls: int = _counter()
    """Judge executions of the run answered from the judge cache."""
    item_texts: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    """True when `result` leaves out the run's input, output, ground truth and request context:
    they were the item's own, and are rebuilt from `dataset_items` when read (revision 0010)."""
    step_usage: Any = _json()
    """The run's judge usage per prompt step (`core.run_results.step_usage_json`); NULL for a
    run without judge executions and for rows from before revision 0011."""


class ReviewRow(SQLModel, table=True):
    """A person's review of one scorer's score of one item (docs/review.md): not a scorer
    result, so kept apart; one per (experiment, item, scorer, reviewer), updated in place.
    Deleting the experiment deletes its reviews (the store does it: no ON DELETE here)."""

    __tablename__ = "reviews"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it
    __table_args__ = (UniqueConstraint("experiment_id", "item_id", "scorer_id", "reviewer"),)

    id: int | None = Field(default=None, primary_key=True)
    experiment_id: str = Field(foreign_key="experiments.id", max_length=64)
    item_id: str = Field(sa_column=Column(Text, nullable=False))
    scorer_id: str = Field(sa_column=Column(Text, nullable=False))
    reviewer: str = Field(sa_column=Column(Text, nullable=False))
    verdict: str = Field(max_length=8)
    score: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    note: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    created_at: datetime = _timestamp(nullable=False)
    updated_at: datetime = _timestamp(nullable=False)


class ThresholdRow(SQLModel, table=True):
    """A pass/fail threshold on one scorer of an experiment (bounds on its scores, inclusive;
    the rule is `check_threshold`'s, core/experiments/thresholds.py), set on the experiment
    page. One per (experiment, scorer); deleting the experiment deletes them (the store does
    it)."""

    __tablename__ = "thresholds"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it
    __table_args__ = (UniqueConstraint("experiment_id", "scorer_id"),)

    id: int | None = Field(default=None, primary_key=True)
    experiment_id: str = Field(foreign_key="experiments.id", max_length=64)
    scorer_id: str = Field(sa_column=Column(Text, nullable=False))
    min: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    max: float | None = Field(default=None, sa_column=Column(Float, nullable=True))


SEARCHED_TEXT = (
    "item_id || chr(31) || coalesce(input::text, '') || chr(31) || coalesce(output::text, '')"
    " || chr(31) || coalesce(ground_truth::text, '')"
)
"""PostgreSQL's expression of an item's searched text: its id and the JSON text of its input,
output and ground truth, joined by U+001F (the unit separator, which a typed search does not
hold, so a match never spans two of them). The trigram index is built on it."""


class ExperimentTotalsRow(SQLModel, table=True):
    """A finished experiment's per-scorer totals and score histograms, summed once when it
    finished (revision 0013): what its pages' first render reads instead of a GROUP BY over a
    million results. Kept for the experiment's state in `settled` (status, end, counters:
    `core.storage._rows._settled_key`), ignored when the experiment changed since; deleted
    with the experiment, and when results are added to it."""

    __tablename__ = "experiment_totals"
    __table__: ClassVar[Table]  # set by SQLModel for table=True; its stubs omit it

    experiment_id: str = Field(primary_key=True, max_length=64)
    settled: str = Field(sa_column=Column(Text, nullable=False))
    totals: Any = _json(nullable=False)
    histograms: Any = _json()


TRIGRAM_INDEX = "ix_trgm_dataset_items_texts"
"""PostgreSQL's trigram index of every item's searched text (revision 0013), maintained by
every import, dropped by revision 0016 for `DATASET_TRIGRAM_PREFIX`'s per-dataset indexes."""
DATASET_TRIGRAM_PREFIX = "ix_trgm_"
"""PostgreSQL: the name of a dataset's partial trigram index of its items' searched texts
(revision 0016; built lazily by core/storage/search_index.py) is this and the dataset's id
(`core.storage.text_search.dataset_index_name`); an operator class of an extension the role
may lack, made outside the schema's declaration: `include_object` leaves these out (and
`TRIGRAM_INDEX`, which starts the same way) of the comparison of the schema with these
tables."""


SEARCHED_TEXT_STATISTICS = "st_dataset_items_searched_text"
"""PostgreSQL (14 and later): the extended statistics of the items' searched text (revision
0016), so the planner estimates how many items a search matches from a sample of the texts, as
it did from the global trigram index's own statistics before; it ignores a partial index's
(docs/storage.md, PostgreSQL's text search). Without them a common needle was taken for a rare
one: a page's search read every match through the index, sorted them, and took 5 s at 1 M
items instead of 0.5 s."""


SEARCH_TABLE = "dataset_item_search"
"""SQLite's FTS5 trigram index of the items' searched texts (revision 0015): contentless, one
column per text (`item_id`, `input`, `output`, `ground_truth`), an item's rowid
`search_rowid(dataset's number, position)`."""
SEARCH_DATASETS = "dataset_item_search_datasets"
"""SQLite: each dataset's number (`ordinal`, AUTOINCREMENT: never reused) in the rowids of
`SEARCH_TABLE`, with how far its items are indexed (`indexed_below`: every position under
it) and whether all are (`complete`) (revision 0015). A dataset has a row from its first text
search (core/storage/search_index.py), not from its import; the row goes with the dataset."""
SEARCH_ROWID_SPAN = 2**32
"""Rowids of `SEARCH_TABLE` per dataset: an item's is `ordinal * SEARCH_ROWID_SPAN +
position`, so a dataset's items are one range of rowids, in the dataset's order."""
SEARCH_TRIGGERS = (
    "dataset_items_search_insert",
    "dataset_items_search_delete",
    "dataset_items_search_update",
    "datasets_search_forget",
)
"""SQLite: the triggers keeping `SEARCH_TABLE` in step with `dataset_items` (revision 0015)."""


def include_object(
    thing: object, name: str | None, kind: str, reflected: bool, compare_to: object
) -> bool:
    """Alembic's `include_object` hook: every object but PostgreSQL's trigram indexes
    (`DATASET_TRIGRAM_PREFIX`), SQLite's search index (`SEARCH_TABLE`, its FTS5 shadow tables
    and `SEARCH_DATASETS`), made outside the tables' declaration, and SQLite's foreign key of
    `scorer_results` on `experiments`, which revision 0017 keeps there only (no table
    rebuild)."""
    if kind == "index" and name is not None and name.startswith(DATASET_TRIGRAM_PREFIX):
        return False
    if kind == "foreign_key_constraint" and reflected and compare_to is None:
        key: Any = thing
        if key.parent.name == ScoreRow.__tablename__ and key.referred_table.name == "experiments":
            return False
    return not (kind == "table" and name is not None and name.startswith(SEARCH_TABLE))


TABLES = [
    DatasetRow.__table__,
    DatasetItemRow.__table__,
    ExperimentRow.__table__,
    ScoreRow.__table__,
    ReviewRow.__table__,
    ThresholdRow.__table__,
    ExperimentTotalsRow.__table__,
]
