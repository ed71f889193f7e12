"""The `reviews` table (docs/review.md): a person's verdict on a scorer's score of an item.

One row per (experiment, item, scorer, reviewer): saving again updates it (its `created_at`
kept). The checks against the experiment (a known item and scorer, a score in the scorer's
range) are the service's; this module stores what it is given and reads it back as `Review`
records.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlalchemy.engine import Connection

from core.records import CONFIDENCE_STEPS, Review, ReviewInput, ScoredRun
from core.storage.database import Database
from core.storage.tables import DatasetItemRow, ReviewRow, ScoreRow

if TYPE_CHECKING:
    from core.storage.experiments import ExperimentStore

__all__ = [
    "ReviewStore",
    "delete_review",
    "delete_reviews_of",
    "item_ids",
    "read_reviews",
    "save_review",
    "scored_runs",
]

_KEY_PAGE = 500
"""Item ids per `IN (...)` query (well below SQLite's limit on bound parameters)."""


def save_review(connection: Connection, experiment_id: str, given: ReviewInput) -> Review:
    """Insert or update the review of (experiment, item, scorer, reviewer); returns it stored.

    An UPDATE first, then an INSERT when no row was there; of two writers racing to insert the
    same key one fails on the unique key (the caller's transaction names it), never a duplicate.
    """
    table = ReviewRow.__table__
    now = datetime.now(UTC)
    key = _key(experiment_id, given.item_id, given.scorer_id, given.reviewer)
    values = {"verdict": given.verdict, "score": given.score, "note": given.note, "updated_at": now}
    changed = connection.execute(update(table).where(*key).values(**values)).rowcount
    if not changed:
        row = {
            "experiment_id": experiment_id,
            "item_id": given.item_id,
            "scorer_id": given.scorer_id,
            "reviewer": given.reviewer,
            "created_at": now,
            **values,
        }
        connection.execute(insert(table), [row])
    found = connection.execute(select(table).where(*key)).first()
    assert found is not None  # written just above, in this transaction
    return _review(found._mapping)


def read_reviews(
    engine: Engine, experiment_id: str, item_ids: Collection[str] | None = None
) -> list[Review]:
    """The reviews of an experiment (of these items only, when given), oldest first."""
    table = ReviewRow.__table__
    query = select(table).where(table.c.experiment_id == experiment_id).order_by(table.c.id)
    rows: list[Any] = []
    with engine.connect() as connection:
        if item_ids is None:
            rows = list(connection.execute(query).all())
        else:
            wanted = list(dict.fromkeys(item_ids))
            for start in range(0, len(wanted), _KEY_PAGE):
                chunk = wanted[start : start + _KEY_PAGE]
                rows += connection.execute(query.where(table.c.item_id.in_(chunk))).all()
            rows.sort(key=lambda row: row.id)
    return [_review(row._mapping) for row in rows]


def delete_review(
    connection: Connection, experiment_id: str, item_id: str, scorer_id: str, reviewer: str
) -> bool:
    """Remove one review; True when there was one."""
    key = _key(experiment_id, item_id, scorer_id, reviewer)
    return bool(connection.execute(delete(ReviewRow.__table__).where(*key)).rowcount)


def count_reviews(engine: Engine, experiment_ids: Collection[str]) -> int:
    """How many reviews these experiments hold (what deleting them takes with them)."""
    table = ReviewRow.__table__
    query = select(func.count()).where(table.c.experiment_id.in_(list(experiment_ids)))
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def delete_reviews_of(connection: Connection, experiment_ids: Any) -> None:
    """Remove the reviews of these experiments (a list, or a SELECT of ids)."""
    table = ReviewRow.__table__
    connection.execute(delete(table).where(table.c.experiment_id.in_(experiment_ids)))


def scored_runs(engine: Engine, experiment_id: str) -> list[ScoredRun]:
    """The experiment's stored runs with their score and the `confidence` of each of their
    `CONFIDENCE_STEPS` results, picked out of the result JSON by the database (SQLite's
    `json_extract`, PostgreSQL's `#>`): the rest of the JSON never leaves it."""
    table = ScoreRow.__table__
    picked = [table.c.result[(step, "confidence")].as_json() for step in CONFIDENCE_STEPS]
    query = (
        select(table.c.item_id, table.c.scorer_id, table.c.score, *picked)
        .where(table.c.experiment_id == experiment_id)
        .order_by(table.c.id)
    )
    with engine.connect() as connection:
        return [
            ScoredRun.model_construct(
                item_id=item_id, scorer_id=scorer_id, score=score, confidences=list(found)
            )
            for item_id, scorer_id, score, *found in connection.execute(query)
        ]


def item_ids(engine: Engine, dataset_id: str) -> list[str]:
    """A dataset's item ids in file order."""
    table = DatasetItemRow.__table__
    query = (
        select(table.c.item_id).where(table.c.dataset_id == dataset_id).order_by(table.c.position)
    )
    with engine.connect() as connection:
        return list(connection.execute(query).scalars())


class ReviewStore:
    """`store.reviewing`: the reviews of an experiment's scores, unchecked (the service
    checks them)."""

    def __init__(self, database: Database, experiments: ExperimentStore) -> None:
        self._db = database
        self._experiments = experiments

    def save_review(self, experiment_id: str, given: ReviewInput) -> Review:
        """Insert or update the review of (experiment, item, scorer, reviewer), unchecked (the
        service checks it against the experiment)."""
        with self._db.transaction("save the review") as connection:
            return save_review(connection, experiment_id, given)

    def reviews(self, experiment_id: str, item_ids: Collection[str] | None = None) -> list[Review]:
        """An experiment's reviews (of these items only, when given), oldest first."""
        return read_reviews(self._db.engine, experiment_id, item_ids)

    def review_count(self, experiment_ids: Collection[str]) -> int:
        """How many reviews these experiments hold."""
        return count_reviews(self._db.engine, experiment_ids) if experiment_ids else 0

    def scored_runs(self, experiment_id: str) -> tuple[list[str], list[ScoredRun]]:
        """(the item ids of its dataset in order, its stored runs' scores and reported
        confidences): what the review queue reads, without the results' JSON. Raises
        NotFoundError."""
        dataset_id = self._experiments.dataset_of(experiment_id)[0]
        runs = scored_runs(self._db.engine, experiment_id)
        return item_ids(self._db.engine, dataset_id), runs

    def delete_review(
        self, experiment_id: str, item_id: str, scorer_id: str, reviewer: str
    ) -> bool:
        """Remove one review; True when there was one."""
        with self._db.transaction("delete the review") as connection:
            return delete_review(connection, experiment_id, item_id, scorer_id, reviewer)


def _key(experiment_id: str, item_id: str, scorer_id: str, reviewer: str) -> list[Any]:
    table = ReviewRow.__table__
    return [
        table.c.experiment_id == experiment_id,
        table.c.item_id == item_id,
        table.c.scorer_id == scorer_id,
        table.c.reviewer == reviewer,
    ]


def _review(row: Any) -> Review:
    return Review(
        experiment_id=row["experiment_id"],
        item_id=row["item_id"],
        scorer_id=row["scorer_id"],
        verdict=row["verdict"],
        score=row["score"],
        note=row["note"] or "",
        reviewer=row["reviewer"],
        created_at=_utc(row["created_at"]),
        updated_at=_utc(row["updated_at"]),
    )


def _utc(value: datetime) -> datetime:
    # SQLite gives naive datetimes back; they were written in UTC.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
