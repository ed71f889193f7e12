"""`not_scorable(...)`: the pipeline stops, no score, and the result says which step bailed."""

from __future__ import annotations

from typing import Any

import pytest

from core import NotScorableInfo, create_scorer, not_scorable


def test_preprocess_not_scorable_skips_later_steps() -> None:
    calls: list[str] = []
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: not_scorable("no tool call to judge"))
        .generate_score(lambda ctx: calls.append("score") or 1)
        .generate_reason(lambda ctx: calls.append("reason") or "r")
    )
    result = scorer.run_sync(output="x")
    assert calls == []
    assert result.score is None
    assert result.reason is None
    assert result.not_scorable == NotScorableInfo(step="preprocess", reason="no tool call to judge")
    as_dict = result.to_dict()
    assert "score" not in as_dict
    assert as_dict["notScorable"] == {"step": "preprocess", "reason": "no tool call to judge"}


def test_results_before_the_bailing_step_are_kept_and_its_own_is_not() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"kept": True})
        .analyze(lambda ctx: not_scorable())
        .generate_score(lambda ctx: 1)
    )
    result = scorer.run_sync(output="x")
    assert result.preprocess_step_result == {"kept": True}
    assert result.analyze_step_result is None
    assert result.to_dict()["notScorable"] == {"step": "analyze"}


def test_generate_score_may_bail_too() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: not_scorable("n/a"))
    result = scorer.run_sync(output="x")
    assert result.not_scorable is not None and result.not_scorable.step == "generateScore"
    assert result.score is None


def test_a_dict_with_a_reason_key_is_not_the_sentinel() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"reason": "looks like it"})
        .generate_score(lambda ctx: 1)
    )
    result = scorer.run_sync(output="x")
    assert result.score == 1 and result.not_scorable is None


def test_reason_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="takes a string"):
        not_scorable(3)  # type: ignore[arg-type]


async def test_async_step_returning_not_scorable() -> None:
    async def preprocess(ctx: Any) -> Any:
        return not_scorable("async bail")

    scorer = (
        create_scorer(id="s", description="d").preprocess(preprocess).generate_score(lambda ctx: 1)
    )
    result = await scorer.run(output="x")
    assert result.not_scorable == NotScorableInfo(step="preprocess", reason="async bail")
