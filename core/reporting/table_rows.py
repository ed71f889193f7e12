"""The dashboard's tables as plain Python rows (lists, dicts, tuples): the per-item table, an
item's step-by-step drill-down, failure groups, judge usage and the experiment's cost.

core/reporting/tables.py builds the dashboard's DataFrames from these rows; the HTML report
(core/exchange/html.py) reads the rows themselves, so `scorelab export --html` never imports
pandas or NumPy (issue 21: the CLI answers in under a second). Pure shaping: no Streamlit, no
database, no pandas. Costs are estimates from litellm's price table (read as a file by
core/judge/pricing.py), looked up only when there are judge tokens to price.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal, NamedTuple

from core.judge.pricing import canonical_model, estimate_cost_usd
from core.record_base import STEP_ORDER, StepName
from core.records import ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.run_results import json_ready

__all__ = [
    "FAILURE_COLUMNS",
    "ITEM_COLUMNS",
    "ITEM_TAIL_COLUMNS",
    "TOKEN_COLUMNS",
    "USAGE_COLUMNS",
    "FailureGroup",
    "ItemRows",
    "StepView",
    "estimate",
    "experiment_cost",
    "failure_group_rows",
    "grouped_sums",
    "item_rows",
    "step_views",
    "usage_columns",
]

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


def estimate(
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
    cost = estimate(info.judge_model, None, usage.input_tokens or 0, usage.output_tokens or 0)
    return None if math.isnan(cost) else cost


# ---- items ----


@dataclass(frozen=True, slots=True)
class ItemRows:
    """The per-item table as columns of plain lists, one entry per item in dataset order (what
    `item_frame` makes a DataFrame of)."""

    item_id: list[str]
    """The items' ids."""
    input: list[str]
    """Display strings: text as is, other values as JSON, None as ""."""
    output: list[str]
    """Like `input`."""
    ground_truth: list[str]
    """Like `input`."""
    scores: dict[str, list[float]]
    """Per scorer id of the experiment, in its order: the score, NaN when not scored, failed or
    not scorable."""
    failed: list[str]
    """The comma-joined ids of the scorers that failed on the item ("" when none), in the
    experiment's scorer order."""
    judge_tokens: list[int]
    """Total judge tokens over the item's runs, failed runs included."""
    search_text: list[str]
    """Input, output, ground truth and reasons, lower-cased (`filter_items` searches it)."""


def item_rows(detail: ExperimentDetail) -> ItemRows:
    """The per-item table of an experiment (`ItemRows`), from plain attribute reads (no
    pydantic dump per cell).

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
    return ItemRows(
        item_id=[item.id for item in detail.items],
        input=[text[0] for text in texts],
        output=[text[1] for text in texts],
        ground_truth=[text[2] for text in texts],
        scores=dict(zip(scorer_ids, shape.scores, strict=True)),
        failed=shape.failed_text(),
        judge_tokens=shape.tokens,
        search_text=[
            "\n".join((*text, *reasons)).lower()
            for text, reasons in zip(texts, shape.reasons, strict=True)
        ],
    )


def _check_scorer_ids(scorer_ids: Sequence[str]) -> None:
    clashes = sorted(set(scorer_ids) & {*ITEM_COLUMNS, *ITEM_TAIL_COLUMNS})
    if clashes:
        raise ValueError(f"Scorer ids clash with item table columns: {', '.join(clashes)}")


class _ItemShape:
    """Per-item accumulators filled from outcomes (plain attribute reads, no dumps)."""

    def __init__(self, rows: int, scorer_ids: Sequence[str]) -> None:
        self.column = {scorer_id: k for k, scorer_id in enumerate(scorer_ids)}
        self.scores = [[math.nan] * rows for _ in scorer_ids]
        self.tokens = [0] * rows
        self.failed: dict[int, list[str]] = {}
        self.reasons: list[list[str]] = [[] for _ in range(rows)]

    def add(self, row: int, outcome: ScorerOutcome) -> None:
        """Fold one outcome into its item's row."""
        self.tokens[row] += outcome.usage.total_tokens or 0
        if outcome.status == "success":
            column = self.column.get(outcome.scorer_id)
            if column is not None and outcome.score is not None:
                self.scores[column][row] = float(outcome.score)
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


class FailureGroup(NamedTuple):
    """Failed runs of one scorer that failed at the same step with the same error."""

    scorer_id: str
    """The scorer's id."""
    failed_step: str
    """The step that raised; "" for an error outside any step."""
    error: str
    """The error message."""
    runs: int
    """How many runs failed so (the `count` column of `failure_groups`)."""
    item_ids: list[str]
    """Their items, in failure order."""


def failure_group_rows(failures: Sequence[ScorerOutcome]) -> list[FailureGroup]:
    """Failed runs grouped by (scorer id, failed step, error message), the largest groups
    first (ties keep the order they were first seen in)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for outcome in failures:
        key = (outcome.scorer_id, outcome.failed_step or "", outcome.error or "")
        groups.setdefault(key, []).append(outcome.item_id)
    rows = [FailureGroup(*key, len(ids), ids) for key, ids in groups.items()]
    rows.sort(key=lambda row: -row.runs)
    return rows


# ---- judge usage ----

_INT_USAGE = ("attempts", "model_calls", "duration_ms", *TOKEN_COLUMNS)
_TEXT_USAGE = ("item_id", "scorer_id", "step", "status")  # model, provider: may be missing


def usage_columns(
    outcomes: Sequence[ScorerOutcome], *, priced: bool = True
) -> dict[str, list[Any]]:
    """One entry per judge execution in each of `USAGE_COLUMNS`, over successful runs
    (`result["judge"]`) and failed ones (`snapshot["judge"]` plus `failed_execution` when the
    snapshot lacks it): counts as ints (missing ones 0), ids, step and status as text, `cached`
    a bool (answered from the judge cache, no request sent), `model` the model's one name and
    `est_cost_usd` a float, NaN without tokens or without a known price, and everywhere with
    `priced=False` (no price lookup: the HTML report sums no cost per execution)."""
    columns: dict[str, list[Any]] = {name: [] for name in USAGE_COLUMNS}
    for outcome in outcomes:
        for step, execution in _executions(outcome):
            for name, value in _usage_row(outcome, step, execution).items():
                columns[name].append(value)
    for name in _INT_USAGE:
        columns[name] = [int(value) for value in columns[name]]
    for name in _TEXT_USAGE:
        columns[name] = [str(value) for value in columns[name]]
    columns["est_cost_usd"] = (
        _usage_costs(columns) if priced else [math.nan] * len(columns["item_id"])
    )
    return columns


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
            memo[key] = estimate(*key)
        costs.append(memo[key])
    return costs


def grouped_sums(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], columns: Sequence[str]
) -> dict[tuple[Any, ...], list[int]]:
    """`columns` summed per value of `keys` (a tuple), the groups in the order first met: what
    `DataFrame.groupby(keys, sort=False)[columns].sum()` gives, for rows of ints."""
    sums: dict[tuple[Any, ...], list[int]] = {}
    for row in rows:
        group = sums.setdefault(tuple(row[key] for key in keys), [0] * len(columns))
        for k, column in enumerate(columns):
            group[k] += row[column]
    return sums
