"""Tables the dashboard shows, as pandas DataFrames: the experiment list, the per-item table and
its filters, an item's step-by-step drill-down, failure groups and judge usage.

Pure shaping: no Streamlit, no database. The per-item table is built from plain attribute reads
into NumPy arrays (no pydantic dump per cell) so 10,000 items × 5 scorers build in a few tens of
milliseconds. Costs are estimates from litellm's price table, looked up only when there are
judge tokens to price (so a page without judge usage never imports litellm).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
import pandas as pd

from core.judge.pricing import canonical_model, estimate_cost_usd
from core.record_base import STEP_ORDER, StepName
from core.records import ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.run_results import json_ready

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

ITEM_COLUMNS: tuple[str, ...] = ("item_id", "input", "output", "ground_truth")
"""The leading columns of `item_frame`; the scorer columns follow, then `ITEM_TAIL_COLUMNS`."""

ITEM_TAIL_COLUMNS: tuple[str, ...] = ("failed", "judge_tokens", "search_text")
"""The trailing columns of `item_frame`."""

TOKEN_COLUMNS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "total_tokens",
)
"""Token columns of `judge_usage_frame` (ints, 0 when not reported)."""

USAGE_COLUMNS: tuple[str, ...] = (
    "item_id",
    "scorer_id",
    "step",
    "status",
    "model",
    "provider",
    "attempts",
    "model_calls",
    "cached",
    "duration_ms",
    *TOKEN_COLUMNS,
    "est_cost_usd",
)
"""The columns of `judge_usage_frame`, one row per judge execution (`cached`: answered from the
judge cache, no request sent)."""

FAILURE_COLUMNS: tuple[str, ...] = ("scorer_id", "failed_step", "error", "count", "item_ids")
"""The columns of `failure_groups`."""

_RESULT_KEYS: dict[StepName, str] = {
    "preprocess": "preprocessStepResult",
    "analyze": "analyzeStepResult",
    "generateScore": "score",
    "generateReason": "reason",
}
_PROMPT_KEYS: dict[StepName, str] = {
    "preprocess": "preprocessPrompt",
    "analyze": "analyzePrompt",
    "generateScore": "generateScorePrompt",
    "generateReason": "generateReasonPrompt",
}
_USAGE_KEYS: dict[str, str] = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "reasoning_tokens": "reasoningTokens",
    "cached_input_tokens": "cachedInputTokens",
    "total_tokens": "totalTokens",
}


# ---- cost ----


def _estimate(
    model: str | None, provider: str | None, input_tokens: int, output_tokens: int
) -> float:
    """Estimated USD (`estimate_cost_usd`, the one price rule), NaN when unknown; litellm is
    consulted only when there are tokens."""
    if not model or input_tokens + output_tokens <= 0:
        return math.nan
    cost = estimate_cost_usd(model, input_tokens, output_tokens, provider)
    return math.nan if cost is None else cost


def experiment_cost(info: ExperimentInfo) -> float | None:
    """The experiment's estimated judge cost (USD), the one figure every page, export and the
    CLI show for it: its counted judge tokens (`info.counts.usage`, every run that called the
    judge, failed ones included) priced by `estimate_cost_usd` on its judge model. None
    without judge tokens or without a known price."""
    usage = info.counts.usage
    cost = _estimate(info.judge_model, None, usage.input_tokens or 0, usage.output_tokens or 0)
    return None if math.isnan(cost) else cost


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
    scorer_ids = list(detail.info.scorer_ids)
    _check_scorer_ids(scorer_ids)
    position = {item.id: row for row, item in enumerate(detail.items)}
    shape = _ItemShape(len(detail.items), scorer_ids)
    for outcome in chain(detail.results, detail.failures):
        row = position.get(outcome.item_id)
        if row is not None:
            shape.add(row, outcome)
    texts = [
        (_display(item.input), _display(item.output), _display(item.ground_truth))
        for item in detail.items
    ]
    columns: dict[str, Any] = {
        "item_id": [item.id for item in detail.items],
        "input": [text[0] for text in texts],
        "output": [text[1] for text in texts],
        "ground_truth": [text[2] for text in texts],
    }
    columns.update({scorer_id: shape.scores[:, k] for k, scorer_id in enumerate(scorer_ids)})
    columns["failed"] = shape.failed_text()
    columns["judge_tokens"] = shape.tokens
    columns["search_text"] = [
        "\n".join((*text, *reasons)).lower()
        for text, reasons in zip(texts, shape.reasons, strict=True)
    ]
    frame = pd.DataFrame(columns)
    return frame.astype(dict.fromkeys([*ITEM_COLUMNS, "failed", "search_text"], "str"))


def _check_scorer_ids(scorer_ids: Sequence[str]) -> None:
    clashes = sorted(set(scorer_ids) & {*ITEM_COLUMNS, *ITEM_TAIL_COLUMNS})
    if clashes:
        raise ValueError(f"Scorer ids clash with item table columns: {', '.join(clashes)}")


class _ItemShape:
    """Per-item accumulators filled from outcomes (plain attribute reads, no dumps)."""

    def __init__(self, rows: int, scorer_ids: Sequence[str]) -> None:
        self.column = {scorer_id: k for k, scorer_id in enumerate(scorer_ids)}
        self.scores = np.full((rows, len(scorer_ids)), np.nan)
        self.tokens = np.zeros(rows, dtype=np.int64)
        self.failed: dict[int, list[str]] = {}
        self.reasons: list[list[str]] = [[] for _ in range(rows)]

    def add(self, row: int, outcome: ScorerOutcome) -> None:
        """Fold one outcome into its item's row."""
        self.tokens[row] += outcome.usage.total_tokens or 0
        if outcome.status == "success":
            column = self.column.get(outcome.scorer_id)
            if column is not None and outcome.score is not None:
                self.scores[row, column] = outcome.score
            reason = outcome.reason
        else:
            self.failed.setdefault(row, []).append(outcome.scorer_id)
            reason = outcome.recovered_reason
        if reason is not None:
            self.reasons[row].append(_display(reason))

    def failed_text(self) -> list[str]:
        """The `failed` column: ids in the experiment's scorer order, comma-joined."""
        text = [""] * len(self.tokens)
        last = len(self.column)
        for row, ids in self.failed.items():
            ordered = sorted(dict.fromkeys(ids), key=lambda s: self.column.get(s, last))
            text[row] = ",".join(ordered)
        return text


def _display(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


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


# ---- drill-down ----


@dataclass(frozen=True)
class StepView:
    """One step of a scorer run, as the drill-down shows it."""

    name: StepName
    """The Mastra step name."""
    kind: Literal["prompt", "function"]
    """`prompt` when the step has a prompt or judge executions."""
    result: Any
    """What the step returned (for generateScore the score, for generateReason the reason)."""
    prompt: str | None
    """The prompt sent to the judge, for prompt steps."""
    executions: list[dict[str, Any]]
    """The step's judge executions in their JSON (camelCase) form, in order."""
    failed: bool = False
    """True for the step that raised."""


def step_views(outcome: ScorerOutcome) -> list[StepView]:
    """The steps that ran, in Mastra order (preprocess, analyze, generateScore, generateReason).

    A success reads `outcome.result`; a failure reads `outcome.snapshot` and
    `outcome.completed_steps`, and marks `outcome.failed_step`, whose prompt and failed judge
    execution come from `outcome.failed_execution`.
    """
    if outcome.status == "success":
        return _success_steps(outcome)
    return _failure_steps(outcome)


def _success_steps(outcome: ScorerOutcome) -> list[StepView]:
    if outcome.result is None:  # results loaded without their JSON: only score and reason known
        data: dict[str, Any] = {"score": outcome.score, "reason": outcome.reason}
        data = {key: value for key, value in data.items() if value is not None}
    else:
        data = outcome.result
    judge = data.get("judge") or {}
    not_scorable = (data.get("notScorable") or {}).get("step")
    return [
        _view(name, data, judge)
        for name in STEP_ORDER
        if name == not_scorable or _has_step(name, data, judge)
    ]


def _failure_steps(outcome: ScorerOutcome) -> list[StepView]:
    data = outcome.snapshot or {}
    judge = data.get("judge") or {}
    ran = {*outcome.completed_steps, outcome.failed_step}
    views = []
    for name in STEP_ORDER:
        if name == outcome.failed_step:
            views.append(_failed_view(name, data, judge, outcome))
        elif name in ran or _has_step(name, data, judge):
            views.append(_view(name, data, judge))
    return views


def _has_step(name: StepName, data: dict[str, Any], judge: dict[str, Any]) -> bool:
    return _RESULT_KEYS[name] in data or _PROMPT_KEYS[name] in data or name in judge


def _view(name: StepName, data: dict[str, Any], judge: dict[str, Any]) -> StepView:
    executions = _step_executions(judge, name)
    prompt = data.get(_PROMPT_KEYS[name]) or _last_prompt(executions)
    return StepView(
        name=name,
        kind="prompt" if prompt is not None or executions else "function",
        result=data.get(_RESULT_KEYS[name]),
        prompt=prompt,
        executions=executions,
    )


def _failed_view(
    name: StepName, data: dict[str, Any], judge: dict[str, Any], outcome: ScorerOutcome
) -> StepView:
    executions = _step_executions(judge, name)
    failed = json_ready(outcome.failed_execution) if outcome.failed_execution else None
    if failed is not None and failed not in executions:
        executions.append(failed)
    prompt = (failed or {}).get("prompt") or data.get(_PROMPT_KEYS[name])
    return StepView(
        name=name,
        kind="prompt" if prompt is not None or executions else "function",
        result=data.get(_RESULT_KEYS[name]),
        prompt=prompt,
        executions=executions,
        failed=True,
    )


def _step_executions(judge: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return list((judge.get(name) or {}).get("executions") or [])


def _last_prompt(executions: Sequence[dict[str, Any]]) -> str | None:
    prompts = [e["prompt"] for e in executions if e.get("prompt") is not None]
    return prompts[-1] if prompts else None


# ---- failures ----


def failure_groups(failures: Sequence[ScorerOutcome]) -> pd.DataFrame:
    """Failed runs grouped by (scorer id, failed step, error message): `count` and the
    `item_ids` (a list, in failure order) per group, the largest groups first (ties keep the
    order they were first seen in). `failed_step` is "" for an error outside any step."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for outcome in failures:
        key = (outcome.scorer_id, outcome.failed_step or "", outcome.error or "")
        groups.setdefault(key, []).append(outcome.item_id)
    rows = [(*key, len(ids), ids) for key, ids in groups.items()]
    rows.sort(key=lambda row: -row[3])
    frame = pd.DataFrame(rows, columns=list(FAILURE_COLUMNS))
    return frame.astype({"count": "int64"})


# ---- judge usage ----


def judge_usage_frame(outcomes: Sequence[ScorerOutcome], *, priced: bool = True) -> pd.DataFrame:
    """One row per judge execution (`USAGE_COLUMNS`), over successful runs (`result["judge"]`)
    and failed ones (`snapshot["judge"]` plus `failed_execution` when the snapshot lacks it).

    Missing token counts are 0; `est_cost_usd` is NaN without tokens or without a known price,
    and everywhere with `priced=False` (no price lookup: the HTML report sums no cost per
    execution)."""
    columns: dict[str, list[Any]] = {name: [] for name in USAGE_COLUMNS}
    for outcome in outcomes:
        for step, execution in _executions(outcome):
            for name, value in _usage_row(outcome, step, execution).items():
                columns[name].append(value)
    columns["est_cost_usd"] = (
        _usage_costs(columns) if priced else [math.nan] * len(columns["item_id"])
    )
    ints = ["attempts", "model_calls", "duration_ms", *TOKEN_COLUMNS]
    texts = ["item_id", "scorer_id", "step", "status"]  # model, provider: may be missing
    dtypes = dict.fromkeys(ints, "int64") | dict.fromkeys(texts, "str")
    return pd.DataFrame(columns).astype(dtypes | {"est_cost_usd": "float64", "cached": "bool"})


def _executions(outcome: ScorerOutcome) -> Iterator[tuple[str, dict[str, Any]]]:
    data = outcome.result if outcome.status == "success" else outcome.snapshot
    for step, record in ((data or {}).get("judge") or {}).items():
        for execution in (record or {}).get("executions") or []:
            yield step, execution
    if outcome.status == "failed" and outcome.failed_execution is not None:
        failed = json_ready(outcome.failed_execution)
        step = outcome.failed_step or "unknown"
        if failed not in _step_executions((data or {}).get("judge") or {}, step):
            yield step, failed


def _usage_row(outcome: ScorerOutcome, step: str, execution: dict[str, Any]) -> dict[str, Any]:
    usage = execution.get("usage") or {}
    row: dict[str, Any] = {
        "item_id": outcome.item_id,
        "scorer_id": outcome.scorer_id,
        "step": step,
        "status": execution.get("status", "success"),
        "model": _model_name(execution.get("judgeModelId"), execution.get("judgeProvider")),
        "provider": execution.get("judgeProvider"),
        "attempts": execution.get("attemptCount") or 0,
        "model_calls": execution.get("modelCallCount") or 0,
        "cached": execution.get("cached") is True,
        "duration_ms": execution.get("durationMs") or 0,
    }
    row.update({name: usage.get(key) or 0 for name, key in _USAGE_KEYS.items()})
    return row


def _model_name(model: Any, provider: Any) -> Any:
    """The model's one name (`canonical_model`): `openai/gpt-4o-mini` is `gpt-4o-mini`."""
    if not isinstance(model, str) or not model:
        return model
    return canonical_model(model, provider if isinstance(provider, str) else None)


def _usage_costs(columns: dict[str, list[Any]]) -> list[float]:
    """Estimated cost per row, one price lookup per distinct (model, provider, tokens)."""
    memo: dict[tuple[Any, ...], float] = {}
    keys = zip(
        columns["model"],
        columns["provider"],
        columns["input_tokens"],
        columns["output_tokens"],
        strict=True,
    )
    costs = []
    for key in keys:
        if key not in memo:
            memo[key] = _estimate(*key)
        costs.append(memo[key])
    return costs


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
