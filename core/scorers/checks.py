"""Checks: small pass/fail scorers on the output text or its tool calls (docs/scorers.md, Checks).

Each factory returns a scorer that scores 1 (pass) or 0 (fail) from a single preprocess step,
whose result says what was compared; `similarity` without a threshold scores the raw Dice
similarity instead. The text checks fit table data (a column of outputs); the tool checks
read Mastra messages carrying tool invocations.

| factory | reads | passes when |
| --- | --- | --- |
| `includes(s)`, `excludes(s)` | all output messages, joined by a space | `s` is (not) in it |
| `equals(s)` | assistant messages, joined with nothing | the text equals `s` |
| `matches(re)` | assistant messages, joined with nothing | the regex matches (`exact`: all of it) |
| `similarity(s)` | assistant messages, joined with a space | Dice score >= `threshold` |
| `called_tool(name)` | tool calls | `name` was called at least `times` times |
| `did_not_call(name)` | tool calls | `name` was never called |
| `tool_order(names)` | tool calls | `names` is a subsequence of the calls |
| `max_tool_calls(n)` | tool calls | at most `n` calls |
| `used_no_tools()` | tool calls | no call |
| `no_tool_errors()` | every invocation | none failed |

A plain string output counts as one assistant message with no tool calls. Tool calls are the
invocations in state `result`, `call` or `output-error` (a call that threw still counts). Every
factory takes an optional `id` so that several checks of one kind can run side by side.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field

from core.scorers._options import OptionType, ScorerOptions
from core.scorers._registry import PrebuiltScorer
from core.scorers._text import assistant_texts, side_texts, tool_invocations
from core.scorers.content_similarity import dice_similarity
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRIES",
    "called_tool",
    "did_not_call",
    "equals",
    "excludes",
    "includes",
    "matches",
    "max_tool_calls",
    "no_tool_errors",
    "similarity",
    "tool_order",
    "used_no_tools",
]

_CALL_STATES = frozenset({"result", "call", "output-error"})
_ERROR_STATES = frozenset({"call", "output-error"})


def _require_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _check(
    kind: str,
    id: str | None,
    description: str,
    analyse: Callable[[Any], dict[str, Any]],
    flag: str | Callable[[dict[str, Any]], float] = "passed",
) -> Scorer:
    """A one-step scorer: preprocess = `analyse(output)`; score = 1 if its `flag` field is
    true, else 0 (or `flag(result)` when `flag` is a function)."""

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        return analyse(ctx.run.output)

    def generate_score(ctx: StepContext) -> float:
        result = ctx.results.preprocess_step_result
        if callable(flag):
            return flag(result)
        return 1.0 if result[flag] else 0.0

    return (
        create_scorer(id=id or f"checks.{kind}", name=f"Check: {kind}", description=description)
        .preprocess(preprocess)
        .generate_score(generate_score)
    )


def _fold(text: str, ignore_case: bool) -> str:
    return text.lower() if ignore_case else text


def includes(value: str, *, ignore_case: bool = True, id: str | None = None) -> Scorer:
    """Passes when the output contains `value` (case-insensitive by default)."""
    target = _fold(_require_str(value, "value"), ignore_case)

    def analyse(output: Any) -> dict[str, Any]:
        text = _fold(" ".join(side_texts(output)), ignore_case)
        return {"output": text, "target": target, "found": target in text}

    return _check("includes", id, f"Output contains {value!r}", analyse, "found")


def excludes(value: str, *, ignore_case: bool = True, id: str | None = None) -> Scorer:
    """Passes when the output does not contain `value` (case-insensitive by default)."""
    target = _fold(_require_str(value, "value"), ignore_case)

    def analyse(output: Any) -> dict[str, Any]:
        text = _fold(" ".join(side_texts(output)), ignore_case)
        excluded = target not in text
        return {"output": text, "target": target, "excluded": excluded}

    return _check("excludes", id, f"Output does not contain {value!r}", analyse, "excluded")


def equals(value: str, *, ignore_case: bool = True, id: str | None = None) -> Scorer:
    """Passes when the assistant's text equals `value` (case-insensitive by default)."""
    target = _fold(_require_str(value, "value"), ignore_case)

    def analyse(output: Any) -> dict[str, Any]:
        text = _fold("".join(assistant_texts(output)), ignore_case)
        return {"output": text, "target": target, "isEqual": text == target}

    return _check("equals", id, f"Output equals {value!r}", analyse, "isEqual")


_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))


def _show_pattern(pattern: re.Pattern[str]) -> str:
    """The pattern as a JavaScript regex literal, as Mastra reports it (`/src/flags`)."""
    flags = "".join(letter for flag, letter in _FLAG_LETTERS if pattern.flags & flag)
    return f"/{pattern.pattern}/{flags}"


def matches(
    pattern: str | re.Pattern[str], *, exact: bool = False, id: str | None = None
) -> Scorer:
    """Passes when the regex matches the assistant's text (with `exact`, the whole text)."""
    compiled = (
        pattern if isinstance(pattern, re.Pattern) else re.compile(_require_str(pattern, "pattern"))
    )
    test = compiled.fullmatch if exact else compiled.search

    def analyse(output: Any) -> dict[str, Any]:
        text = "".join(assistant_texts(output))
        found = test(text) is not None
        return {"output": text, "pattern": _show_pattern(compiled), "matched": found}

    return _check("matches", id, f"Output matches {_show_pattern(compiled)}", analyse, "matched")


def similarity(
    value: str,
    *,
    ignore_case: bool = True,
    threshold: float | None = None,
    id: str | None = None,
) -> Scorer:
    """Dice similarity of the assistant's text to `value`; with `threshold`, pass/fail on it."""
    target = _fold(_require_str(value, "value"), ignore_case)

    def analyse(output: Any) -> dict[str, Any]:
        text = _fold(" ".join(assistant_texts(output)), ignore_case)
        result: dict[str, Any] = {"output": text, "target": target}
        result["score"] = dice_similarity(text, target)
        if threshold is not None:
            result["threshold"] = threshold
        return result

    def passes(result: dict[str, Any]) -> float:
        if threshold is None:
            score: float = result["score"]
            return score
        return 1.0 if result["score"] >= threshold else 0.0

    return _check("similarity", id, f"Output is similar to {value!r}", analyse, passes)


def _called_tools(output: Any) -> list[str]:
    """Names of the output's tool calls, in call order."""
    return [
        invocation.get("toolName", "")
        for invocation in tool_invocations(output)
        if invocation.get("state") in _CALL_STATES
    ]


def called_tool(name: str, *, times: int = 1, id: str | None = None) -> Scorer:
    """Passes when tool `name` was called at least `times` times."""
    _require_str(name, "name")

    def analyse(output: Any) -> dict[str, Any]:
        count = _called_tools(output).count(name)
        return {
            "toolName": name,
            "expectedTimes": times,
            "actualCount": count,
            "passed": count >= times,
        }

    return _check("calledTool", id, f"Called tool {name!r} at least {times} time(s)", analyse)


def did_not_call(name: str, *, id: str | None = None) -> Scorer:
    """Passes when tool `name` was never called."""
    _require_str(name, "name")

    def analyse(output: Any) -> dict[str, Any]:
        count = _called_tools(output).count(name)
        return {"toolName": name, "count": count, "passed": count == 0}

    return _check("didNotCall", id, f"Did not call tool {name!r}", analyse)


def _is_subsequence(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Greedy scan: each expected name is found after the previous one."""
    remaining = iter(actual)
    return all(any(name == called for called in remaining) for name in expected)


def tool_order(names: Sequence[str], *, id: str | None = None) -> Scorer:
    """Passes when the tools `names` were called in this order (other calls may come between)."""
    expected = [_require_str(name, "each tool name") for name in names]

    def analyse(output: Any) -> dict[str, Any]:
        actual = _called_tools(output)
        return {
            "actualTools": actual,
            "expectedOrder": expected,
            "passed": _is_subsequence(expected, actual),
        }

    return _check("toolOrder", id, f"Called tools in order {expected}", analyse)


def max_tool_calls(limit: int, *, id: str | None = None) -> Scorer:
    """Passes when there were at most `limit` tool calls."""

    def analyse(output: Any) -> dict[str, Any]:
        count = len(_called_tools(output))
        return {"count": count, "max": limit, "passed": count <= limit}

    return _check("maxToolCalls", id, f"At most {limit} tool call(s)", analyse)


def used_no_tools(*, id: str | None = None) -> Scorer:
    """Passes when no tool was called."""

    def analyse(output: Any) -> dict[str, Any]:
        count = len(_called_tools(output))
        return {"count": count, "passed": count == 0}

    return _check("usedNoTools", id, "No tool calls", analyse)


def _failed(invocation: Mapping[str, Any]) -> bool:
    result = invocation.get("result")
    return (
        invocation.get("state") in _ERROR_STATES
        or invocation.get("isError") is True
        or (isinstance(result, Mapping) and bool(result.get("error")))
    )


def no_tool_errors(*, id: str | None = None) -> Scorer:
    """Passes when no tool invocation failed (a call left without result counts as failed)."""

    def analyse(output: Any) -> dict[str, Any]:
        invocations = tool_invocations(output)
        errors = sum(1 for invocation in invocations if _failed(invocation))
        return {"errorCount": errors, "totalCalls": len(invocations), "passed": errors == 0}

    return _check("noToolErrors", id, "No tool errors", analyse)


# ---- catalog ----

CheckId = Annotated[
    str | None, Field(description="Scorer id, to run several checks of one kind side by side.")
]
IgnoreCase = Annotated[bool, Field(description="Compare case-insensitively.")]
ToolName = Annotated[str, Field(description="The tool name.")]


class IdOptions(ScorerOptions):
    """Options of the checks that take nothing else."""

    id: CheckId = None


class IncludesOptions(ScorerOptions):
    """Options of `includes`."""

    value: str
    """Text the output must contain."""
    ignore_case: IgnoreCase = True
    id: CheckId = None


class ExcludesOptions(ScorerOptions):
    """Options of `excludes`."""

    value: str
    """Text the output must not contain."""
    ignore_case: IgnoreCase = True
    id: CheckId = None


class EqualsOptions(ScorerOptions):
    """Options of `equals`."""

    value: str
    """The exact expected answer."""
    ignore_case: IgnoreCase = True
    id: CheckId = None


class MatchesOptions(ScorerOptions):
    """Options of `matches`."""

    pattern: Annotated[str | re.Pattern[str], OptionType("regex")]
    """A Python regular expression."""
    exact: bool = False
    """The whole answer must match."""
    id: CheckId = None


class SimilarityOptions(ScorerOptions):
    """Options of `similarity`."""

    value: str
    """The text to compare with."""
    ignore_case: IgnoreCase = True
    threshold: float | None = None
    """Score 1 at or above it, else 0; raw score when unset."""
    id: CheckId = None


class CalledToolOptions(ScorerOptions):
    """Options of `called_tool`."""

    name: ToolName
    times: int = 1
    """Minimum number of calls."""
    id: CheckId = None


class DidNotCallOptions(ScorerOptions):
    """Options of `did_not_call`."""

    name: ToolName
    id: CheckId = None


class ToolOrderOptions(ScorerOptions):
    """Options of `tool_order`."""

    names: list[str]
    """Tool names in expected order."""
    id: CheckId = None


class MaxToolCallsOptions(ScorerOptions):
    """Options of `max_tool_calls`."""

    limit: int
    """Maximum number of tool calls."""
    id: CheckId = None


def _entry(
    kind: str,
    name: str,
    description: str,
    factory: Callable[..., Scorer],
    options: type[ScorerOptions],
) -> PrebuiltScorer:
    scorer_id = f"checks.{kind}"
    return PrebuiltScorer(
        scorer_id, f"Check: {name}", description, factory, False, options, COMPARES[scorer_id]
    )


CATALOG_ENTRIES: tuple[PrebuiltScorer, ...] = (
    _entry(
        "includes",
        "includes",
        "1 when the output contains the text, else 0.",
        includes,
        IncludesOptions,
    ),
    _entry(
        "excludes",
        "excludes",
        "1 when the output does not contain the text, else 0.",
        excludes,
        ExcludesOptions,
    ),
    _entry(
        "equals",
        "equals",
        "1 when the assistant's answer equals the text, else 0.",
        equals,
        EqualsOptions,
    ),
    _entry(
        "matches",
        "matches",
        "1 when the assistant's answer matches the regular expression, else 0.",
        matches,
        MatchesOptions,
    ),
    _entry(
        "similarity",
        "similarity",
        "Character similarity (Dice) of the assistant's answer to the text; pass/fail with a"
        " threshold.",
        similarity,
        SimilarityOptions,
    ),
    _entry(
        "calledTool",
        "called tool",
        "1 when the tool was called at least the given number of times, else 0.",
        called_tool,
        CalledToolOptions,
    ),
    _entry(
        "didNotCall",
        "did not call",
        "1 when the tool was never called, else 0.",
        did_not_call,
        DidNotCallOptions,
    ),
    _entry(
        "toolOrder",
        "tool order",
        "1 when the tools were called in the given order (others may come between), else 0.",
        tool_order,
        ToolOrderOptions,
    ),
    _entry(
        "maxToolCalls",
        "max tool calls",
        "1 when there were at most the given number of tool calls, else 0.",
        max_tool_calls,
        MaxToolCallsOptions,
    ),
    _entry(
        "usedNoTools",
        "used no tools",
        "1 when no tool was called, else 0.",
        used_no_tools,
        IdOptions,
    ),
    _entry(
        "noToolErrors",
        "no tool errors",
        "1 when no tool invocation failed, else 0.",
        no_tool_errors,
        IdOptions,
    ),
)
"""The catalog entries of the checks (`checks.includes`, ...), in this order."""
