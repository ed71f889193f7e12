"""The `thresholds` table: each experiment's pass/fail bounds per scorer (issue 21), as
`(min, max)` pairs (either may be None). The rule that applies them and its checks are the
service's (core/experiments/thresholds.py); this module stores what it is given."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from sqlalchemy import Engine, delete, insert, select
from sqlalchemy.engine import Connection

from core.storage.tables import ThresholdRow

__all__ = ["delete_thresholds_of", "read_thresholds", "save_thresholds"]

Bounds = tuple[float | None, float | None]


def save_thresholds(
    connection: Connection, experiment_id: str, bounds: Mapping[str, Bounds]
) -> None:
    """Replace the experiment's thresholds with `bounds` (scorer id -> (min, max))."""
    table = ThresholdRow.__table__
    connection.execute(delete(table).where(table.c.experiment_id == experiment_id))
    rows = [
        {"experiment_id": experiment_id, "scorer_id": scorer_id, "min": low, "max": high}
        for scorer_id, (low, high) in bounds.items()
    ]
    if rows:
        connection.execute(insert(table), rows)


def read_thresholds(engine: Engine, experiment_id: str) -> dict[str, Bounds]:
    """The experiment's thresholds, scorer id -> (min, max), in the order they were saved."""
    table = ThresholdRow.__table__
    query = select(table.c.scorer_id, table.c.min, table.c.max).where(
        table.c.experiment_id == experiment_id
    )
    with engine.connect() as connection:
        found = connection.execute(query.order_by(table.c.id)).all()
    return {row.scorer_id: (row.min, row.max) for row in found}


def delete_thresholds_of(connection: Connection, experiment_ids: Collection[str] | Any) -> None:
    """Remove the thresholds of these experiments (ids, or a SELECT of ids), before the
    experiments themselves."""
    table = ThresholdRow.__table__
    connection.execute(delete(table).where(table.c.experiment_id.in_(experiment_ids)))
