"""The records a scorer run produces: the result, the judge record and its parts."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

import orjson
from pydantic import BaseModel, Field

from core.record_base import Record, StepName

__all__ = [
    "ITEM_TEXT_KEYS",
    "RESULT_ROW_COLUMNS",
    "STEP_USAGE_KEYS",
    "ErrorSummary",
    "JudgeCost",
    "JudgeExecution",
    "JudgeExecutionFailure",
    "JudgeExecutionSuccess",
    "JudgeStepResult",
    "JudgeUsage",
    "NotScorableInfo",
    "ResultRow",
    "ScorerRunResult",
    "aliased_json",
    "database_json",
    "fields_json",
    "json_ready",
    "result_json",
    "step_usage_json",
    "step_usage_of_dict",
]

_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)


class JudgeUsage(Record):
    """Token usage of a judge, normalised to Mastra's keys. None means "not reported"."""

    input_tokens: int | None = None
    """Prompt tokens (`prompt_tokens` in OpenAI terms)."""
    output_tokens: int | None = None
    """Completion tokens."""
    total_tokens: int | None = None
    """Total tokens as reported, else input + output."""
    reasoning_tokens: int | None = None
    """Reasoning tokens, when the provider reports them."""
    cached_input_tokens: int | None = None
    """Prompt tokens read from the provider's cache."""
    cache_creation_input_tokens: int | None = None
    """Prompt tokens written to the provider's cache."""

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        """Key-by-key sum; a key stays None only when it is None on both sides."""
        if not isinstance(other, JudgeUsage):
            return NotImplemented
        summed: dict[str, int | None] = {}
        for key in _USAGE_KEYS:
            mine, theirs = getattr(self, key), getattr(other, key)
            summed[key] = mine if theirs is None else theirs if mine is None else mine + theirs
        return JudgeUsage(**summed)

    def is_empty(self) -> bool:
        """True when no key was reported."""
        # Spelled out: it is asked once per scorer run.
        return (
            self.input_tokens is None
            and self.output_tokens is None
            and self.total_tokens is None
            and self.reasoning_tokens is None
            and self.cached_input_tokens is None
            and self.cache_creation_input_tokens is None
        )

    @classmethod
    def normalize(cls, raw: Any) -> Self:
        """Normalise any provider usage mapping (docs/core.md, The judge record).

        `inputTokens` falls back to `promptTokens` and `outputTokens` to `completionTokens` when
        missing or null; `totalTokens` is computed when absent; values that are not numbers are
        dropped, and so is every other key.
        """
        if not isinstance(raw, Mapping):
            return cls()
        input_tokens = _first_present(raw, "inputTokens", "promptTokens")
        output_tokens = _first_present(raw, "outputTokens", "completionTokens")
        input_tokens, output_tokens = _as_token_count(input_tokens), _as_token_count(output_tokens)
        total = _as_token_count(raw.get("totalTokens"))
        if total is None and (input_tokens is not None or output_tokens is not None):
            total = (input_tokens or 0) + (output_tokens or 0)
        return cls(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total,
            reasoning_tokens=_as_token_count(raw.get("reasoningTokens")),
            cached_input_tokens=_as_token_count(raw.get("cachedInputTokens")),
            cache_creation_input_tokens=_as_token_count(raw.get("cacheCreationInputTokens")),
        )


def _first_present(raw: Mapping[str, Any], key: str, fallback: str) -> Any:
    # Only a missing or null value falls back; a non-numeric value is dropped, not replaced.
    value = raw.get(key)
    return raw.get(fallback) if value is None else value


def _as_token_count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else round(value)
    return value


class ErrorSummary(Record):
    """What is kept of an error: never headers, bodies or secrets."""

    name: str
    """The error's class name, e.g. `RateLimitError`."""
    message: str
    """The error's message."""
    code: str | None = None
    """The error's string id or code, or its HTTP status, when it has one."""


class JudgeCost(Record):
    """A cost the provider itself reported as authoritative (never an estimate)."""

    amount: float
    """The amount, in `unit`."""
    unit: str
    """The currency or unit, e.g. `USD`."""
    source: str
    """Where the figure came from."""


class _JudgeExecutionBase(Record):
    status: str
    """`success` or `failed`."""
    prompt: str
    """The prompt string the step's `create_prompt` returned (without any schema text)."""
    judge_model_id: str
    """The model that answered, as the provider named it (else as litellm resolved it)."""
    judge_provider: str | None = None
    """The provider litellm routed the call to."""
    attempt_count: int
    """Requests sent to the judge: the first call, each transport retry (`num_retries`) and the
    structured-output fallback with its own retries. One per request the provider received."""
    model_call_count: int
    """Judge calls that returned a response."""
    attempt_errors: tuple[ErrorSummary, ...] | None = None
    """Why each attempt before the last failed (a transport error that was retried, or the
    malformed answer that took the fallback), in order; None when the first attempt was the
    only one. The last attempt's outcome is `output` or `error`, so there are always
    `attempt_count - 1` of these."""
    duration_ms: int
    """Milliseconds for the whole prompt step, prompt building included."""
    cached: bool | None = None
    """True when the answer came from the judge cache (`JudgeConfig.cache`): no request was
    sent, so `attemptCount` and `modelCallCount` are 0 and `usage` is empty; absent otherwise."""


class JudgeExecutionSuccess(_JudgeExecutionBase):
    """A prompt step whose judge call produced a validated output."""

    status: Literal["success"] = "success"
    output: Any
    """The validated output: an object, the score number, or the reason text."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Usage summed over the attempts."""
    cost: JudgeCost | None = None
    """Only when the provider reported an authoritative cost."""


class JudgeExecutionFailure(_JudgeExecutionBase):
    """A prompt step whose judge call failed after at least one attempt started."""

    status: Literal["failed"] = "failed"
    error: ErrorSummary
    """What went wrong."""
    output: Any = None
    """The last validated output, when one was produced before the failure."""
    raw_output: str | None = None
    """The judge's last raw text, when a response arrived."""
    usage: JudgeUsage | None = None
    """Usage summed over the attempts that returned, when there was any."""
    finish_reason: str | None = None
    """The provider's last finish reason, or `error` when no response arrived."""
    cost: JudgeCost | None = None
    """Never set on failures; kept for a uniform shape."""


JudgeExecution = Annotated[
    JudgeExecutionSuccess | JudgeExecutionFailure, Field(discriminator="status")
]


class JudgeStepResult(Record):
    """The judge executions of one step, in order."""

    executions: tuple[JudgeExecution, ...] = ()
    """Normally one per run; a failed execution is appended after any earlier one."""


class NotScorableInfo(Record):
    """Why a run was not scored."""

    step: StepName
    """The step that returned `not_scorable(...)`."""
    reason: str | None = None
    """The reason it gave, if any."""


class ScorerRunResult(Record):
    """What `scorer.run` returns (and, with `score` possibly None, a failure's snapshot)."""

    run_id: str
    """The run's id (given, or a fresh UUID4)."""
    input: Any = None
    """The run's input, as the steps saw it."""
    output: Any = None
    """The run's output, as the steps saw it."""
    ground_truth: Any = None
    """The run's ground truth, if any."""
    request_context: Any = None
    """The run's request context, if any."""
    score: Any = None
    """The generate_score result; None when not scorable or not reached."""
    reason: Any = None
    """The generate_reason result, if that step exists."""
    preprocess_step_result: Any = None
    """The preprocess result, if that step exists."""
    analyze_step_result: Any = None
    """The analyze result, if that step exists."""
    preprocess_prompt: str | None = None
    """The preprocess prompt, when that step is a prompt step."""
    analyze_prompt: str | None = None
    """The analyze prompt, when that step is a prompt step."""
    generate_score_prompt: str | None = None
    """The generate_score prompt, when that step is a prompt step."""
    generate_reason_prompt: str | None = None
    """The generate_reason prompt, when that step is a prompt step."""
    judge: dict[StepName, JudgeStepResult] | None = None
    """Judge executions per prompt step, in execution order; None when no prompt step ran."""
    not_scorable: NotScorableInfo | None = None
    """Set when a step returned `not_scorable(...)`; then `score` is None."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready camelCase dict: the record's own None fields are left out, a `null` inside
        a step result, a judge output or the run's data stays (see `json_ready`)."""
        ready: dict[str, Any] = json_ready(self)  # a record becomes a dict
        return ready

    def judge_totals(self) -> tuple[JudgeUsage, int, int]:
        """Usage, model calls and attempts summed over every judge execution of the run."""
        usage, calls, attempts = _NO_USAGE, 0, 0
        for step in (self.judge or {}).values():
            for execution in step.executions:
                if execution.usage is not None:
                    # The first usage is the sum so far: no record built to add it to nothing.
                    usage = execution.usage if usage is _NO_USAGE else usage + execution.usage
                calls += execution.model_call_count
                attempts += execution.attempt_count
        return usage, calls, attempts

    def cached_calls(self) -> int:
        """Judge executions of the run answered from the judge cache."""
        return sum(
            1
            for step in (self.judge or {}).values()
            for execution in step.executions
            if execution.cached
        )


_NO_USAGE = JudgeUsage()  # frozen: one instance serves every run without a judge


def json_ready(value: Any) -> Any:
    """Turn records, sets and tuples into plain JSON-ready values.

    Like `JSON.stringify` on Mastra's objects, which drops `undefined` but never `null`: a
    record's own field that is None is absent and left out (at any depth, a nested record
    included), while a None inside data (a step result, a judge output, the run's input) is a
    real `null` and stays. Sets become sorted lists so the output is stable.
    """
    if isinstance(value, BaseModel):
        return _record_ready(value)
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((json_ready(v) for v in value), key=_sort_key)
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def _record_ready(record: BaseModel) -> dict[str, Any]:
    fields = type(record).model_fields
    return {
        (info.serialization_alias or info.alias or name): json_ready(value)
        for name, info in fields.items()
        if (value := getattr(record, name)) is not None
    }


def _sort_key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, str(value))


# ---- stored results, encoded once (docs/storage.md, "The write path") ----

RESULT_ROW_COLUMNS = (
    "item_id",
    "scorer_id",
    "score",
    "reason",
    "result",
    "duration_ms",
    *_USAGE_KEYS,
    "judge_calls",
    "judge_attempts",
    "cached_calls",
    "item_texts",
    "step_usage",
)
"""The columns of a `ResultRow`, in its order (those of `scorer_results` but its id and its
experiment's). `item_texts`: True when `result` was encoded `without_item_texts`;
`step_usage`: the run's judge usage per prompt step (`step_usage_json`), None without any."""

ITEM_TEXT_KEYS = ("input", "output", "groundTruth", "requestContext")
"""The result's keys that echo the item (`result_json(..., without_item_texts=True)` leaves them
out), in the order `to_dict` gives them, right after `runId`."""

ResultRow = tuple[Any, ...]
"""A successful run as the store writes it: the values of `RESULT_ROW_COLUMNS`, with `reason`
and `result` already JSON text (`database_json`, `result_json`). Built once from the run by
whoever ran it, written as it is: no record, no dict and no bind processor per result."""

_ENCODE_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
"""Datetimes and dataclasses reach the `default` hook, which writes them as `str()` does: as the
JSON of the database always wrote them (`json.dumps(..., default=str)`)."""

_RESULT_FIELDS = tuple(
    (name, info.serialization_alias or info.alias or name)
    for name, info in ScorerRunResult.model_fields.items()
)


_WITHOUT_ITEM = tuple(field for field in _RESULT_FIELDS if field[1] not in ITEM_TEXT_KEYS)


def database_json(value: Any) -> str:
    """`value` as the JSON text the database holds (the text `json.dumps(value,
    ensure_ascii=False, default=str)` gives, a non-finite number written as the string
    JavaScript would show), encoded by orjson: the plain values of a run take its fast path,
    anything it cannot encode exactly so (a key that is not a string, an integer over 64 bits,
    NaN) the slow one."""
    return _encoded(value, _as_text) or _plain_dumps(value)


def result_json(result: ScorerRunResult, *, without_item_texts: bool = False) -> str:
    """`result.to_dict()` as the database's JSON text (`database_json`), without building the
    dict: the record's fields go to orjson as they are, its nested records and sets through
    the `default` hook, as `json_ready` turns them. `without_item_texts`: the keys of
    `ITEM_TEXT_KEYS` left out (the store rebuilds them from the item when read)."""
    # The record's field values by name (no attribute lookup per field).
    return fields_json(result.__dict__, without_item_texts=without_item_texts)


def fields_json(own: Mapping[str, Any], *, without_item_texts: bool = False) -> str:
    """`result_json` of the record whose field values by name are `own` (its `__dict__`, or
    the fields of a run's parts that were never made a record)."""
    fields = {
        alias: value
        for name, alias in (_WITHOUT_ITEM if without_item_texts else _RESULT_FIELDS)
        if (value := own[name]) is not None
    }
    return _encoded(fields, _as_ready) or _plain_dumps(json_ready(fields))


def aliased_json(fields: dict[str, Any]) -> str:
    """`fields_json` of fields already keyed by their JSON alias, in the record's order, the
    None ones left out (what a run of function steps builds straight from its parts)."""
    # `_encoded`, spelled out: it runs once per stored run of a code scorer.
    try:
        text = orjson.dumps(fields, default=_as_ready, option=_ENCODE_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError: a non-string key, a huge integer, a surrogate
        return _plain_dumps(json_ready(fields))
    return _plain_dumps(json_ready(fields)) if "null" in text else text


def _encoded(value: Any, default: Any) -> str | None:
    try:
        encoded = orjson.dumps(value, default=default, option=_ENCODE_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: a non-string key, a huge integer, a surrogate
        return None
    # orjson writes NaN and Infinity as null: a null anywhere takes the exact (slow) path,
    # which writes them as strings. A real None inside data is rare on the hot path. (Looked
    # for in the text: `bytes in bytes` first tries the needle as an integer, and formats
    # the TypeError it then drops.)
    text = encoded.decode()
    return None if "null" in text else text


def _as_text(value: Any) -> Any:
    """What `json.dumps(default=str)` makes of a value orjson does not encode itself."""
    if isinstance(value, float):  # a subclass (numpy.float64): json.dumps writes the number
        return float(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, list | tuple):  # a subclass (a named tuple): json.dumps writes a list
        return list(value)
    return str(value)


_ONLY_TEXT = frozenset({str})
# Made once: a `set | frozenset` written in the call builds its union on every call.
_SETS = (set, frozenset)
_CONTAINERS = (BaseModel, Mapping, list, tuple)


def _as_ready(value: Any) -> Any:
    """What `json_ready` then `json.dumps(default=str)` make of a value orjson does not encode
    itself (a record, a set, a mapping that is not a dict...)."""
    if isinstance(value, _SETS):  # a subclass too (a scorer's own set)
        if _ONLY_TEXT.issuperset(map(type, value)):  # json_ready's order for strings alone
            return sorted(value)
        return json_ready(value)
    if isinstance(value, _CONTAINERS):
        return json_ready(value)
    return _as_text(value)


def _plain_dumps(value: Any) -> str:
    """The exact JSON text: standard-library `json`, non-finite numbers as strings (PostgreSQL
    rejects NaN and Infinity in JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=str)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


# ---- per-step judge usage of a stored run (docs/storage.md, "Judge usage per step") ----

STEP_USAGE_KEYS = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "reasoningTokens",
    "cachedInputTokens",
    "calls",
    "attempts",
    "cached",
    "durationMs",
)
"""The summed keys of one entry of a `step_usage` column, after its `step` and `model`: the
tokens (a token count not reported is 0), the model calls that returned, the attempts, the
executions answered from the judge cache and the milliseconds of the step."""


def step_usage_json(judge: Mapping[StepName, JudgeStepResult] | None) -> str | None:
    """A run's judge usage per prompt step as the compact JSON of `scorer_results.step_usage`:
    `[{"step", "model", *STEP_USAGE_KEYS}]`, one entry per (step, model answering), in the
    order the steps ran; None for a run without judge executions (a code scorer)."""
    if not judge:
        return None
    sums: dict[tuple[str, str], list[int]] = {}
    for step, record in judge.items():
        for execution in record.executions:
            usage = execution.usage
            _add(
                sums,
                (step, execution.judge_model_id),
                (
                    (usage.input_tokens, usage.output_tokens, usage.total_tokens)
                    if usage is not None
                    else (None, None, None)
                ),
                (
                    (usage.reasoning_tokens, usage.cached_input_tokens)
                    if usage is not None
                    else (None, None)
                ),
                (execution.model_call_count, execution.attempt_count, execution.cached is True),
                execution.duration_ms,
            )
    return _step_usage_text(sums)


def step_usage_of_dict(judge: Any) -> str | None:
    """`step_usage_json` of a result read from a file or another store: its `judge` as JSON
    (`{step: {executions: [{judgeModelId, usage: {inputTokens, ...}, modelCallCount,
    attemptCount, cached, durationMs}]}}`); None when it holds no execution. A value of the
    wrong type counts as absent (an imported file is not trusted to be well formed)."""
    if not isinstance(judge, Mapping):
        return None
    sums: dict[tuple[str, str], list[int]] = {}
    for step, record in judge.items():
        executions = record.get("executions") if isinstance(record, Mapping) else None
        for execution in executions if isinstance(executions, list | tuple) else ():
            if not isinstance(execution, Mapping):
                continue
            usage = execution.get("usage")
            usage = usage if isinstance(usage, Mapping) else {}
            model = execution.get("judgeModelId")
            _add(
                sums,
                (str(step), model if isinstance(model, str) else ""),
                (usage.get("inputTokens"), usage.get("outputTokens"), usage.get("totalTokens")),
                (usage.get("reasoningTokens"), usage.get("cachedInputTokens")),
                (
                    execution.get("modelCallCount"),
                    execution.get("attemptCount"),
                    execution.get("cached") is True,
                ),
                execution.get("durationMs"),
            )
    return _step_usage_text(sums)


def _add(
    sums: dict[tuple[str, str], list[int]],
    key: tuple[str, str],
    tokens: tuple[Any, Any, Any],
    more_tokens: tuple[Any, Any],
    counts: tuple[Any, Any, bool],
    duration_ms: Any,
) -> None:
    values = (*tokens, *more_tokens, *counts, duration_ms)
    found = sums.setdefault(key, [0] * len(STEP_USAGE_KEYS))
    for n, value in enumerate(values):
        if type(value) is int or type(value) is bool:  # a count; anything else is not one
            found[n] += int(value)


def _step_usage_text(sums: dict[tuple[str, str], list[int]]) -> str | None:
    if not sums:
        return None
    return orjson.dumps(
        [
            {"step": step, "model": model, **dict(zip(STEP_USAGE_KEYS, values, strict=True))}
            for (step, model), values in sums.items()
        ]
    ).decode()
