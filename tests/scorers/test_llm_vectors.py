"""Every case of `mastra-llm-scorer-vectors.json`, run through the real pipeline (litellm
against the fake judge): the vector's judge answers are scripted in step order (plus a reason
text where the reason step asks the judge), and the score, the error and the number of judge
calls are compared with what Mastra 1.10.2 produced.

Deviations from Mastra, by design (spec "Mastra's bugs are not features"), are listed in
`DEVIATIONS` with the score we give instead and why.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from core import JudgeConfig, Scorer, ScorerRunError
from core.scorers.answer_relevancy import create_answer_relevancy_scorer
from core.scorers.answer_similarity import create_answer_similarity_scorer
from core.scorers.bias import create_bias_scorer
from core.scorers.context_precision import create_context_precision_scorer
from core.scorers.context_recall import create_context_recall_scorer
from core.scorers.context_relevance import create_context_relevance_scorer_llm
from core.scorers.faithfulness import create_faithfulness_scorer
from core.scorers.hallucination import create_hallucination_scorer
from core.scorers.multi_turn_judge import create_multi_turn_judge_scorer
from core.scorers.noise_sensitivity import create_noise_sensitivity_scorer_llm
from core.scorers.prompt_alignment import create_prompt_alignment_scorer_llm
from core.scorers.rubric import create_rubric_scorer
from core.scorers.summarization import create_summarization_scorer
from core.scorers.tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
from core.scorers.toxicity import create_toxicity_scorer
from core.scorers.trajectory_accuracy_llm import create_trajectory_accuracy_scorer_llm

VECTORS = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "vectors"
) / "mastra-llm-scorer-vectors.json"


def _load() -> list[dict[str, Any]]:
    if not VECTORS.is_file():
        return []
    return json.loads(VECTORS.read_text(encoding="utf-8"))


CASES = _load()


def case_id(index: int, case: dict[str, Any]) -> str:
    return f"{index:02d}-{case['scorer']}"


# case id -> (the score we give, why it differs from Mastra's)
DEVIATIONS: dict[str, tuple[float, str]] = {
    "18-toxicity": (
        0.0,
        "zero verdicts: Mastra scores 1 (maximally toxic) for a response with nothing toxic "
        "in it; we score 0",
    ),
    "81-answer-relevancy": (
        1.3,
        "partial options {scale: 2}: Mastra drops the default uncertaintyWeight and returns "
        "NaN; we merge with the defaults: (1 + 0.3) / 2 * 2 = 1.3",
    ),
    "82-answer-relevancy": (
        0.75,
        "partial options {uncertaintyWeight: 0.5}: Mastra drops the default scale and returns "
        "NaN; we merge with the defaults: (1 + 0.5) / 2 * 1 = 0.75",
    ),
}


def build(case: dict[str, Any], judge: JudgeConfig) -> Scorer:
    """The scorer of a case, with the vector's options (camelCase keys as in Mastra)."""
    options = dict(case["options"])
    name = case["scorer"]
    if name == "context-relevance" and options.get("contextExtractor") == "() => []":
        options["contextExtractor"] = lambda _input, _output: []
    simple = {
        "answer-relevancy": create_answer_relevancy_scorer,
        "answer-similarity": create_answer_similarity_scorer,
        "bias": create_bias_scorer,
        "context-precision": create_context_precision_scorer,
        "context-recall": create_context_recall_scorer,
        "context-relevance": create_context_relevance_scorer_llm,
        "faithfulness": create_faithfulness_scorer,
        "hallucination": create_hallucination_scorer,
        "noise-sensitivity": create_noise_sensitivity_scorer_llm,
        "prompt-alignment": create_prompt_alignment_scorer_llm,
        "summarization": create_summarization_scorer,
        "toxicity": create_toxicity_scorer,
    }
    if name in simple:
        return simple[name](judge, options)
    if name == "rubric":
        return create_rubric_scorer(judge, options.pop("criteria", None), options)
    if name == "multi-turn-judge":
        return create_multi_turn_judge_scorer(judge, options.pop("criterion"), options)
    if name == "tool-call-accuracy-llm":
        return create_tool_call_accuracy_scorer_llm(judge, options["availableTools"])
    if name == "trajectory-accuracy-llm":
        return create_trajectory_accuracy_scorer_llm(judge)
    raise AssertionError(f"no scorer for vector scorer {name!r}")


def test_vectors_are_present() -> None:
    if not CASES:
        pytest.skip(f"LLM scorer vectors not found at {VECTORS}")
    assert len(CASES) == 83


def test_every_vector_scorer_is_built(llm_judge: JudgeConfig) -> None:
    if not CASES:
        pytest.skip(f"LLM scorer vectors not found at {VECTORS}")
    assert {case["scorer"] for case in CASES} == {
        case["scorer"] for case in CASES if build(case, llm_judge) is not None
    }
    assert set(DEVIATIONS) <= {case_id(i, case) for i, case in enumerate(CASES)}


def _params() -> list[Any]:
    if not CASES:
        reason = f"LLM scorer vectors not found at {VECTORS} (../shared/vectors)"
        return [pytest.param(-1, {}, id="vectors-absent", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(index, case, id=case_id(index, case)) for index, case in enumerate(CASES)]


@pytest.mark.parametrize(("index", "case"), _params())
def test_vector(harness: Any, index: int, case: dict[str, Any]) -> None:
    scorer = build(case, harness.judge)
    run = {"input": case["input"], "output": case["output"]}
    if case["options"].get("evaluationMode") == "system":
        # The vector's generator gave the agent a system prompt that the file does not carry;
        # system mode needs one (Mastra throws without it too).
        run["input"] = [
            {"role": "system", "content": "Reply with a haiku in lowercase."},
            {"role": "user", "content": case["input"]},
        ]
    if case.get("groundTruth") is not None:
        run["ground_truth"] = case["groundTruth"]
    answers = {
        step: answer
        for step, answer in case["judge_outputs_by_step"].items()
        if not isinstance(answer, str)  # "(code step: ...)" marks a step run in code
    }

    if case.get("expected_error"):
        harness.server.script(*[json.dumps(a) for a in answers.values()])
        with pytest.raises(ScorerRunError) as caught:
            scorer.run_sync(**run)
        assert str(caught.value).startswith(case["expected_error"])
    else:
        result = harness.run(scorer, answers, **run)
        deviation = DEVIATIONS.get(case_id(index, case))
        if deviation is not None:
            expected = deviation[0]
        else:
            assert not case.get("expected_nan"), "a NaN case must be listed as a deviation"
            expected = case["expected_score"]
        assert math.isclose(result.score, expected, abs_tol=1e-9), (result.score, expected)
    assert harness.server.call_count == case["judge_calls_made"]
