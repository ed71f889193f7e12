"""Running one prompt step against its judge: the litellm call(s) with their transport retries,
the structured-output fallback, and the judge execution record (one attempt per request)."""

from __future__ import annotations

import inspect
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, cast

from pydantic import BaseModel, SecretStr

from core._clock import elapsed_ms
from core.errors import MastraError, error_code
from core.judge import _litellm, retry
from core.judge.budget import active_budget
from core.judge.cache import CachedAnswer, cache_key, judge_cache
from core.judge.config import JudgeConfig
from core.judge.endpoints import NO_KEY, provider_key_may_go
from core.judge.estimate import active_recorder
from core.judge.pricing import estimate_cost_usd
from core.judge.prompt_step import PromptStep
from core.judge.rate_limit import Limiter, current_limiter, request_tokens
from core.judge.schema import JudgeOutputError, OutputSchema, parse_judge_json, score_schema
from core.judge.secrets import SecretMasker, secret_masker
from core.run_results import (
    ErrorSummary,
    JudgeExecutionFailure,
    JudgeExecutionSuccess,
    JudgeUsage,
)

__all__ = ["JudgeStepFailed", "PromptStepOutcome", "run_prompt_step", "warm_up"]

logger = logging.getLogger(__name__)

StepKind = Literal["object", "score", "text"]
"""What the judge answers: JSON matching a schema, `{"score": n}`, or free text."""

MISSING_MODEL_ID = "MASTR_SCORER_FAILED_TO_RUN_MISSING_MODEL_OR_INSTRUCTIONS"


def warm_up() -> None:
    """Import litellm now, once per process (seconds the first time), so that the pipeline can
    do it before a prompt step's clock starts. A failing import is left to the step itself,
    which then records it as the step's error."""
    try:
        _litellm.litellm()
    except Exception:
        logger.debug("litellm import failed; the judge step will report it", exc_info=True)


@dataclass(frozen=True, slots=True)
class PromptStepOutcome:
    """A prompt step that succeeded: its value, its prompt and its judge execution."""

    value: Any
    prompt: str
    execution: JudgeExecutionSuccess


class JudgeStepFailed(Exception):
    """A prompt step failed; carries the original error and the failed execution, if any call
    was attempted (None when the failure came before the first call)."""

    def __init__(self, cause: BaseException, execution: JudgeExecutionFailure | None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.execution = execution


_NO_USAGE = JudgeUsage()
"""Usage before any call returned (records are frozen: one instance serves every step)."""


@dataclass(slots=True)
class _Attempts:
    """What the calls of one prompt step have observed so far."""

    model_id: str
    provider: str | None
    attempt_count: int = 0
    model_call_count: int = 0
    usage: JudgeUsage = _NO_USAGE
    raw_output: str | None = None
    finish_reason: str | None = None
    failures: list[BaseException] = field(default_factory=list)
    """The error of every attempt that failed, in order."""
    cached_answers: int = 0
    """Calls answered from the judge cache (no request sent)."""
    limiter_wait_s: float = 0.0
    """Time spent waiting for the judge rate limit (`core.judge.rate_limit`), left out of the
    step's duration: the limit is the experiment's own pacing, not the judge's latency."""

    def duration_ms(self, started: float) -> int:
        """Milliseconds since `started`, the time waited for the rate limit left out."""
        return max(elapsed_ms(started) - round(self.limiter_wait_s * 1000), 0)

    @property
    def cached(self) -> bool | None:
        """True when every answer of the step came from the judge cache."""
        return True if self.cached_answers and self.attempt_count == 0 else None

    def record_cached(self, answer: CachedAnswer) -> str:
        """Take an answer from the judge cache (no attempt, no model call, no usage)."""
        text = str(answer.get("content") or "")
        self.raw_output = text
        self.model_id = str(answer.get("model") or self.model_id)
        self.finish_reason = answer.get("finish_reason") or self.finish_reason
        return text

    def record_response(self, response: Any) -> str:
        """Count a call that returned, and give back its text."""
        self.model_call_count += 1
        usage = usage_from_litellm(getattr(response, "usage", None))
        # The first call's usage is the sum so far: no second record built to add it to nothing.
        self.usage = usage if self.usage is _NO_USAGE else self.usage + usage
        self.model_id = getattr(response, "model", None) or self.model_id
        choice = response.choices[0] if getattr(response, "choices", None) else None
        text = (choice.message.content if choice is not None else None) or ""
        self.raw_output = text
        if choice is not None and choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return text

    def record_error(self) -> None:
        # "error" marks a call with no response, but never hides a real finish reason.
        if self.finish_reason is None:
            self.finish_reason = "error"

    def earlier_errors(
        self, masker: SecretMasker, final: BaseException | None = None
    ) -> tuple[ErrorSummary, ...] | None:
        """Summaries of the failed attempts, minus the one that ended the step (`final`), which
        the record keeps as its `error`; secrets masked."""
        failures = self.failures
        if final is not None and failures and failures[-1] is final:
            failures = failures[:-1]
        for error in failures:
            masker.exception(error)
        return tuple(error_summary(error) for error in failures) or None


async def run_prompt_step(
    step: PromptStep,
    kind: StepKind,
    ctx: Any,
    scorer_judge: JudgeConfig | None,
    started: float,
) -> PromptStepOutcome:
    """Build the prompt, call the judge, validate its answer; raise `JudgeStepFailed` on error.

    `started` is the `time.perf_counter()` at which the step began, so the duration covers the
    prompt building too.
    """
    try:
        prompt = step.create_prompt(ctx)
        if inspect.isawaitable(prompt):
            prompt = await prompt
        if not isinstance(prompt, str):
            raise TypeError(f"create_prompt must return a string, not {type(prompt).__name__}")
        judge = step.judge.over(scorer_judge) if step.judge else scorer_judge
        if judge is None or not judge.model or not judge.instructions:
            raise MastraError(
                id=MISSING_MODEL_ID,
                message="A prompt step requires a judge model and instructions "
                "(set JudgeConfig(model=..., instructions=...) on the scorer or the step)",
            )
        model_id, provider = _litellm.routed_model(judge.model, judge.api_base)
    except Exception as error:
        raise JudgeStepFailed(error, None) from error

    attempts = _Attempts(model_id=model_id, provider=provider)
    masker = _masker(judge.api_key)
    try:
        if kind == "text":
            value = await _call(judge, prompt, attempts, schema=None, inject=False)
        else:
            schema = score_schema() if kind == "score" else step.schema
            assert schema is not None  # the builder refuses object steps without a schema
            value = await _structured(judge, prompt, attempts, schema, kind)
    except Exception as error:
        masker.exception(error)
        earlier = attempts.earlier_errors(masker, final=error)
        failed = _failed_execution(
            masker.text(prompt), attempts, error_summary(error), earlier, started, masker
        )
        raise JudgeStepFailed(error, failed) from error
    # The judge may echo a key in its answer: the value the scorer gets is masked too.
    value = masker.value(value)
    execution = JudgeExecutionSuccess(
        prompt=masker.text(prompt),
        judge_model_id=attempts.model_id,
        judge_provider=attempts.provider or None,
        attempt_count=0 if attempts.cached else max(attempts.attempt_count, 1),
        model_call_count=0 if attempts.cached else max(attempts.model_call_count, 1),
        attempt_errors=attempts.earlier_errors(masker),
        duration_ms=attempts.duration_ms(started),
        cached=attempts.cached,
        output=value,
        usage=attempts.usage,
    )
    return PromptStepOutcome(value=value, prompt=prompt, execution=execution)


async def _structured(
    judge: JudgeConfig, prompt: str, attempts: _Attempts, schema: OutputSchema, kind: StepKind
) -> Any:
    """One call, and exactly one more with the schema in the prompt if the answer is malformed
    (each call with its own transport retries)."""
    inject = _first_injection(judge, attempts)
    try:
        return await _call(judge, prompt, attempts, schema=schema, inject=inject, kind=kind)
    except JudgeOutputError as error:
        logger.warning(
            "Judge answer malformed (%s); retrying once with the schema in the prompt",
            secret_masker().text(str(error)),  # the message may quote the answer
        )
    return await _call(judge, prompt, attempts, schema=schema, inject=True, kind=kind)


def _first_injection(judge: JudgeConfig, attempts: _Attempts) -> bool:
    setting = judge.json_prompt_injection
    if setting is None or setting == "auto":
        return not _litellm.supports_response_schema(attempts.model_id, attempts.provider or "")
    return bool(setting)


async def _call(
    judge: JudgeConfig,
    prompt: str,
    attempts: _Attempts,
    *,
    schema: OutputSchema | None,
    inject: bool,
    kind: StepKind = "text",
) -> Any:
    """One call: the judge cache (when the judge has it on), else a request, retried on
    transport errors (each request one attempt); returns the validated value."""
    arguments = _call_arguments(judge, prompt, schema, inject, attempts.provider)
    recorder = active_recorder()
    if recorder is not None:  # a dry run (core.judge.estimate): recorded, never sent
        text = recorder.answer(arguments, schema, kind)
        attempts.raw_output = text
        return _validated(text, schema, kind)
    key = cache_key(arguments) if judge.cache else None
    if key is not None:
        stored = await judge_cache().get(key)
        if stored is not None:
            try:
                value = _validated(attempts.record_cached(stored), schema, kind)
            except Exception:  # stored under an older validation: ask the provider instead
                logger.debug("A cached judge answer no longer validates; calling the judge")
            else:
                attempts.cached_answers += 1
                return value
    budget = retry.retry_budget(judge.model_settings)
    response = await retry.with_retries(budget, _request, arguments, attempts)
    try:
        text = attempts.record_response(response)
        value = _validated(text, schema, kind)
    except Exception as error:
        attempts.failures.append(error)
        raise
    if key is not None:  # only a validated answer: a malformed one is never replayed
        await judge_cache().put(key, _cached_answer(response, text))
    return value


def _validated(text: str, schema: OutputSchema | None, kind: StepKind) -> Any:
    if schema is None:
        return text
    value = schema.validate(parse_judge_json(text))
    return value["score"] if kind == "score" else value


def _cached_answer(response: Any, text: str) -> CachedAnswer:
    choice = response.choices[0] if getattr(response, "choices", None) else None
    return {
        "content": text,
        "model": getattr(response, "model", None),
        "finish_reason": getattr(choice, "finish_reason", None),
        "usage": json_ready_usage(usage_from_litellm(getattr(response, "usage", None))),
    }


def json_ready_usage(usage: JudgeUsage) -> dict[str, Any]:
    """A usage as its camelCase JSON (what was paid for, kept with a cached answer)."""
    return usage.model_dump(by_alias=True, exclude_none=True)


async def _request(arguments: dict[str, Any], attempts: _Attempts) -> Any:
    """One request to the provider: one attempt. Under a judge rate limit
    (`core.judge.rate_limit`), it first waits for its turn (at its estimated tokens),
    the tokens are settled with the reported usage after, and a 429 slows every caller of the
    model down. Under a spend cap (`core.judge.budget`), the request is then reserved at its
    estimated cost, and refused (`BudgetReached`, before it counts as an attempt) when that
    would pass the cap."""
    limiter = current_limiter()
    if limiter is None:
        return await _sent(arguments, attempts)
    model = str(arguments.get("model") or "")
    estimated = request_tokens(arguments)
    waiting = time.perf_counter()
    await limiter.acquire(model, estimated)
    attempts.limiter_wait_s += time.perf_counter() - waiting
    try:
        response = await _sent(arguments, attempts)
    except Exception as error:
        await _report_error(limiter, model, error, attempts.attempt_count, estimated)
        raise
    usage = usage_from_litellm(getattr(response, "usage", None))
    used = usage.total_tokens
    await limiter.settle(model, estimated, estimated if used is None else used)
    return response


async def _report_error(
    limiter: Limiter, model: str, error: Exception, attempt: int, estimated: int
) -> None:
    """A 429 pauses every caller of the model for the wait the server asked for (else the
    backoff); an error answer used no tokens, though its estimate stays counted."""
    if retry.status_of(error) == 429:
        await limiter.slow_down(model, retry.pause_seconds(attempt, error))
    await limiter.settle(model, estimated, 0)


async def _sent(arguments: dict[str, Any], attempts: _Attempts) -> Any:
    """The request itself, under the spend cap if there is one."""
    budget = active_budget()
    reserved = budget.reserve(arguments) if budget is not None else 0.0
    attempts.attempt_count += 1
    try:
        response = await _litellm.litellm().acompletion(**arguments)
    except BaseException as error:
        if budget is not None:
            # An error answer costs nothing; a timeout (litellm's says 408) or a cancelled call
            # may have been billed, so its reservation stays spent.
            status = getattr(error, "status_code", None)
            budget.settle(reserved, 0.0 if status not in (None, 408) else None)
        if isinstance(error, Exception):
            attempts.record_error()
            attempts.failures.append(error)
        raise
    if budget is not None:
        usage = usage_from_litellm(getattr(response, "usage", None))
        budget.settle(reserved, response_cost(response, arguments), usage.output_tokens)
    return response


def response_cost(response: Any, arguments: Mapping[str, Any]) -> float | None:
    """What litellm priced a response at (its `response_cost`), else its price table times
    the usage; None when neither knows."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
    if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost):
        return float(cost)
    usage = usage_from_litellm(getattr(response, "usage", None))
    return estimate_cost_usd(
        str(arguments.get("model") or ""), usage.input_tokens or 0, usage.output_tokens or 0
    )


def _call_arguments(
    judge: JudgeConfig,
    prompt: str,
    schema: OutputSchema | None,
    inject: bool,
    provider: str | None = None,
) -> dict[str, Any]:
    user_text = prompt
    arguments: dict[str, Any] = {"model": judge.model}
    if schema is not None:
        if inject:
            user_text = f"{prompt}\n\n{schema_instruction(schema)}"
        else:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.json_schema, "strict": False},
            }
    arguments["messages"] = [
        {"role": "system", "content": judge.instructions},
        {"role": "user", "content": user_text},
    ]
    if judge.api_base:
        arguments["api_base"] = judge.api_base
    if judge.api_key is not None:
        arguments["api_key"] = judge.api_key.get_secret_value()
    elif judge.api_base and not provider_key_may_go(
        judge.model or "", provider or "", judge.api_base
    ):
        # Without a key litellm would send the provider's (OPENAI_API_KEY, ...) to this base:
        # it goes only to the provider's own endpoint or a trusted one (core.judge.endpoints).
        arguments["api_key"] = NO_KEY
    settings = dict(judge.model_settings or {})
    for key in ("num_retries", "max_retries"):
        settings.pop(key, None)  # our retry loop's budget (see `retry.retry_budget`)
    arguments.update(settings)
    # No hidden retries: neither litellm's wrapper nor the OpenAI client may resend a request.
    arguments["num_retries"] = 0
    arguments["max_retries"] = 0
    return arguments


def schema_instruction(schema: OutputSchema) -> str:
    """The text appended to a prompt when the schema goes into the prompt."""
    return (
        "Answer with one JSON object and nothing else (no prose, no Markdown) that matches "
        f"this JSON schema:\n{schema.compact_json}"
    )


def usage_from_litellm(usage: Any) -> JudgeUsage:
    """Normalise a litellm/OpenAI usage object (or mapping) into a `JudgeUsage`: the same keys
    and rules as `JudgeUsage.normalize` (docs/core.md, The judge record), read straight off the
    object, since this runs once per judge call."""
    if usage is None:
        return _NO_USAGE
    read = usage.get if isinstance(usage, dict) else _reader(usage)
    completion_details = read("completion_tokens_details")
    prompt_details = read("prompt_tokens_details")
    input_tokens = _tokens(read("prompt_tokens"))
    output_tokens = _tokens(read("completion_tokens"))
    total = _tokens(read("total_tokens"))
    if total is None or (total == 0 and ((input_tokens or 0) > 0 or (output_tokens or 0) > 0)):
        # Absent, or litellm's 0 when the provider left the total out: computed.
        if input_tokens is not None or output_tokens is not None:
            total = (input_tokens or 0) + (output_tokens or 0)
        else:
            total = None
    return JudgeUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        reasoning_tokens=_tokens(_field(completion_details, "reasoning_tokens")),
        cached_input_tokens=_tokens(_field(prompt_details, "cached_tokens")),
        cache_creation_input_tokens=_tokens(read("cache_creation_input_tokens")),
    )


def _reader(source: Any) -> Callable[[str], Any]:
    if isinstance(source, Mapping):
        return source.get
    if isinstance(source, BaseModel):
        return _model_reader(source)
    return lambda name: getattr(source, name, None)


def _model_reader(model: BaseModel) -> Callable[[str], Any]:
    """`getattr(model, name, None)` for a pydantic model (litellm's `Usage`), read off its
    fields and extras: a key it lacks (`cache_creation_input_tokens`, but for Anthropic)
    would otherwise go through pydantic's `__getattr__` and an AttributeError per call."""
    fields = model.__dict__
    extra = model.__pydantic_extra__ or {}
    kind = type(model)

    def read(name: str) -> Any:
        if name in fields:
            return fields[name]
        if name in extra:
            return extra[name]
        # A property or class attribute of that name is still asked for as getattr would.
        return getattr(model, name, None) if _class_defines(kind, name) else None

    return read


@lru_cache(maxsize=256)
def _class_defines(kind: type, name: str) -> bool:
    return any(name in vars(base) for base in kind.__mro__)


def _tokens(value: Any) -> int | None:
    """A token count as `JudgeUsage.normalize` keeps it: ints as they are, integral or finite
    floats rounded, anything else (booleans, text, NaN) dropped."""
    kind = type(value)
    if kind is int:
        return cast("int", value)
    if value is None or kind is bool or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else round(value)
    return int(value)  # an int subclass (not bool)


def _field(source: Any, name: str) -> Any:
    if source is None:
        return None
    if isinstance(source, dict | Mapping):
        return source.get(name)
    return getattr(source, name, None)


def _failed_execution(
    prompt: str,
    attempts: _Attempts,
    error: ErrorSummary,
    earlier: tuple[ErrorSummary, ...] | None,
    started: float,
    masker: SecretMasker,
) -> JudgeExecutionFailure | None:
    if attempts.attempt_count == 0:
        return None
    return JudgeExecutionFailure(
        prompt=prompt,
        judge_model_id=attempts.model_id,
        judge_provider=attempts.provider or None,
        attempt_count=attempts.attempt_count,
        model_call_count=attempts.model_call_count,
        attempt_errors=earlier,
        duration_ms=attempts.duration_ms(started),
        error=error,
        raw_output=None if attempts.raw_output is None else masker.text(attempts.raw_output),
        usage=None if attempts.usage.is_empty() else attempts.usage,
        finish_reason=attempts.finish_reason,
    )


def error_summary(error: BaseException) -> ErrorSummary:
    """Name, message and code of an error; nothing else (no headers, no bodies)."""
    return ErrorSummary(name=type(error).__name__, message=str(error), code=error_code(error))


def _masker(api_key: SecretStr | None) -> SecretMasker:
    """Every secret of the process (core.judge.secrets), plus the judge's own key, should it
    be one no variable holds (given in a JudgeConfig)."""
    masker = secret_masker()
    own = api_key.get_secret_value() if api_key is not None else ""
    # Shorter than 4 characters a "key" would mangle ordinary words; the placeholder is none.
    if len(own) < 4 or own == NO_KEY or own in masker.secrets:
        return masker
    return _with_own_key(masker, own)


@lru_cache(maxsize=64)
def _with_own_key(masker: SecretMasker, own: str) -> SecretMasker:
    """`masker` plus a key of the judge's own, built once per (masker, key): every prompt step
    of an experiment asks for the same."""
    return SecretMasker(tuple(sorted({*masker.secrets, own}, key=lambda s: (-len(s), s))))
