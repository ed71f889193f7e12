"""The LLM-judge entries of the PREBUILT catalog: each builds its scorer from `model=` and its
options, reads plain strings and message lists alike, and names a bad output before any
judge call."""

from __future__ import annotations

from typing import Any

import pytest

import core.scorers
from core import ScorerRunError
from core.scorers import PREBUILT, ScorerInputError

CONTEXT = {"context": ["Paris is the capital of France."]}
VERDICT = {"verdicts": [{"verdict": "yes", "reason": "m"}]}

# id -> (required factory arguments, extra run arguments, judge answers by step)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "answer-relevancy-scorer": (
        {},
        {},
        {
            "preprocess": {"statements": ["s"]},
            "analyze": {"results": [{"result": "yes", "reason": "m"}]},
        },
    ),
    "faithfulness-scorer": (
        {},
        {"request_context": CONTEXT},
        {"preprocess": {"claims": ["c"]}, "analyze": VERDICT},
    ),
    "hallucination-scorer": (
        {},
        {"request_context": CONTEXT},
        {
            "preprocess": {"claims": ["c"]},
            "analyze": {"verdicts": [{"statement": "c", "verdict": "no", "reason": "m"}]},
        },
    ),
    "bias-scorer": (
        {},
        {},
        {
            "preprocess": {"opinions": ["o"]},
            "analyze": {"results": [{"result": "no", "reason": "m"}]},
        },
    ),
    "toxicity-scorer": ({}, {}, {"analyze": {"verdicts": [{"verdict": "no", "reason": "m"}]}}),
    "context-precision-scorer": (
        {},
        {"request_context": CONTEXT},
        {"analyze": {"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "m"}]}},
    ),
    "context-relevance-scorer": (
        {},
        {"request_context": CONTEXT},
        {
            "analyze": {
                "evaluations": [
                    {
                        "context_index": 0,
                        "contextPiece": "p",
                        "relevanceLevel": "high",
                        "wasUsed": True,
                        "reasoning": "m",
                    }
                ],
                "overallAssessment": "m",
            }
        },
    ),
    "context-recall-scorer": (
        {},
        {"request_context": CONTEXT, "ground_truth": "Paris."},
        {"preprocess": {"claims": ["c"]}, "analyze": VERDICT},
    ),
    "prompt-alignment-scorer": (
        {},
        {},
        {
            "analyze": {
                "intentAlignment": {
                    "score": 1,
                    "primaryIntent": "i",
                    "isAddressed": True,
                    "reasoning": "m",
                },
                "requirementsFulfillment": {"requirements": [], "overallScore": 1},
                "completeness": {"score": 1, "missingElements": [], "reasoning": "m"},
                "responseAppropriateness": {
                    "score": 1,
                    "formatAlignment": True,
                    "toneAlignment": True,
                    "reasoning": "m",
                },
                "overallAssessment": "m",
            }
        },
    ),
    "noise-sensitivity-scorer": (
        {},
        {"request_context": {"baselineResponse": "b", "noisyQuery": "n"}},
        {"analyze": {"dimensions": [], "overallAssessment": "m", "robustnessScore": 0.8}},
    ),
    "llm-tool-call-accuracy-scorer": (
        {"available_tools": [{"id": "weather", "description": "Weather of a city"}]},
        {},
        {"analyze": {"evaluations": [], "missingTools": []}},
    ),
    "answer-similarity-scorer": (
        {},
        {"ground_truth": "Sunny."},
        {
            "preprocess": {"outputUnits": ["o"], "groundTruthUnits": ["g"]},
            "analyze": {
                "matches": [
                    {
                        "groundTruthUnit": "g",
                        "outputUnit": "o",
                        "matchType": "semantic",
                        "explanation": "m",
                    }
                ]
            },
        },
    ),
    "summarization-scorer": (
        {},
        {},
        {
            "preprocess": {
                "alignment": [{"claim": "c", "supported": True, "reason": "m"}],
                "questions": ["q?"],
            },
            "analyze": {"coverage": [{"question": "q?", "answered": True, "reason": "m"}]},
        },
    ),
    "rubric-scorer": (
        {},
        {},
        {"analyze": {"criteria": [], "overallAssessment": "No rubric."}},
    ),
    "multi-turn-judge-scorer": (
        {"criterion": "The assistant describes the weather."},
        {},
        {"analyze": {"satisfied": True, "reasoning": "m"}},
    ),
    "llm-trajectory-accuracy-scorer": (
        {},
        {},
        {"analyze": {"stepEvaluations": [], "overallAssessment": "m"}},
    ),
}
LLM_IDS = sorted(scorer_id for scorer_id, entry in PREBUILT.items() if entry.calls_judge)
# Context recall never reads the output (it checks the ground truth against the context).
READS_OUTPUT = [scorer_id for scorer_id in LLM_IDS if scorer_id != "context-recall-scorer"]


def test_every_llm_scorer_is_registered() -> None:
    assert set(LLM_IDS) == set(CASES)
    for scorer_id in LLM_IDS:
        factory = PREBUILT[scorer_id].factory
        assert getattr(core.scorers, factory.__name__) is factory


@pytest.mark.parametrize("scorer_id", LLM_IDS)
def test_entry_options_are_factory_arguments(scorer_id: str) -> None:
    entry = PREBUILT[scorer_id]
    required, _, _ = CASES[scorer_id]
    assert entry.name and entry.description and entry.calls_judge
    assert {option.name for option in entry.options if option.required} == set(required)
    assert "model" not in {option.name for option in entry.options}
    scorer = entry.factory(model="openai/any", **required)
    assert scorer.id == scorer_id and scorer.has_judge_steps
    for option in entry.options:  # each listed option is accepted under its listed name
        if not option.required:
            entry.factory(model="openai/any", **required, **{option.name: option.default})


@pytest.mark.parametrize("scorer_id", LLM_IDS)
def test_plain_strings_and_message_lists_read_alike(harness: Any, scorer_id: str) -> None:
    required, extra, answers = CASES[scorer_id]
    scorer = PREBUILT[scorer_id].factory(model=harness.judge, **required)
    question, answer = "What is the weather in Paris?", "It is sunny in Paris."
    plain = harness.run(scorer, answers, input=question, output=answer, **extra)
    plain_prompts = harness.server.prompts()
    harness.server.reset()
    messages = harness.run(
        scorer,
        answers,
        input=[{"role": "user", "content": question}],
        output=[{"role": "assistant", "content": [{"type": "text", "text": answer}]}],
        **extra,
    )
    assert messages.score == plain.score
    assert 0 <= plain.score <= 1
    if scorer_id != "llm-trajectory-accuracy-scorer":  # there, a string describes the steps
        assert harness.server.prompts() == plain_prompts


@pytest.mark.parametrize("scorer_id", READS_OUTPUT)
def test_bad_output_names_the_problem(harness: Any, scorer_id: str) -> None:
    required, extra, _ = CASES[scorer_id]
    scorer = PREBUILT[scorer_id].factory(model=harness.judge, **required)
    with pytest.raises(ScorerRunError) as caught:
        scorer.run_sync(input="question", output=42, **extra)
    assert isinstance(caught.value.__cause__, ScorerInputError)
    assert "output must be a string" in str(caught.value)
    assert harness.server.call_count == 0
