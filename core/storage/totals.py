"""A finished experiment's totals kept in the database (`experiment_totals`, revision 0013):
the per-scorer totals (`reads.ScorerTotals`) and the score histograms summed once when the
experiment finished, so the first render of its pages in any process reads one row instead of
a GROUP BY over its million results (docs/storage.md, Reading a large experiment).

A kept row holds the experiment's state it was summed for (`_rows._settled_key`: status, end,
counters); a reader gives its own key and gets nothing when they differ (the experiment was
resumed or changed since). The store deletes the row when results are added, or the
experiment deleted."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from core.records import ScoreHistogram
from core.run_results import JudgeUsage
from core.storage.reads import ScorerTotals
from core.storage.tables import ExperimentTotalsRow

__all__ = ["forget", "keep", "kept_histograms", "kept_steps", "kept_totals"]

_table = ExperimentTotalsRow.__table__
_STEPS = "steps"
"""The histograms' key under which the per-step judge usage is kept (never a bin count)."""


def _key_text(key: tuple[Any, ...]) -> str:
    return json.dumps(
        [value.isoformat() if isinstance(value, datetime) else value for value in key]
    )


def keep(
    connection: Connection,
    experiment_id: str,
    key: tuple[Any, ...],
    totals: Sequence[ScorerTotals],
    histograms: Sequence[ScoreHistogram],
    bins: int,
    steps: Mapping[str, Any] | None = None,
) -> None:
    """Keep the experiment's totals, its `bins`-bin histograms and its judge usage per prompt
    step (`step_usage.step_sums`, kept under the histograms' `"steps"` key) for its state
    `key`."""
    kept = [
        {**asdict(found), "usage": found.usage.model_dump(mode="json", by_alias=False)}
        for found in totals
    ]
    shown: dict[str, Any] = {
        str(bins): [histogram.model_dump(mode="json") for histogram in histograms]
    }
    if steps is not None:
        shown[_STEPS] = dict(steps)
    forget(connection, [experiment_id])
    connection.execute(
        insert(_table).values(
            experiment_id=experiment_id, settled=_key_text(key), totals=kept, histograms=shown
        )
    )


def _row(connection: Connection, experiment_id: str, key: tuple[Any, ...]) -> Any:
    row = connection.execute(select(_table).where(_table.c.experiment_id == experiment_id)).first()
    return row if row is not None and row.settled == _key_text(key) else None


def kept_totals(
    connection: Connection, experiment_id: str, key: tuple[Any, ...]
) -> list[ScorerTotals] | None:
    """The totals kept for the experiment in state `key` (None when none are)."""
    row = _row(connection, experiment_id, key)
    if row is None:
        return None
    return [
        ScorerTotals(**{**found, "usage": JudgeUsage.model_validate(found["usage"])})
        for found in row.totals
    ]


def kept_histograms(
    connection: Connection, experiment_id: str, key: tuple[Any, ...], bins: int
) -> list[ScoreHistogram] | None:
    """The `bins`-bin histograms kept for the experiment in state `key` (None when none)."""
    row = _row(connection, experiment_id, key)
    found = None if row is None else (row.histograms or {}).get(str(bins))
    return None if found is None else [ScoreHistogram.model_validate(h) for h in found]


def kept_steps(
    connection: Connection, experiment_id: str, key: tuple[Any, ...]
) -> dict[str, Any] | None:
    """The per-step judge usage kept for the experiment in state `key` (None when none)."""
    row = _row(connection, experiment_id, key)
    found = None if row is None else (row.histograms or {}).get(_STEPS)
    return found if isinstance(found, dict) else None


def forget(connection: Connection, experiment_ids: Collection[str] | Any) -> None:
    """Delete what is kept of these experiments (ids, or a SELECT of them)."""
    ids = (
        experiment_ids
        if not isinstance(experiment_ids, list | tuple | set)
        else list(experiment_ids)
    )
    connection.execute(delete(_table).where(_table.c.experiment_id.in_(ids)))
