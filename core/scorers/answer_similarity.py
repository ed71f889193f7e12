"""Answer similarity: how closely the response matches the expected answer.
(docs/scorers.md, Answer Similarity)

Steps: preprocess (judge) splits the response and the ground truth into semantic units;
analyze (judge) matches each ground-truth unit with the response (exact, semantic, partial or
missing) and lists extra information and contradictions. Score (0 without matches):

1. sum over matches: exact `1 + exact_match_bonus`, semantic `semantic_threshold`, partial
   `semantic_threshold / 2`, missing `-missing_penalty`;
2. divided by `#matches * (1 + exact_match_bonus)`;
3. minus `#contradictions * contradiction_penalty`;
4. minus `min(#extra * extra_info_penalty, 0.2)`;
5. clamped to [0, 1], times `scale`, rounded half up to two decimals.

Reason (judge). Without a ground truth the run fails in preprocess (before any judge call)
when `require_ground_truth` is on (the default), and scores 0 otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from core.judge import JudgeConfig, PromptStep
from core.scorers._answers import folded
from core.scorers._context import MissingInputError
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message
from core.scorers._options import ScorerOptions, build_options
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import DataNeed, PrebuiltScorer, ground_truth_needs
from core.scorers._scores import round_to_two_decimals
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "AnswerSimilarityOptions",
    "answer_similarity_score",
    "create_answer_similarity_scorer",
]

SCORER_ID = "answer-similarity-scorer"
NAME = "Answer Similarity Scorer"
DESCRIPTION = (
    "How closely the response matches the expected answer (ground truth), unit by unit, with"
    " penalties for missing information, contradictions and extra content."
)

INSTRUCTIONS = (
    "You compare an assistant's response with an expected answer (the ground truth). You "
    "break both into units of meaning, match each unit of the expected answer with the "
    "response, and note contradictions and extra information. Meaning counts, not wording. "
    "Follow the definitions given in each request exactly and answer in the format it asks "
    "for."
)

MISSING_GROUND_TRUTH = "Answer Similarity Scorer requires ground truth to be provided"


class AnswerSimilarityOptions(ScorerOptions):
    """Options of the answer-similarity scorer; each one defaults on its own."""

    require_ground_truth: bool = True
    """Fail a run without ground truth (else it scores 0)."""
    semantic_threshold: float = Field(0.8, ge=0, le=1)
    """Credit of a semantic match (a partial match gets half)."""
    exact_match_bonus: float = Field(0.2, ge=0)
    """Extra credit of an exact match (which counts `1 + bonus`)."""
    missing_penalty: float = Field(0.15, ge=0)
    """Subtracted for each unit of the ground truth missing from the response."""
    contradiction_penalty: float = Field(1.0, ge=0)
    """Subtracted from the 0-1 score for each contradiction."""
    extra_info_penalty: float = Field(0.05, ge=0)
    """Subtracted for each extra unit of the response, 0.2 at most in total."""
    scale: float = Field(1.0, gt=0)
    """Multiplies the 0-1 score."""


class Units(BaseModel):
    """Preprocess answer: both texts as units of meaning."""

    outputUnits: list[str]
    groundTruthUnits: list[str]


class UnitMatch(BaseModel):
    """How one ground-truth unit appears in the response."""

    groundTruthUnit: str
    outputUnit: str | None = None
    matchType: Literal["exact", "semantic", "partial", "missing"]
    explanation: str

    _fold = field_validator("matchType", mode="before")(folded)


class Contradiction(BaseModel):
    """A response unit that contradicts a ground-truth unit."""

    outputUnit: str
    groundTruthUnit: str
    explanation: str


class SimilarityAnalysis(BaseModel):
    """Analyze answer."""

    matches: list[UnitMatch]
    extraInOutput: list[str] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)


def answer_similarity_score(
    analysis: Mapping[str, Any], options: AnswerSimilarityOptions | None = None
) -> float:
    """The answer-similarity score of an analysis (see the module docstring)."""
    options = options or AnswerSimilarityOptions()
    matches = analysis.get("matches") or []
    if not matches:
        return 0.0
    credit = {
        "exact": 1 + options.exact_match_bonus,
        "semantic": options.semantic_threshold,
        "partial": options.semantic_threshold / 2,
        "missing": -options.missing_penalty,
    }
    total = sum(credit[item["matchType"]] for item in matches)
    score = total / (len(matches) * (1 + options.exact_match_bonus))
    score -= len(analysis.get("contradictions") or []) * options.contradiction_penalty
    score -= min(len(analysis.get("extraInOutput") or []) * options.extra_info_penalty, 0.2)
    return round_to_two_decimals(min(1.0, max(0.0, score)) * options.scale)


def _ground_truth(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if text.strip() else None


def _units_prompt(settings: AnswerSimilarityOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        expected = _ground_truth(ctx.run.ground_truth)
        if expected is None and settings.require_ground_truth:
            raise MissingInputError(
                f"{MISSING_GROUND_TRUTH} (give each item a ground_truth, or pass "
                "options={'require_ground_truth': False} to score items without one as 0)",
                scorer_id=SCORER_ID,
                missing="ground_truth",
            )
        return "\n\n".join(
            [
                "Break each of the two texts below (a response and an expected answer) into "
                "units of meaning, so that they can be matched unit by unit.",
                "Rules:\n"
                "- A unit is one fact, idea or instruction, written as a short sentence or "
                "phrase that makes sense alone.\n"
                "- Split a sentence that says several things; keep a one-word answer or a "
                "number as one unit.\n"
                "- Keep each text's own content: add nothing, correct nothing.\n"
                "- An empty text gives an empty list.",
                'Answer with JSON: {"outputUnits": ["..."], "groundTruthUnits": ["..."]}',
                'Example: for the response "Paris, on the Seine." and the expected answer '
                '"The capital of France is Paris, which has about 2 million inhabitants." '
                "the answer is\n"
                '{"outputUnits": ["Paris", "Paris is on the Seine"], "groundTruthUnits": '
                '["The capital of France is Paris", "Paris has about 2 million '
                'inhabitants"]}',
                tagged("response", assistant_message(ctx.run.output)),
                tagged("expected_answer", expected or ""),
            ]
        )

    return create_prompt


def _analyze_prompt(ctx: StepContext) -> str:
    units = ctx.results.preprocess_step_result
    return "\n\n".join(
        [
            "Match each unit of the expected answer with the units of the response.",
            'Match types ("matchType"), for each expected-answer unit:\n'
            '- "exact": the response states the same thing in the same or nearly the same '
            "words.\n"
            '- "semantic": the response states the same meaning in other words.\n'
            '- "partial": the response states part of it, or a vaguer version of it.\n'
            '- "missing": the response does not state it ("outputUnit" is null).',
            "Give one match per expected-answer unit, in order "
            f"({len(units['groundTruthUnits'])} in total): "
            '"groundTruthUnit", "outputUnit" (the matching response unit, or '
            'null), "matchType", "explanation" (one short sentence). Then list in '
            '"extraInOutput" the response units that match no expected unit, and in '
            '"contradictions" each response unit that contradicts an expected unit '
            '("outputUnit", "groundTruthUnit", "explanation"). Use empty lists when there is '
            "nothing to list.",
            'Answer with JSON: {"matches": [{"groundTruthUnit": "...", "outputUnit": "...", '
            '"matchType": "semantic", "explanation": "..."}], "extraInOutput": [], '
            '"contradictions": []}',
            'Example: for the expected units ["The capital of France is Paris", "Paris has '
            'about 2 million inhabitants"] and the response units ["Paris", "Paris has 5 '
            'million inhabitants", "Paris is on the Seine"] the answer is\n'
            '{"matches": [{"groundTruthUnit": "The capital of France is Paris", "outputUnit": '
            '"Paris", "matchType": "partial", "explanation": "Names Paris without saying it is '
            'the capital."}, {"groundTruthUnit": "Paris has about 2 million inhabitants", '
            '"outputUnit": null, "matchType": "missing", "explanation": "The right figure is '
            'not given."}], "extraInOutput": ["Paris is on the Seine"], "contradictions": '
            '[{"outputUnit": "Paris has 5 million inhabitants", "groundTruthUnit": "Paris has '
            'about 2 million inhabitants", "explanation": "5 million contradicts about 2 '
            'million."}]}',
            tagged("expected_answer_units", as_json(units["groundTruthUnits"])),
            tagged("response_units", as_json(units["outputUnits"])),
        ]
    )


def _findings(ctx: StepContext) -> str:
    if _ground_truth(ctx.run.ground_truth) is None:
        return "The item has no expected answer (ground truth) to compare with, so the score is 0."
    return as_json(ctx.results.analyze_step_result)


def create_answer_similarity_scorer(
    model: str | JudgeConfig,
    options: AnswerSimilarityOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Answer similarity (`answer-similarity-scorer`), judged by `model`. Needs each item's
    `ground_truth`.

    `options` (or keyword arguments), merged with the defaults as in Mastra:
    `require_ground_truth` (True), `semantic_threshold` (0.8), `exact_match_bonus` (0.2),
    `missing_penalty` (0.15), `contradiction_penalty` (1.0: one contradiction zeroes the
    score), `extra_info_penalty` (0.05), `scale` (1).
    """
    settings = build_options(AnswerSimilarityOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        if _ground_truth(ctx.run.ground_truth) is None:
            return 0.0
        return answer_similarity_score(ctx.results.analyze_step_result, settings)

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(
            PromptStep(
                description="Split the response and the ground truth into units",
                output_schema=Units,
                create_prompt=_units_prompt(settings),
            )
        )
        .analyze(
            PromptStep(
                description="Match the ground truth's units with the response",
                output_schema=SimilarityAnalysis,
                create_prompt=_analyze_prompt,
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="answer similarity",
                scale=settings.scale,
                meaning="higher means the response matches the expected answer more closely",
                example="The score is 0.42 because the response matches one unit of the "
                "expected answer exactly and two only partly, misses the population figure and "
                "adds an unrequested detail.",
                findings=_findings,
            )
        )
    )


def _needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """Without a ground truth every item fails, unless `require_ground_truth` is off."""
    if options.get("require_ground_truth", True) is False:
        return ()
    return ground_truth_needs(options)


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Answer Similarity",
    DESCRIPTION,
    create_answer_similarity_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=_needs,
    options_model=AnswerSimilarityOptions,
)
