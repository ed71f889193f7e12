"""Tables the dashboard shows, as pandas DataFrames: the experiment list, the per-item table and
its filters, an item's step-by-step drill-down, failure groups and judge usage.

Pure shaping: no Streamlit, no database. The per-item table, the failure groups and the judge
usage are DataFrames of the plain rows of core/reporting/table_rows.py (which the HTML report
reads without pandas), so each is shaped in one place; 10,000 items × 5 scorers build in a few
tens of milliseconds. Costs are estimates from litellm's price table, looked up only when there
are judge tokens to price (so a page without judge usage never imports litellm).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from core.records import ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.reporting.table_rows import (
    FAILURE_COLUMNS,
    ITEM_COLUMNS,
    ITEM_TAIL_COLUMNS,
    TOKEN_COLUMNS,
    USAGE_COLUMNS,
    StepView,
    experiment_cost,
    failure_group_rows,
    item_rows,
    step_views,
    usage_columns,
)

__all__ = [
    "EXPERIMENT_COLUMNS",
    "FAILURE_COLUMNS",
    "ITEM_COLUMNS",
    "ITEM_TAIL_COLUMNS",
    "MEAN_PREFIX",
    "TOKEN_COLUMNS",
    "USAGE_COLUMNS",
    "StepView",
    "experiment_cost",
    "experiments_frame",
    "failure_groups",
    "filter_items",
    "item_frame",
    "item_outcomes",
    "judge_usage_frame",
    "scored_label",
    "step_views",
    "usage_totals",
]

EXPERIMENT_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "dataset",
    "status",
    "items",
    "runs",
    "failed",
    "judge_tokens",
    "est_cost_usd",
    "duration_s",
    "created_at",
)
"""The fixed columns of `experiments_frame`, before the per-scorer means."""

MEAN_PREFIX = "mean · "
"""Prefix of the per-scorer mean columns of `experiments_frame`."""


# ---- experiments ----


def experiments_frame(experiments: Sequence[ExperimentInfo]) -> pd.DataFrame:
    """One row per experiment (`EXPERIMENT_COLUMNS`), then a float column `mean · <scorer>`
    per scorer found in any experiment (NaN where that experiment has no mean for it), where
    `<scorer>` is the id and, when known, what it compared: `keyword-coverage-scorer (output vs
    ground truth)`. The same scorer against another reference is another column, never one
    mixed mean.

    `dataset` is the dataset's name (its id when it has none), `runs` the planned scorer runs,
    `failed` the failed ones, `judge_tokens` the total judge tokens, `est_cost_usd` the estimated
    judge cost (NaN without judge tokens or when litellm has no price for the judge model) and
    `duration_s` the run's wall time (NaN until it finished).
    """
    frame = pd.DataFrame(
        [_experiment_row(info) for info in experiments], columns=list(EXPERIMENT_COLUMNS)
    )
    frame = frame.astype(
        {
            "items": "int64",
            "runs": "int64",
            "failed": "int64",
            "judge_tokens": "int64",
            "est_cost_usd": "float64",
            "duration_s": "float64",
        }
    )
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    labelled = [
        {scored_label(info, scorer_id): mean for scorer_id, mean in info.scores.items()}
        for info in experiments
    ]
    means = {
        MEAN_PREFIX + label: np.array([row.get(label, math.nan) for row in labelled], dtype=float)
        for label in _ordered_unique(
            chain.from_iterable(
                [*(scored_label(info, s) for s in info.scorer_ids), *row]
                for info, row in zip(experiments, labelled, strict=True)
            )
        )
    }
    return pd.concat([frame, pd.DataFrame(means, index=frame.index)], axis=1)


def scored_label(info: ExperimentInfo, scorer_id: str) -> str:
    """A scorer's id with what it compared, when known: `tone-scorer (output only)`."""
    comparison = info.comparisons.get(scorer_id)
    return f"{scorer_id} ({comparison})" if comparison else scorer_id


def _experiment_row(info: ExperimentInfo) -> dict[str, Any]:
    usage = info.counts.usage
    duration = (
        (info.finished_at - info.started_at).total_seconds()
        if info.started_at is not None and info.finished_at is not None
        else math.nan
    )
    return {
        "id": info.id,
        "name": info.name,
        "dataset": info.dataset_name or info.dataset_id,
        "status": info.status,
        "items": info.total_items,
        "runs": info.counts.total,
        "failed": info.counts.failed,
        "judge_tokens": usage.total_tokens or 0,
        "est_cost_usd": math.nan if (cost := experiment_cost(info)) is None else cost,
        "duration_s": duration,
        "created_at": info.created_at,
    }


def _ordered_unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


# ---- items ----


def item_frame(detail: ExperimentDetail) -> pd.DataFrame:
    """One row per item, in dataset order: `item_id, input, output, ground_truth` as display
    strings (text as is, other values as JSON, None as ""), one float column per scorer id of
    the experiment (NaN when not scored, failed or not scorable), `failed` (the comma-joined ids
    of the scorers that failed on the item, "" when none), `judge_tokens` (total judge tokens over
    the item's runs, failed runs included) and `search_text` (input, output, ground truth and
    reasons, lower-cased, for `filter_items`).

    Raises ValueError when a scorer id is also the name of a fixed column.
    """
    rows = item_rows(detail)
    columns: dict[str, Any] = {
        "item_id": rows.item_id,
        "input": rows.input,
        "output": rows.output,
        "ground_truth": rows.ground_truth,
    }
    columns.update(
        {scorer_id: np.asarray(scores, dtype=float) for scorer_id, scores in rows.scores.items()}
    )
    columns["failed"] = rows.failed
    columns["judge_tokens"] = np.asarray(rows.judge_tokens, dtype=np.int64)
    columns["search_text"] = rows.search_text
    frame = pd.DataFrame(columns)
    return frame.astype(dict.fromkeys([*ITEM_COLUMNS, "failed", "search_text"], "str"))


def filter_items(
    frame: pd.DataFrame,
    *,
    scorer_ids: Sequence[str] | None = None,
    score_range: tuple[float, float] | None = None,
    failed_only: bool = False,
    search: str = "",
) -> pd.DataFrame:
    """The rows of an `item_frame` that pass every given filter (vectorised).

    - `score_range` (inclusive): rows where any chosen scorer has a score within it;
    - `failed_only`: rows where any chosen scorer failed;
    - `search`: case-insensitive plain-text substring of `search_text` (never a regex; blank
      means no search).

    The chosen scorers are `scorer_ids`, or every scorer column when None or empty. Alone,
    `scorer_ids` removes no row (it narrows the other two filters).
    """
    chosen = _scorer_columns(frame) if not scorer_ids else list(scorer_ids)
    mask = np.ones(len(frame), dtype=bool)
    if score_range is not None:
        mask &= _in_range(frame, chosen, score_range)
    if failed_only:
        mask &= _failed_any(frame, scorer_ids)
    needle = search.strip().lower()
    if needle:
        mask &= frame["search_text"].str.contains(needle, regex=False).to_numpy(dtype=bool)
    return frame[mask]


def _scorer_columns(frame: pd.DataFrame) -> list[str]:
    fixed = {*ITEM_COLUMNS, *ITEM_TAIL_COLUMNS}
    return [str(column) for column in frame.columns if column not in fixed]


def _in_range(
    frame: pd.DataFrame, chosen: Sequence[str], score_range: tuple[float, float]
) -> np.ndarray:
    present = [scorer_id for scorer_id in chosen if scorer_id in frame.columns]
    if not present:
        return np.zeros(len(frame), dtype=bool)
    low, high = score_range
    scores = frame[present].to_numpy(dtype=float)
    return np.asarray(((scores >= low) & (scores <= high)).any(axis=1))


def _failed_any(frame: pd.DataFrame, scorer_ids: Sequence[str] | None) -> np.ndarray:
    failed = frame["failed"]
    if not scorer_ids:
        return (failed != "").to_numpy(dtype=bool)
    padded = "," + failed + ","
    mask = np.zeros(len(frame), dtype=bool)
    for scorer_id in scorer_ids:
        mask |= padded.str.contains(f",{scorer_id},", regex=False).to_numpy(dtype=bool)
    return mask


def item_outcomes(detail: ExperimentDetail, item_id: str) -> dict[str, ScorerOutcome]:
    """That item's outcome per scorer id (success or failure), in the experiment's scorer
    order; scorers that have neither are absent."""
    found = {
        outcome.scorer_id: outcome
        for outcome in chain(detail.results, detail.failures)
        if outcome.item_id == item_id
    }
    order = {scorer_id: n for n, scorer_id in enumerate(detail.info.scorer_ids)}
    return dict(sorted(found.items(), key=lambda kv: order.get(kv[0], len(order))))


# ---- failures ----


def failure_groups(failures: Sequence[ScorerOutcome]) -> pd.DataFrame:
    """Failed runs grouped by (scorer id, failed step, error message): `count` and the
    `item_ids` (a list, in failure order) per group, the largest groups first (ties keep the
    order they were first seen in). `failed_step` is "" for an error outside any step."""
    frame = pd.DataFrame(failure_group_rows(failures), columns=list(FAILURE_COLUMNS))
    return frame.astype({"count": "int64"})


# ---- judge usage ----


def judge_usage_frame(outcomes: Sequence[ScorerOutcome], *, priced: bool = True) -> pd.DataFrame:
    """One row per judge execution (`USAGE_COLUMNS`), over successful runs (`result["judge"]`)
    and failed ones (`snapshot["judge"]` plus `failed_execution` when the snapshot lacks it).

    Missing token counts are 0; `est_cost_usd` is NaN without tokens or without a known price,
    and everywhere with `priced=False` (no price lookup: the HTML report sums no cost per
    execution)."""
    columns = usage_columns(outcomes, priced=priced)
    ints = ["attempts", "model_calls", "duration_ms", *TOKEN_COLUMNS]
    texts = ["item_id", "scorer_id", "step", "status"]  # model, provider: may be missing
    dtypes = dict.fromkeys(ints, "int64") | dict.fromkeys(texts, "str")
    return pd.DataFrame(columns).astype(dtypes | {"est_cost_usd": "float64", "cached": "bool"})


def usage_totals(frame: pd.DataFrame) -> dict[str, float]:
    """Sums over a `judge_usage_frame` (never averages): every token column, `model_calls`,
    `attempts`, `duration_ms`, `est_cost_usd` (NaN when no execution has a known price),
    `executions` (rows), `failed` (failed executions) and `cached` (executions answered from
    the judge cache: counted apart, no model call and no cost)."""
    sums = ("model_calls", "attempts", "duration_ms", *TOKEN_COLUMNS)
    totals = {name: float(frame[name].sum()) for name in sums}
    costs = frame["est_cost_usd"]
    totals["est_cost_usd"] = float(costs.sum()) if costs.notna().any() else math.nan
    totals["executions"] = float(len(frame))
    totals["failed"] = float((frame["status"] == "failed").sum())
    totals["cached"] = float(frame["cached"].sum())
    return totals
