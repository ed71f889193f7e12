"""The PREBUILT catalog: every entry builds a working scorer with the entry's id."""

from __future__ import annotations

import dataclasses

import pytest

from core import ScorerRunError
from core.scorers import PREBUILT, PrebuiltScorer, ScorerInputError

_REQUIRED_ARGUMENTS = {
    "checks.includes": {"value": "x"},
    "checks.excludes": {"value": "x"},
    "checks.equals": {"value": "x"},
    "checks.matches": {"pattern": "x"},
    "checks.similarity": {"value": "x"},
    "checks.calledTool": {"name": "search"},
    "checks.didNotCall": {"name": "search"},
    "checks.toolOrder": {"names": ["a", "b"]},
    "checks.maxToolCalls": {"limit": 2},
}

# The entries that run without a judge; the LLM-judge ones are tested in test_llm_catalog.py.
NO_JUDGE_IDS = sorted(scorer_id for scorer_id, entry in PREBUILT.items() if not entry.calls_judge)

CODE_SCORER_IDS = {
    "keyword-coverage-scorer",
    "completeness-scorer",
    "content-similarity-scorer",
    "textual-difference-scorer",
    "tone-scorer",
}


def test_code_scorers_are_registered_without_a_judge() -> None:
    assert set(PREBUILT) >= CODE_SCORER_IDS
    assert not any(PREBUILT[scorer_id].calls_judge for scorer_id in CODE_SCORER_IDS)


@pytest.mark.parametrize("scorer_id", NO_JUDGE_IDS)
def test_entry_builds_its_scorer(scorer_id: str) -> None:
    entry = PREBUILT[scorer_id]
    assert entry.id == scorer_id and entry.name and entry.description
    required = {option.name for option in entry.options if option.required}
    arguments = _REQUIRED_ARGUMENTS.get(scorer_id, {})
    assert set(arguments) == required
    scorer = entry.factory(**arguments)
    assert scorer.id == scorer_id
    result = scorer.run_sync(
        input="What is the weather?", output="It is sunny and warm.", ground_truth="Sunny."
    )
    assert result.score is not None and 0.0 <= result.score <= 1.0


def test_entries_are_frozen() -> None:
    entry = PREBUILT["tone-scorer"]
    assert isinstance(entry, PrebuiltScorer)
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.name = "other"  # type: ignore[misc]


def _build(scorer_id: str) -> object:
    return PREBUILT[scorer_id].factory(**_REQUIRED_ARGUMENTS.get(scorer_id, {}))


@pytest.mark.parametrize("scorer_id", NO_JUDGE_IDS)
def test_plain_strings_and_message_lists_score_alike(scorer_id: str) -> None:
    scorer = _build(scorer_id)
    question, answer = "How does React handle state?", "React keeps state in hooks. Great!"
    truth = "React keeps state in hooks."
    plain = scorer.run_sync(input=question, output=answer, ground_truth=truth)
    messages = scorer.run_sync(
        input=[{"role": "user", "content": question}],
        output=[{"role": "assistant", "content": [{"type": "text", "text": answer}]}],
        ground_truth=truth,
    )
    assert messages.score == plain.score
    assert messages.preprocess_step_result == plain.preprocess_step_result


@pytest.mark.parametrize("scorer_id", NO_JUDGE_IDS)
def test_bad_output_names_the_problem(scorer_id: str) -> None:
    with pytest.raises(ScorerRunError) as caught:
        _build(scorer_id).run_sync(input="question", output=42, ground_truth="answer")
    assert isinstance(caught.value.__cause__, ScorerInputError)
    assert "output must be a string" in str(caught.value)
