"""`create_scorer` and the immutable `Scorer`: preprocess → analyze → generate_score →
generate_reason, each step a function or a `PromptStep`."""

from __future__ import annotations

import inspect
import math
import numbers
import os
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from core._sync import run_coroutine_sync
from core.errors import ScorerConfigError, ScorerRunError
from core.judge.call import (
    JudgeStepFailed,
    PromptStepOutcome,
    StepKind,
    run_prompt_step,
    warm_up,
)
from core.judge.config import JudgeConfig
from core.judge.prompt_step import PromptStep
from core.record_base import StepName
from core.run_results import (
    JudgeExecution,
    JudgeStepResult,
    NotScorableInfo,
    ScorerRunResult,
    aliased_json,
)
from core.scoring.context import ScorerRun, StepContext, StepResults
from core.scoring.not_scorable import NotScorable

__all__ = ["RunParts", "Scorer", "StepInfo", "create_scorer", "described"]

StepFunction = Callable[[StepContext], Any]
StepDefinition = StepFunction | PromptStep
PrepareRun = Callable[[ScorerRun], "ScorerRun | Mapping[str, Any] | Awaitable[Any]"]

# Snake-case method name, result-field prefix and what a prompt step's judge answers.
_STEP_SPECS: dict[StepName, tuple[str, StepKind]] = {
    "preprocess": ("preprocess", "object"),
    "analyze": ("analyze", "object"),
    "generateScore": ("generate_score", "score"),
    "generateReason": ("generate_reason", "text"),
}


# The canonical order in which a run executes the steps (docs/core.md, "Pipeline").
_STEP_ORDER: dict[StepName, int] = {name: index for index, name in enumerate(_STEP_SPECS)}


class _RunIds:
    """Fresh run ids: random (version 4) UUID strings, as `str(uuid.uuid4())` gives, without a
    system call per run. `uuid4` reads os.urandom, which releases the GIL: on a hot loop of code
    scorers every run then waits for the interpreter again (8% of a stored run's time). Here
    the 122 random bits come from a Mersenne Twister seeded from os.urandom once per process
    (and again in a forked child, so two processes never share a sequence); `getrandbits` is
    one C call under the GIL, safe from any thread. Run ids need to be unique, not secret."""

    def __init__(self) -> None:
        self._random = random.Random(os.urandom(32))
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        """A new seed from os.urandom (a forked child must not repeat its parent's ids)."""
        self._random.seed(os.urandom(32))

    def __call__(self) -> str:
        # Version 4 and variant 10xx set over 128 random bits, formatted directly.
        bits = (self._random.getrandbits(128) & _UUID_CLEAR) | _UUID_SET
        digits = f"{bits:032x}"
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID_SET = (0x4000 << 64) | (0x8000 << 48)
_fresh_run_id = _RunIds()


# What plain step functions return; none of these types can be awaited.
_NEVER_AWAITABLE = frozenset(
    {dict, float, int, str, bool, list, tuple, set, type(None), NotScorable}
)


@dataclass(frozen=True, slots=True)
class StepInfo:
    """A step as the catalog shows it."""

    name: StepName
    """The Mastra step name."""
    kind: Literal["function", "prompt"]
    """Whether a Python function or a judge produces the result."""
    description: str | None
    """The prompt step's description, or the function's `description` attribute."""


@dataclass(frozen=True, slots=True)
class _Step:
    name: StepName
    definition: StepDefinition

    @property
    def is_prompt(self) -> bool:
        return isinstance(self.definition, PromptStep)


class Scorer:
    """A scorer: an immutable chain of steps. Build one with `create_scorer(...)`."""

    __slots__ = ("_description", "_id", "_judge", "_name", "_prepare_run", "_steps")
    # Set once in __init__ through object.__setattr__ (the class forbids assignment).
    _id: str
    _name: str
    _description: str
    _judge: JudgeConfig | None
    _prepare_run: PrepareRun | None
    _steps: tuple[_Step, ...]

    def __init__(
        self,
        *,
        id: str,
        description: str,
        name: str | None = None,
        judge: JudgeConfig | None = None,
        prepare_run: PrepareRun | None = None,
        steps: tuple[_Step, ...] = (),
    ) -> None:
        _check_config(id, description, name, judge, prepare_run)
        set_attribute = object.__setattr__
        set_attribute(self, "_id", id)
        set_attribute(self, "_name", name or id)
        set_attribute(self, "_description", description)
        set_attribute(self, "_judge", judge)
        set_attribute(self, "_prepare_run", prepare_run)
        set_attribute(self, "_steps", steps)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Scorer is immutable: the builder methods return a new scorer")

    def __repr__(self) -> str:
        steps = ", ".join(
            f"{s.name}:{'prompt' if s.is_prompt else 'function'}" for s in self._steps
        )
        return f"Scorer(id={self._id!r}, steps=[{steps}])"

    @property
    def id(self) -> str:
        """The scorer's id (results are keyed by it)."""
        return self._id

    @property
    def name(self) -> str:
        """The display name (the id when none was given)."""
        return self._name

    @property
    def description(self) -> str:
        """What the scorer measures."""
        return self._description

    @property
    def judge(self) -> JudgeConfig | None:
        """The scorer-level judge, if any."""
        return self._judge

    @property
    def steps(self) -> list[StepInfo]:
        """The steps in the order a run executes them (preprocess, analyze, generate_score,
        generate_reason), whatever order the chain was built in."""
        return [_step_info(step) for step in self._steps]

    @property
    def has_judge_steps(self) -> bool:
        """True when at least one step is a prompt step (a run will call a judge)."""
        return any(step.is_prompt for step in self._steps)

    def preprocess(self, step: StepDefinition) -> Scorer:
        """A new scorer with a preprocess step (a function, or a PromptStep with a schema)."""
        return self._with_step("preprocess", step)

    def analyze(self, step: StepDefinition) -> Scorer:
        """A new scorer with an analyze step (a function, or a PromptStep with a schema)."""
        return self._with_step("analyze", step)

    def generate_score(self, step: StepDefinition) -> Scorer:
        """A new scorer with the generate_score step (a function returning a number, or a
        PromptStep whose judge answers `{"score": n}`)."""
        return self._with_step("generateScore", step)

    def generate_reason(self, step: StepDefinition) -> Scorer:
        """A new scorer with a generate_reason step (a function, or a PromptStep answered in
        free text)."""
        return self._with_step("generateReason", step)

    def _with_step(self, name: StepName, definition: StepDefinition) -> Scorer:
        _check_step(self._id, name, definition)
        if any(step.name == name for step in self._steps):
            raise ScorerConfigError(
                id="MASTR_SCORER_DUPLICATE_STEP",
                message=f"Scorer {self._id!r} already has a {_STEP_SPECS[name][0]} step",
                details={"scorerId": self._id, "step": name},
            )
        return Scorer(
            id=self._id,
            description=self._description,
            name=self._name,
            judge=self._judge,
            prepare_run=self._prepare_run,
            # Seed: run() executes the steps in this order, whatever the chain's order.
            steps=tuple(
                sorted((*self._steps, _Step(name, definition)), key=lambda s: _STEP_ORDER[s.name])
            ),
        )

    async def run(
        self,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
        run_id: str | None = None,
    ) -> ScorerRunResult:
        """Score one output. Raises `ScorerRunError` when a step fails."""
        pipeline = self._pipeline(output, input, ground_truth, request_context, run_id)
        try:
            awaitable = pipeline.send(None)
        except StopIteration as finished:
            result: ScorerRunResult = finished.value  # the pipeline's return value
            return result
        return cast(ScorerRunResult, await _finish_async(pipeline, awaitable))

    async def run_parts(
        self,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
    ) -> ScorerRunResult | RunParts:
        """`run` for a caller that may never need the result record (an experiment storing
        its row): a run of function steps alone that scored gives its `RunParts`, any other
        (a prompt step, not scorable) its `ScorerRunResult`. Raises as `run` does."""
        produced = self.start_parts(
            output=output, input=input, ground_truth=ground_truth, request_context=request_context
        )
        if isinstance(produced, RunParts | ScorerRunResult):
            return produced
        return await produced

    def start_parts(
        self,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
    ) -> ScorerRunResult | RunParts | Coroutine[Any, Any, ScorerRunResult | RunParts]:
        """`run_parts` begun here, without a coroutine of its own: a run with nothing to await
        (plain function steps) is finished and its `RunParts` or `ScorerRunResult` returned
        (or its error raised, as `run` raises it); any other returns the coroutine that
        finishes it. The experiment engine's hot loop, where a coroutine per run of a fast
        code scorer cost a share of the run itself."""
        pipeline = self._pipeline(output, input, ground_truth, request_context, None, parts=True)
        try:
            awaitable = pipeline.send(None)
        except StopIteration as finished:
            produced: ScorerRunResult | RunParts = finished.value  # the pipeline's return value
            return produced
        return _finish_async(pipeline, awaitable)

    def run_sync(
        self,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
        run_id: str | None = None,
    ) -> ScorerRunResult:
        """`run`, blocking. Scorers made only of plain functions run without any event loop."""
        pipeline = self._pipeline(output, input, ground_truth, request_context, run_id)
        try:
            awaitable = pipeline.send(None)
        except StopIteration as finished:
            result: ScorerRunResult = finished.value  # the pipeline's return value
            return result
        return cast(ScorerRunResult, run_coroutine_sync(_finish_async(pipeline, awaitable)))

    def _pipeline(
        self,
        output: Any,
        input: Any,
        ground_truth: Any,
        request_context: Any,
        run_id: str | None,
        parts: bool = False,
    ) -> Generator[Awaitable[Any], Any, ScorerRunResult | RunParts]:
        """The whole run as a generator that yields only what must really be awaited, so that
        synchronous scorers finish on the first `send` with no event loop at all. `parts`: a
        run of function steps alone that scored ends as its `RunParts` (`run_parts`)."""
        if not any(step.name == "generateScore" for step in self._steps):
            raise ScorerConfigError(
                id="MASTR_SCORER_FAILED_TO_RUN_MISSING_GENERATE_SCORE",
                message=f"Scorer {self._id!r} cannot run without a generate_score step",
                details={"scorerId": self._id, "steps": ", ".join(s.name for s in self._steps)},
            )
        # Validated construction: for pydantic-core it is cheaper than model_construct.
        # The fresh id is given at construction when no prepare_run can set one: a later
        # model_copy would cost as much as the run of a fast code scorer's step.
        if not run_id and self._prepare_run is None:
            run_id = _fresh_run_id()
        run = ScorerRun(
            run_id=run_id or "",
            input=input,
            output=output,
            ground_truth=ground_truth,
            request_context=request_context,
        )
        if self._prepare_run is not None:
            prepared = self._prepare_run(run)
            if inspect.isawaitable(prepared):
                prepared = yield prepared
            run = _as_run(prepared, self._id)
        if not run.run_id:
            run = run.model_copy(update={"run_id": _fresh_run_id()})
        state = _RunState()
        for step in self._steps:
            is_prompt = step.is_prompt
            if is_prompt:
                warm_up()  # litellm's first import takes seconds: keep it off the step's clock
            started = time.perf_counter() if is_prompt else 0.0
            context = StepContext(
                run,
                StepResults(state.values),
                state.values.get("generateScore") if step.name == "generateReason" else None,
            )
            definition = step.definition
            try:
                if isinstance(definition, PromptStep):
                    kind = _STEP_SPECS[step.name][1]
                    outcome: PromptStepOutcome = yield run_prompt_step(
                        definition, kind, context, self._judge, started
                    )
                    value = outcome.value
                else:
                    value = definition(context)
                    # The exact-type test spares the (slow) awaitable check for plain results.
                    if type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
                        value = yield value
                    if step.name == "generateScore" and not isinstance(value, NotScorable):
                        _check_score(value)
            except JudgeStepFailed as failure:
                error = self._run_error(run, state, step.name, failure.cause, failure.execution)
                raise error from failure.cause
            except Exception as cause:
                raise self._run_error(run, state, step.name, cause, None) from cause
            if isinstance(value, NotScorable):
                return state.result(run, NotScorableInfo(step=step.name, reason=value.reason))
            state.complete(step.name, value, outcome if is_prompt else None)
        if parts and not state.judge:
            return RunParts(run, state.values)
        return state.result(run)

    def _run_error(
        self,
        run: ScorerRun,
        state: _RunState,
        failed_step: StepName,
        cause: BaseException,
        failed_execution: JudgeExecution | None,
    ) -> ScorerRunError:
        return ScorerRunError(
            scorer_id=self._id,
            steps=[step.name for step in self._steps],
            failed_step=failed_step,
            completed_steps=state.completed,
            result=state.snapshot(run, failed_step, failed_execution),
            cause=cause,
        )


class _RunState:
    """What the steps of one run produced so far."""

    __slots__ = ("completed", "judge", "prompts", "values")

    def __init__(self) -> None:
        self.values: dict[StepName, Any] = {}
        self.prompts: dict[StepName, str] = {}
        self.judge: dict[StepName, list[JudgeExecution]] = {}
        self.completed: list[StepName] = []

    def complete(self, name: StepName, value: Any, outcome: PromptStepOutcome | None) -> None:
        self.values[name] = value
        self.completed.append(name)
        if outcome is not None:
            self.prompts[name] = outcome.prompt
            self.judge.setdefault(name, []).append(outcome.execution)

    def _fields(self, judge: dict[StepName, list[JudgeExecution]]) -> dict[str, Any]:
        values, prompts = self.values, self.prompts
        return {
            "score": values.get("generateScore"),
            "reason": values.get("generateReason"),
            "preprocess_step_result": values.get("preprocess"),
            "analyze_step_result": values.get("analyze"),
            "preprocess_prompt": prompts.get("preprocess"),
            "analyze_prompt": prompts.get("analyze"),
            "generate_score_prompt": prompts.get("generateScore"),
            "generate_reason_prompt": prompts.get("generateReason"),
            "judge": {
                name: JudgeStepResult(executions=tuple(executions))
                for name, executions in judge.items()
            }
            or None,
        }

    def result(
        self, run: ScorerRun, not_scorable: NotScorableInfo | None = None
    ) -> ScorerRunResult:
        fields = self._fields(self.judge)
        if not_scorable is not None:
            fields["score"] = None
            fields["not_scorable"] = not_scorable
        return ScorerRunResult(**_run_fields(run), **fields)

    def snapshot(
        self, run: ScorerRun, failed_step: StepName, failed_execution: JudgeExecution | None
    ) -> ScorerRunResult | None:
        """The failure snapshot: None unless a step result, a prompt or a judge execution
        exists (a step that returned None produced nothing). The failed step's own prompt
        lives only in its failed execution."""
        judge = {name: list(executions) for name, executions in self.judge.items()}
        if failed_execution is not None:
            judge.setdefault(failed_step, []).append(failed_execution)
        produced = any(value is not None for value in self.values.values())
        if not produced and not self.prompts and not judge:
            return None
        return ScorerRunResult(**_run_fields(run), **self._fields(judge))


class RunParts:
    """What a run of function steps alone produced, kept as the pipeline left it: its
    `ScorerRunResult` is built only when asked for (`record`), so a caller that stores the run
    straight from its parts (an experiment's row) never builds one. Its `fields` are the values
    the record would hold, by field name, in the record's order."""

    __slots__ = ("_record", "run", "values")

    judge: None = None
    """A run of function steps has no judge executions (the record's `judge`)."""

    def __init__(self, run: ScorerRun, values: dict[StepName, Any]) -> None:
        self.run = run
        """The run as the steps saw it (after `prepare_run`)."""
        self.values = values
        """The steps' results by step name."""
        self._record: ScorerRunResult | None = None

    @property
    def score(self) -> Any:
        """The generate_score result."""
        return self.values.get("generateScore")

    @property
    def reason(self) -> Any:
        """The generate_reason result, if that step exists."""
        return self.values.get("generateReason")

    def record(self) -> ScorerRunResult:
        """The run's `ScorerRunResult` (built once)."""
        if self._record is None:
            self._record = ScorerRunResult(**self.fields())
        return self._record

    def result_json(self, *, without_item_texts: bool = False) -> str:
        """`core.run_results.fields_json(self.fields(), ...)`, the stored JSON of the run's
        result, built straight from the run and the step results (no dict of every field
        first: a stored row of a fast code scorer is made once per run)."""
        # The run's fields read from its __dict__: a pydantic record's attribute goes
        # through its __getattr__ hook first.
        run, values = self.run.__dict__, self.values
        fields: dict[str, Any] = {"runId": run["run_id"]}
        if not without_item_texts:
            for name, alias in _TEXT_ALIASES:
                value = run[name]
                if value is not None:
                    fields[alias] = value
        for step, alias in _STEP_RESULT_ALIASES:
            value = values.get(step)
            if value is not None:
                fields[alias] = value
        return aliased_json(fields)

    def fields(self) -> dict[str, Any]:
        """The record's field values by name, as `ScorerRunResult(**fields)` holds them (its
        fields that are not typed `Any` are the ones a function step never sets)."""
        values = self.values
        return {
            **_run_fields(self.run),
            "score": values.get("generateScore"),
            "reason": values.get("generateReason"),
            "preprocess_step_result": values.get("preprocess"),
            "analyze_step_result": values.get("analyze"),
            "preprocess_prompt": None,
            "analyze_prompt": None,
            "generate_score_prompt": None,
            "generate_reason_prompt": None,
            "judge": None,
            "not_scorable": None,
        }


_TEXT_ALIASES = (
    ("input", "input"),
    ("output", "output"),
    ("ground_truth", "groundTruth"),
    ("request_context", "requestContext"),
)
"""The run's texts a stored result echoes, by field name and JSON alias."""

_STEP_RESULT_ALIASES: tuple[tuple[StepName, str], ...] = (
    ("generateScore", "score"),
    ("generateReason", "reason"),
    ("preprocess", "preprocessStepResult"),
    ("analyze", "analyzeStepResult"),
)
"""The step results a run of function steps stores, by the JSON alias of the result's field
that holds each, in the record's order."""


def _run_fields(run: ScorerRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "input": run.input,
        "output": run.output,
        "ground_truth": run.ground_truth,
        "request_context": run.request_context,
    }


async def _finish_async(
    pipeline: Generator[Awaitable[Any], Any, ScorerRunResult | RunParts],
    awaitable: Awaitable[Any],
) -> ScorerRunResult | RunParts:
    """Drive the pipeline generator on from its first real await."""
    while True:
        try:
            value = await awaitable
        except Exception as error:
            step: Callable[[Any], Awaitable[Any]] = pipeline.throw
            argument: Any = error
        else:
            step = pipeline.send
            argument = value
        try:
            awaitable = step(argument)
        except StopIteration as finished:
            result: ScorerRunResult | RunParts = finished.value  # the pipeline's value
            return result


def _as_run(prepared: Any, scorer_id: str) -> ScorerRun:
    if isinstance(prepared, ScorerRun):
        return prepared
    if isinstance(prepared, Mapping):
        return ScorerRun.model_validate(dict(prepared))
    raise ScorerConfigError(
        id="MASTR_SCORER_INVALID_PREPARED_RUN",
        message=f"prepare_run of scorer {scorer_id!r} must return a ScorerRun or a dict, "
        f"not {type(prepared).__name__}",
        details={"scorerId": scorer_id},
    )


def _check_score(value: Any) -> None:
    if type(value) is float and math.isfinite(value):  # the common case, without the ABC check
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"generate_score must return a number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"generate_score returned {value}, which is not a finite number")


def _check_config(id: Any, description: Any, name: Any, judge: Any, prepare_run: Any) -> None:
    if not isinstance(id, str) or not id.strip():
        raise ScorerConfigError(
            id="MASTR_SCORER_FAILED_TO_CREATE_MISSING_ID",
            message="Scorers must have an id (a non-empty string)",
        )
    problems = []
    if not isinstance(description, str):
        problems.append(f"description must be a string, not {type(description).__name__}")
    if name is not None and not isinstance(name, str):
        problems.append(f"name must be a string, not {type(name).__name__}")
    if judge is not None and not isinstance(judge, JudgeConfig):
        problems.append(f"judge must be a JudgeConfig, not {type(judge).__name__}")
    if prepare_run is not None and not callable(prepare_run):
        problems.append("prepare_run must be a function taking the run")
    if problems:
        raise ScorerConfigError(
            id="MASTR_SCORER_FAILED_TO_CREATE_INVALID_CONFIG",
            message=f"Scorer {id!r}: " + "; ".join(problems),
            details={"scorerId": id},
        )


def _check_step(scorer_id: str, name: StepName, definition: Any) -> None:
    method = _STEP_SPECS[name][0]
    problem = None
    if isinstance(definition, PromptStep):
        has_schema = definition.output_schema is not None
        if name in ("preprocess", "analyze") and not has_schema:
            problem = "a prompt step here needs an output_schema (the shape of the judge's answer)"
        elif name == "generateScore" and has_schema:
            problem = 'a prompt step here always answers {"score": <number>}: drop output_schema'
        elif name == "generateReason" and has_schema:
            problem = "a prompt step here answers in free text: drop output_schema"
    elif not callable(definition):
        problem = f"expected a function taking ctx or a PromptStep, not {type(definition).__name__}"
    elif not _takes_one_argument(definition):
        problem = "a step function must take exactly one argument, ctx"
    if problem:
        raise ScorerConfigError(
            id="MASTR_SCORER_INVALID_STEP",
            message=f"Scorer {scorer_id!r}, {method} step: {problem}",
            details={"scorerId": scorer_id, "step": name},
        )


def _takes_one_argument(function: Callable[..., Any]) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature: let them be
        return True
    try:
        signature.bind(None)
    except TypeError:
        return False
    return True


_Function = TypeVar("_Function", bound=Callable[..., Any])


def described(function: _Function, description: str) -> _Function:
    """`function` itself, given the `description` attribute that the catalog shows for its
    step (`StepInfo.description`); the same as setting the attribute, which mypy refuses on a
    function."""
    function.__dict__["description"] = description
    return function


def _step_info(step: _Step) -> StepInfo:
    if isinstance(step.definition, PromptStep):
        return StepInfo(step.name, "prompt", step.definition.description)
    return StepInfo(step.name, "function", getattr(step.definition, "description", None))


def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    prepare_run: PrepareRun | None = None,
) -> Scorer:
    """A new scorer with no steps; chain `.preprocess`, `.analyze`, `.generate_score` (required)
    and `.generate_reason` on it."""
    return Scorer(id=id, description=description, name=name, judge=judge, prepare_run=prepare_run)
