"""Checks: Mastra's numbers and preprocess results on every checks.* vector."""

from __future__ import annotations

import re
from typing import Any

import pytest

from core.scorers import checks

from ._vectors import vector_cases

_FACTORIES = {
    "checks.includes": checks.includes,
    "checks.excludes": checks.excludes,
    "checks.equals": checks.equals,
    "checks.matches": checks.matches,
    "checks.similarity": checks.similarity,
    "checks.calledTool": checks.called_tool,
    "checks.didNotCall": checks.did_not_call,
    "checks.toolOrder": checks.tool_order,
    "checks.maxToolCalls": checks.max_tool_calls,
    "checks.usedNoTools": checks.used_no_tools,
    "checks.noToolErrors": checks.no_tool_errors,
}
_OPTION_NAMES = {"ignoreCase": "ignore_case", "exact": "exact", "threshold": "threshold"}
_OPTION_NAMES |= {"times": "times"}


def _build(case: dict[str, Any]) -> Any:
    """The check a vector describes: its args are Mastra's (a regex as {regex, flags})."""
    args = list(case["options"]["args"])
    kwargs: dict[str, Any] = {}
    if args and isinstance(args[-1], dict) and "regex" not in args[-1]:
        kwargs = {_OPTION_NAMES[key]: value for key, value in args.pop().items()}
    args = [re.compile(arg["regex"]) if isinstance(arg, dict) else arg for arg in args]
    return _FACTORIES[case["scorer"]](*args, **kwargs)


def _output(case: dict[str, Any]) -> Any:
    """The vector's output as one assistant message; tool calls go on that first message."""
    if not case.get("tool_calls"):
        return case["output"]
    invocations = [
        {"toolCallId": f"call-{index}", "args": {}, **call}
        for index, call in enumerate(case["tool_calls"])
    ]
    content = {
        "format": 2,
        "parts": [{"type": "text", "text": case["output"]}],
        "toolInvocations": invocations,
    }
    return [{"role": "assistant", "content": content}]


@pytest.mark.parametrize("case", vector_cases(*_FACTORIES))
def test_mastra_vector(case: dict[str, Any]) -> None:
    result = _build(case).run_sync(input=case["input"], output=_output(case))
    assert result.score == pytest.approx(case["expected_score"], abs=1e-9)
    assert result.preprocess_step_result == case["expected_intermediate"]["preprocessStepResult"]


def test_checks_read_assistant_messages_only_where_mastra_does() -> None:
    output = [
        {"role": "user", "content": "rainy"},
        {"role": "assistant", "content": "sunny"},
    ]
    assert checks.includes("rainy").run_sync(output=output).score == 1.0  # every message
    assert checks.equals("sunny").run_sync(output=output).score == 1.0  # assistant only


def test_tool_invocations_in_parts_are_deduplicated() -> None:
    call = {"toolCallId": "1", "toolName": "search", "state": "result"}
    output = [
        {
            "role": "assistant",
            "content": {
                "toolInvocations": [call],
                "parts": [{"type": "tool-invocation", "toolInvocation": call}],
            },
        }
    ]
    assert checks.called_tool("search", times=2).run_sync(output=output).score == 0.0
    assert checks.max_tool_calls(1).run_sync(output=output).score == 1.0


def test_partial_call_is_not_a_call() -> None:
    call = {"toolCallId": "1", "toolName": "search", "state": "partial-call"}
    output = [{"role": "assistant", "content": {"toolInvocations": [call]}}]
    assert checks.used_no_tools().run_sync(output=output).score == 1.0


def test_matches_exact_and_similarity_threshold() -> None:
    assert checks.matches(r"\d+", exact=True).run_sync(output="123").score == 1.0
    assert checks.matches(r"\d+", exact=True).run_sync(output="123a").score == 0.0
    assert checks.similarity("hello world", threshold=0.5).run_sync(output="hello").score == 1.0


def test_custom_ids_and_bad_arguments() -> None:
    assert checks.includes("x", id="mentions-x").id == "mentions-x"
    assert checks.includes("x").id == "checks.includes"
    with pytest.raises(TypeError, match="value must be a string"):
        checks.includes(3)  # type: ignore[arg-type]
