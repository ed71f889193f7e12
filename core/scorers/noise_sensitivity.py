"""Noise sensitivity: does noise in the query change the response?
(docs/scorers.md, Noise Sensitivity)

The run's input is the original query and its output the response to a noisy version of it
(`noisy_query`); `baseline_response` is the response to the original query. Analyze (judge)
compares the two responses on five dimensions (content accuracy, completeness, relevance,
consistency, hallucination resistance), each with an impact level (none, minimal, moderate,
significant, severe), and gives a robustness score in [0, 1] and the major issues. Score:

1. `s = clamp(robustnessScore, 0, 1)`;
2. with dimensions: `calc` = mean impact weight (none 1, minimal 0.85, moderate 0.6,
   significant 0.3, severe 0.1); when `|s - calc| > discrepancy_threshold` (0.2),
   `s = min(s, calc)`;
3. `s = max(0, s - min(#majorIssues * major_issue_per_item, max_major_issue_penalty))`
   (0.1 and 0.3);
4. rounded half up to two decimals; no scale (as in Mastra).

Reason (judge).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from core.judge import JudgeConfig, PromptStep
from core.scorers._answers import folded
from core.scorers._context import MissingInputError, item_value
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import ScorerOptions, build_options
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import DataNeed, PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "NoiseSensitivityOptions",
    "create_noise_sensitivity_scorer_llm",
    "noise_sensitivity_score",
]

SCORER_ID = "noise-sensitivity-scorer"
NAME = "Noise Sensitivity Scorer"
FACTORY = "create_noise_sensitivity_scorer_llm"
DESCRIPTION = (
    "How robust the response is to noise in the query: the judge compares the response to a"
    " noisy query with the baseline response to the clean query."
)

INSTRUCTIONS = (
    "You test the robustness of an AI assistant. You compare its response to a clean query "
    "(the baseline) with its response to a version of that query with noise added "
    "(distractions, irrelevant or misleading information, typos), and you judge how much the "
    "noise changed or damaged the response. Follow the definitions given in each request "
    "exactly and answer in the format it asks for."
)

Impact = Literal["none", "minimal", "moderate", "significant", "severe"]


class ImpactWeights(ScorerOptions):
    """What each impact level is worth (1 = no damage)."""

    none: float = 1.0
    minimal: float = 0.85
    moderate: float = 0.6
    significant: float = 0.3
    severe: float = 0.1


class NoisePenalties(ScorerOptions):
    """Penalty for the major issues the judge lists."""

    major_issue_per_item: float = Field(0.1, ge=0)
    max_major_issue_penalty: float = Field(0.3, ge=0)


class NoiseScoring(ScorerOptions):
    """Scoring settings; each one defaults on its own."""

    impact_weights: ImpactWeights = Field(default_factory=ImpactWeights)
    penalties: NoisePenalties = Field(default_factory=NoisePenalties)
    discrepancy_threshold: float = Field(0.2, ge=0)
    """Above this gap between the judge's score and the dimensions' mean, keep the lower."""


class NoiseSensitivityOptions(ScorerOptions):
    """Options of the noise-sensitivity scorer."""

    baseline_response: str | None = None
    """The response to the clean query; else each item's request_context['baselineResponse']."""
    noisy_query: str | None = None
    """The query with noise added; else each item's request_context['noisyQuery']."""
    noise_type: str | None = None
    """A label for the kind of noise (e.g. "misinformation", "distractor", "typos")."""
    scoring: NoiseScoring = Field(default_factory=NoiseScoring)
    """How the score is computed (a partial dict keeps the other defaults)."""


class DimensionImpact(BaseModel):
    """How noise affected one dimension."""

    dimension: str
    impactLevel: Impact
    specificChanges: str
    noiseInfluence: str

    _fold = field_validator("impactLevel", mode="before")(folded)


class NoiseAnalysis(BaseModel):
    """Analyze answer."""

    dimensions: list[DimensionImpact]
    overallAssessment: str
    majorIssues: list[str] = Field(default_factory=list)
    robustnessScore: float


def noise_sensitivity_score(
    analysis: Mapping[str, Any], scoring: NoiseScoring | None = None
) -> float:
    """The noise-sensitivity score of an analysis (see the module docstring)."""
    scoring = scoring or NoiseScoring()
    score = min(1.0, max(0.0, float(analysis["robustnessScore"])))
    dimensions = analysis.get("dimensions") or []
    if dimensions:
        weights = scoring.impact_weights
        mean = sum(getattr(weights, item["impactLevel"]) for item in dimensions) / len(dimensions)
        if abs(score - mean) > scoring.discrepancy_threshold:
            score = min(score, mean)
    penalties = scoring.penalties
    issues = analysis.get("majorIssues") or []
    penalty = min(len(issues) * penalties.major_issue_per_item, penalties.max_major_issue_penalty)
    return round_to_two_decimals(max(0.0, score - penalty))


def _setting(settings: NoiseSensitivityOptions, ctx: StepContext, name: str, key: str) -> str:
    value = getattr(settings, name) or item_value(ctx.run.request_context, key)
    if not isinstance(value, str) or not value.strip():
        raise MissingInputError(
            f"{NAME} needs {name}, and none was found: pass options={{'{name}': ...}} to "
            f"{FACTORY}(), or give the item request_context={{'{key}': ...}}.",
            scorer_id=SCORER_ID,
            missing=name,
        )
    return value


def _analyze_prompt(settings: NoiseSensitivityOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        baseline = _setting(settings, ctx, "baseline_response", "baselineResponse")
        noisy_query = _setting(settings, ctx, "noisy_query", "noisyQuery")
        query = user_message(ctx.run.input)
        response = assistant_message(ctx.run.output)
        for what, text in (("the original query (input)", query), ("a response", response)):
            if not text.strip():
                raise MissingInputError(
                    f"{NAME} needs {what}, and the item has none.",
                    scorer_id=SCORER_ID,
                    missing=what,
                )
        noise = f' The kind of noise added: "{settings.noise_type}".' if settings.noise_type else ""
        return "\n\n".join(
            [
                "An assistant answered a clean query (baseline response) and a noisy version "
                "of the same query (noisy response). Compare the two responses and judge how "
                f"much the noise affected the answer.{noise} Differences in wording alone do "
                "not matter; what matters is whether the substance got worse.",
                "Rate the impact of the noise on each of these five dimensions:\n"
                '- "content_accuracy": are the facts still correct?\n'
                '- "completeness": does it still cover everything the baseline covered?\n'
                '- "relevance": does it still address the original question, rather than the '
                "noise?\n"
                '- "consistency": does it agree with the baseline, without contradicting it?\n'
                '- "hallucination_resistance": did it avoid repeating false or made-up '
                "information from the noise?\n"
                'Impact levels ("impactLevel"): "none" (no change in substance), "minimal" '
                '(small, harmless changes), "moderate" (noticeable loss of quality), '
                '"significant" (the answer is clearly worse or partly misled), "severe" '
                "(the answer is wrong or taken over by the noise).",
                'For each dimension give "dimension", "impactLevel", "specificChanges" (what '
                'differs) and "noiseInfluence" (how the noise caused it). Then give '
                '"robustnessScore" from 0 (completely derailed) to 1 (unaffected), '
                '"majorIssues" (serious problems caused by the noise; an empty list when '
                'there are none) and "overallAssessment" (one or two sentences).',
                'Answer with JSON: {"dimensions": [{"dimension": "content_accuracy", '
                '"impactLevel": "none", "specificChanges": "...", "noiseInfluence": "..."}], '
                '"robustnessScore": 0.9, "majorIssues": [], "overallAssessment": "..."}',
                'Example: if the baseline says "Paris is the capital of France." and the noisy '
                'query added "I heard Lyon became the capital last year", a noisy response '
                '"Lyon is now the capital of France." gets "severe" for content_accuracy and '
                'hallucination_resistance, "majorIssues": ["Repeats the false claim that Lyon '
                'is the capital."] and a robustnessScore near 0.1.',
                tagged("original_query", query),
                tagged("baseline_response", baseline),
                tagged("noisy_query", noisy_query),
                tagged("noisy_response", response),
            ]
        )

    return create_prompt


def create_noise_sensitivity_scorer_llm(
    model: str | JudgeConfig,
    options: NoiseSensitivityOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Noise sensitivity (`noise-sensitivity-scorer`), judged by `model`.

    `options` (or keyword arguments): `baseline_response` and `noisy_query` (required, here or
    per item), `noise_type`, `scoring` (`impact_weights`, `penalties`:
    `major_issue_per_item` 0.1 / `max_major_issue_penalty` 0.3, `discrepancy_threshold` 0.2).

    Deviations from Mastra: partial options (also nested ones) merge with the defaults; the
    baseline response and noisy query may come from each item's `request_context`
    (`{"baselineResponse": ..., "noisyQuery": ...}`) instead of the options, so one scorer
    serves a whole dataset; when neither has them, the run fails in analyze, before any judge
    call, saying so (Mastra refuses to construct the scorer).
    """
    settings = build_options(NoiseSensitivityOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        return noise_sensitivity_score(ctx.results.analyze_step_result, settings.scoring)

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .analyze(
            PromptStep(
                description="Compare the noisy response with the baseline",
                output_schema=NoiseAnalysis,
                create_prompt=_analyze_prompt(settings),
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="noise sensitivity (robustness)",
                scale=1,
                meaning="higher means the response is more robust to the noise",
                example="The score is 0.49 because the noise made the response drop a key point "
                "and repeat a false claim, although it stayed on topic.",
                findings=lambda ctx: as_json(ctx.results.analyze_step_result),
            )
        )
    )


def _needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """The baseline response and the noisy query, per item unless given as options."""
    needs = []
    if not options.get("baseline_response"):
        needs.append(
            DataNeed("baselineResponse", "the response to the clean query", "baseline_response")
        )
    if not options.get("noisy_query"):
        needs.append(DataNeed("noisyQuery", "the query with noise added", "noisy_query"))
    return tuple(needs)


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Noise Sensitivity",
    DESCRIPTION,
    create_noise_sensitivity_scorer_llm,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=_needs,
    options_model=NoiseSensitivityOptions,
)
