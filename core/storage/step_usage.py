"""Judge usage per prompt step of an experiment's stored runs, summed by the database from
`scorer_results.step_usage` (revision 0011; docs/storage.md, "Judge usage per step").

Each stored run keeps a compact JSON list, one entry per (step, model) it ran
(`core.run_results.step_usage_json`); SQLite's `json_each` and PostgreSQL's
`json_array_elements` unfold it so one GROUP BY sums every step of every run. The runs stored
before the column (NULL) are summed apart, as a scorer's usage "all steps"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.records import ScorerUsage, StepUsage
from core.run_results import STEP_USAGE_KEYS, JudgeUsage

if TYPE_CHECKING:  # SQLAlchemy imported when the database is read: `apply_steps` serves
    from sqlalchemy import Connection  # the quick export too (core/storage/export_reads.py)

__all__ = ["apply_steps", "step_sums", "steps_query", "with_steps"]

_TOKENS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "totalTokens": "total_tokens",
    "reasoningTokens": "reasoning_tokens",
    "cachedInputTokens": "cached_input_tokens",
}
"""The entry's token keys -> `JudgeUsage`'s fields."""

_RUN_SUMS = (
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
"""The run columns summed for the runs that keep a per-step split (the rest is `unsplit`)."""


def steps_query(dialect: str, experiment: str = ":experiment_id") -> str:
    """Per (scorer, step, model): the entries' sums, in the order the steps first ran;
    `experiment`: the query's placeholder of the experiment id (the quick export's driver
    binds `?`)."""
    if dialect == "postgresql":
        source = "scorer_results r CROSS JOIN LATERAL json_array_elements(r.step_usage) e"
        step, model = "e ->> 'step'", "e ->> 'model'"
        sums = ", ".join(f"SUM((e ->> '{key}')::bigint)" for key in STEP_USAGE_KEYS)
    else:
        source = "scorer_results r, json_each(r.step_usage) e"
        step, model = "json_extract(e.value, '$.step')", "json_extract(e.value, '$.model')"
        sums = ", ".join(f"SUM(json_extract(e.value, '$.{key}'))" for key in STEP_USAGE_KEYS)
    return (
        f"SELECT r.scorer_id, {step} AS step, {model} AS model, COUNT(*) AS runs, {sums} "
        f"FROM {source} WHERE r.experiment_id = {experiment} AND r.step_usage IS NOT NULL "
        f"GROUP BY r.scorer_id, {step}, {model} ORDER BY r.scorer_id, MIN(r.id), {step}, {model}"
    )


_SPLIT_RUNS = (
    "SELECT scorer_id, COUNT(*) AS runs, "
    + ", ".join(f"SUM({name}) AS {name}" for name in _RUN_SUMS)
    + " FROM scorer_results WHERE experiment_id = :experiment_id AND step_usage IS NOT NULL"
    " AND (judge_attempts > 0 OR cached_calls > 0) GROUP BY scorer_id"
)
"""Per scorer: the runs that called the judge and keep a per-step split, summed as the
aggregates sum runs (`reads.scorer_totals`), so what is left of the totals is the rest's."""


def step_sums(connection: Connection, experiment_id: str) -> dict[str, Any]:
    """The experiment's per-step sums as JSON-ready data (kept with a finished experiment's
    totals, core/storage/totals.py): `{"steps": {scorer: [StepUsage]}, "split": {scorer:
    {runs, judge_calls, ...}}}`, the split runs' sums that `_rest` takes off the totals."""
    from sqlalchemy import text

    steps: dict[str, list[dict[str, Any]]] = {}
    parameters = {"experiment_id": experiment_id}
    for row in connection.execute(text(steps_query(connection.dialect.name)), parameters):
        sums = dict(zip(STEP_USAGE_KEYS, (int(v or 0) for v in row[4:]), strict=True))
        step = StepUsage(
            step=row.step or "",
            model=row.model or None,
            runs=int(row.runs),
            judge_calls=sums["calls"],
            judge_attempts=sums["attempts"],
            cached_calls=sums["cached"],
            usage=JudgeUsage(**{field: sums[key] for key, field in _TOKENS.items()}),
            duration_ms=sums["durationMs"],
        )
        steps.setdefault(row.scorer_id, []).append(step.model_dump(mode="json"))
    if not steps:
        return {"steps": {}, "split": {}}
    split = {
        row.scorer_id: {name: int(value or 0) for name, value in row._mapping.items()
                        if name != "scorer_id"}
        for row in connection.execute(text(_SPLIT_RUNS), parameters)
    }  # fmt: skip
    return {"steps": steps, "split": split}


def apply_steps(usages: Sequence[ScorerUsage], sums: Mapping[str, Any]) -> list[ScorerUsage]:
    """`usages` (an experiment's per-scorer totals) with their `steps` and, for a scorer whose
    stored runs are not all split, the `unsplit` rest (the totals less the split runs), from
    `step_sums`' data."""
    steps: Mapping[str, list[Any]] = sums.get("steps") or {}
    split: Mapping[str, Any] = sums.get("split") or {}
    return [
        usage.model_copy(
            update={
                "steps": tuple(StepUsage.model_validate(one) for one in steps[usage.scorer_id]),
                "unsplit": _rest(usage, split.get(usage.scorer_id)),
            }
        )
        if usage.scorer_id in steps
        else usage
        for usage in usages
    ]


def with_steps(
    connection: Connection, experiment_id: str, usages: Sequence[ScorerUsage]
) -> list[ScorerUsage]:
    """`usages` with their per-step split, summed now (`step_sums`, then `apply_steps`)."""
    return apply_steps(usages, step_sums(connection, experiment_id))


def _rest(usage: ScorerUsage, split: Mapping[str, Any] | None) -> StepUsage | None:
    """The scorer's totals less its split runs' sums; None when nothing is left."""
    sums = {name: int((split or {}).get(name) or 0) for name in ("runs", *_RUN_SUMS)}
    runs = usage.runs - sums["runs"]
    if runs <= 0:
        return None
    tokens = {
        field: None if (mine := getattr(usage.usage, field)) is None else mine - sums[field]
        for field in JudgeUsage.model_fields
    }
    return StepUsage(
        step="",
        model=usage.model,
        runs=runs,
        judge_calls=usage.judge_calls - sums["judge_calls"],
        judge_attempts=usage.judge_attempts - sums["judge_attempts"],
        cached_calls=usage.cached_calls - sums["cached_calls"],
        usage=JudgeUsage(**tokens),
        duration_ms=usage.duration_ms - sums["duration_ms"],
    )
