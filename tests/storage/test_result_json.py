"""`result_json` (the stored text of a run's result, encoded once on the hot path) gives the
text the exact path gives (`to_dict` then `json.dumps`), whatever the step results hold."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.run_results import ITEM_TEXT_KEYS, ScorerRunResult, result_json


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
