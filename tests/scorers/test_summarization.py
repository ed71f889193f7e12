"""Summarization (`summarization-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers.summarization import create_summarization_scorer, summarization_score

SOURCE = "The council approved a park in March. It opens in 2026 and costs 2 million euros."
ANSWERS = {
    "preprocess": {
        "alignment": [
            {"claim": "A park was approved.", "supported": True, "reason": "m"},
            {"claim": "It opens in 2026.", "supported": True, "reason": "m"},
        ],
        "questions": ["Was a park approved?", "Does it open in 2026?", "Does it cost 2M?"],
    },
    "analyze": {
        "coverage": [
            {"question": "Was a park approved?", "answered": True, "reason": "m"},
            {"question": "Does it open in 2026?", "answered": True, "reason": "m"},
            {"question": "Does it cost 2M?", "answered": False, "reason": "m"},
        ]
    },
}
RUN = {"input": SOURCE, "output": "A park, approved in March, opens in 2026."}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_summarization_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.67  # min(alignment 1, coverage 2/3)
    preprocess, analyze, _ = harness.server.prompts()
    assert f"<source>\n{SOURCE}" in preprocess and "up to 10 closed questions" in preprocess
    assert "<summary>\nA park, approved in March, opens in 2026." in analyze
    assert SOURCE not in analyze  # the coverage judge sees only the summary and the questions
    assert "Does it cost 2M?" in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_summarization_scorer(harness.judge), ANSWERS, **RUN)


def test_max_questions_limits_the_questions_shown_and_counted(harness: Any) -> None:
    scorer = create_summarization_scorer(harness.judge, max_questions=2)
    assert harness.run(scorer, ANSWERS, **RUN).score == 1
    preprocess, analyze, _ = harness.server.prompts()
    assert "up to 2 closed questions" in preprocess
    assert "Does it cost 2M?" not in analyze


def test_source_option_and_extractor(harness: Any) -> None:
    harness.run(create_summarization_scorer(harness.judge, source="Option source."), ANSWERS, **RUN)
    assert "<source>\nOption source." in harness.server.prompts()[0]
    harness.server.reset()

    async def extract(input: Any, output: Any) -> str:
        return "Extracted source."

    scorer = create_summarization_scorer(harness.judge, source="x", source_extractor=extract)
    harness.run(scorer, ANSWERS, **RUN)
    assert "<source>\nExtracted source." in harness.server.prompts()[0]


def test_empty_source_fails_before_any_judge_call(harness: Any) -> None:
    error = harness.fail(create_summarization_scorer(harness.judge), [], input="", output="s")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert "needs the source text" in str(error)
    assert harness.server.call_count == 0


def test_max_questions_below_one_is_refused() -> None:
    with pytest.raises(ScorerConfigError, match="max_questions"):
        create_summarization_scorer("openai/x", {"maxQuestions": 0})


def test_score_rules() -> None:
    supported = [{"supported": True}, {"supported": False}]
    answered = [{"answered": True}] * 4
    assert summarization_score(supported, ["q"] * 4, answered[:1]) == 0.25  # missing = no
    assert summarization_score(supported, ["q"], answered, scale=10) == 5
    assert summarization_score([], ["q"], answered) == 0
    assert summarization_score(supported, [], []) == 0
