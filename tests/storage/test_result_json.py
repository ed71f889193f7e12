"""`result_json` (the stored text of a run's result, encoded once on the hot path) gives the
text the exact path gives (`to_dict` then `json.dumps`), whatever the step results hold."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest

from core.errors import ScorerRunError
from core.run_results import ITEM_TEXT_KEYS, ScorerRunResult, result_json
from core.scoring import RunParts, create_scorer


class _Keywords(set[str]):
    """A scorer's own set type (keyword coverage keeps its keywords in one)."""


def _exact(result: ScorerRunResult, *, without_item_texts: bool = False) -> str:
    ready = result.to_dict()
    if without_item_texts:
        ready = {key: value for key, value in ready.items() if key not in ITEM_TEXT_KEYS}
    return json.dumps(ready, ensure_ascii=False, allow_nan=False, default=str)


def _same_layout(text: str) -> str:
    """orjson's compact text with `json.dumps`'s separators (the values and their order kept)."""
    return json.dumps(json.loads(text), ensure_ascii=False)


@pytest.mark.parametrize(
    "step_result",
    [
        {"keywords": _Keywords({"river", "paris", "3"})},
        {"keywords": frozenset({"b", "a"}), "empty": set()},
        {"numbers": {10, 9, 100}},  # json_ready's order: by text, not by value
        {"mixed": {1, "1", 2.5}},
        {"nested": [{"deep": _Keywords({"z", "y"})}], "none": None},
        {"tuple": ("x", 1), "text": 'é \u2028 "quoted"'},
    ],
)
def test_result_json_is_the_exact_text(step_result: dict[str, Any]) -> None:
    result = ScorerRunResult(
        run_id="r1",
        input="question",
        output="answer",
        score=0.5,
        preprocess_step_result=step_result,
        analyze_step_result={"total": 3},
    )
    assert _same_layout(result_json(result)) == _exact(result)
    assert _same_layout(result_json(result, without_item_texts=True)) == _exact(
        result, without_item_texts=True
    )
    assert "question" not in result_json(result, without_item_texts=True)


@pytest.mark.parametrize(
    ("step_result", "reason", "ground_truth", "context"),
    [
        ({"keywords": _Keywords({"river", "paris", "3"})}, None, None, None),
        ({"numbers": {10, 9, 100}, "none": None}, "because é", "truth", {"k": [1, 2]}),
        (None, "only a reason", {"nested": {"a"}}, None),
        ({"ratio": float("nan"), "big": 2**70}, None, None, None),  # the exact (slow) path
    ],
)
def test_a_function_runs_parts_give_its_records_text(
    step_result: Any, reason: str | None, ground_truth: Any, context: Any
) -> None:
    """`RunParts.result_json` (built from the run and the step results, never a record) is the
    text of the record the parts make, with and without the item's texts."""
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: step_result)
        .analyze(lambda ctx: {"total": 3})
        .generate_score(lambda ctx: 1)  # an int: the record keeps it as it is
    )
    if reason is not None:
        scorer = scorer.generate_reason(lambda ctx: reason)
    parts = scorer.start_parts(
        input="question", output="answer", ground_truth=ground_truth, request_context=context
    )
    assert isinstance(parts, RunParts)
    for without in (False, True):
        assert parts.result_json(without_item_texts=without) == result_json(
            parts.record(), without_item_texts=without
        )
    assert "question" not in parts.result_json(without_item_texts=True)


def test_a_run_awaiting_something_is_finished_by_its_coroutine() -> None:
    """`start_parts` finishes a run of plain functions at once; one with an async step gives
    the coroutine that finishes it, and that run's error is raised when awaited."""

    async def slow_score(ctx: Any) -> float:
        await asyncio.sleep(0)
        return 0.25

    async def broken(ctx: Any) -> float:
        await asyncio.sleep(0)
        raise ValueError("no score today")

    pending = create_scorer(id="s", description="d").generate_score(slow_score)
    started = pending.start_parts(output="x")
    assert inspect.iscoroutine(started)
    produced = asyncio.run(started)
    assert isinstance(produced, RunParts) and produced.score == 0.25
    failing = create_scorer(id="s", description="d").generate_score(broken).start_parts(output="x")
    assert inspect.iscoroutine(failing)
    with pytest.raises(ScorerRunError, match="no score today"):
        asyncio.run(failing)
