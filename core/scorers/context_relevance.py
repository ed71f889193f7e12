"""Context relevance: how relevant the context pieces are, and whether the relevant ones were
used (docs/scorers.md, Context Relevance).

Steps: preprocess (code) resolves the context: `context_extractor(input, output)`, else the
`context` option, else the item's `request_context["context"]`; a run without any fails here,
before any judge call. Analyze (judge) rates each piece's relevance (high / medium / low /
none), says whether the response used it, and lists missing information. Score:

1. the extractor gave no piece for this item: `1 * scale` (the judge's answer is ignored);
2. no evaluation: 0 when information is missing, else 1 (unscaled, as in Mastra);
3. else `max(0, mean(weights) - unused_high_penalty - missing_penalty) * scale`, rounded half
   up to two decimals, with weights high 1, medium 0.7, low 0.3, none 0; the unused penalty is
   `#(high and not used) * unused_high_relevance_context`; the missing penalty is
   `min(#missing * missing_context_per_item, max_missing_context_penalty)`.

Reason (judge).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from core.judge import JudgeConfig, PromptStep
from core.scorers._answers import folded
from core.scorers._context import ExtractedContextOptions, required_context
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import Scale, ScorerOptions, build_options
from core.scorers._prompts import as_json, explain_step, numbered, tagged
from core.scorers._registry import PrebuiltScorer, context_needs
from core.scorers._scores import round_to_two_decimals
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer, described

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "ContextRelevanceOptions",
    "ContextRelevancePenalties",
    "context_relevance_score",
    "create_context_relevance_scorer_llm",
]

SCORER_ID = "context-relevance-scorer"
NAME = "Context Relevance Scorer"
FACTORY = "create_context_relevance_scorer_llm"
DESCRIPTION = (
    "How relevant the provided context is to the question, penalising relevant pieces the"
    " response left unused and information the context lacked."
)

INSTRUCTIONS = (
    "You evaluate the context given to a question-answering system. For each context piece "
    "you rate how relevant it is to the user's question and whether the response actually "
    "drew on it, and you note information the context should have contained but did not. "
    "Follow the definitions given in each request exactly and answer in the format it asks "
    "for."
)

RELEVANCE_WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


class ContextRelevancePenalties(ScorerOptions):
    """Penalties of the context-relevance score; each one defaults on its own."""

    unused_high_relevance_context: float = Field(0.1, ge=0)
    """Subtracted for each highly relevant piece the response did not use."""
    missing_context_per_item: float = Field(0.15, ge=0)
    """Subtracted for each piece of missing information..."""
    max_missing_context_penalty: float = Field(0.5, ge=0)
    """...up to this total."""


class ContextRelevanceOptions(ExtractedContextOptions):
    """Options: `scale` (1), `context`, `context_extractor`, `penalties`."""

    penalties: ContextRelevancePenalties = Field(default_factory=ContextRelevancePenalties)
    """The penalties (a partial dict keeps the other defaults)."""
    scale: Scale = 1.0


class PieceEvaluation(BaseModel):
    """One context piece's rating."""

    context_index: int
    contextPiece: str
    relevanceLevel: Literal["high", "medium", "low", "none"]
    wasUsed: bool
    reasoning: str

    _fold = field_validator("relevanceLevel", mode="before")(folded)


class RelevanceAnalysis(BaseModel):
    """Analyze answer."""

    evaluations: list[PieceEvaluation]
    missingContext: list[str] = Field(default_factory=list)
    overallAssessment: str


def context_relevance_score(
    analysis: Mapping[str, Any],
    penalties: ContextRelevancePenalties | None = None,
    scale: float = 1.0,
    *,
    context_empty: bool = False,
) -> float:
    """The context-relevance score of an analysis (see the module docstring)."""
    if context_empty:
        return 1.0 * scale
    penalties = penalties or ContextRelevancePenalties()
    evaluations: Sequence[Mapping[str, Any]] = analysis["evaluations"]
    missing = analysis.get("missingContext") or []
    if not evaluations:
        return 0.0 if missing else 1.0
    base = sum(RELEVANCE_WEIGHTS[item["relevanceLevel"]] for item in evaluations) / len(evaluations)
    unused = sum(
        1 for item in evaluations if item["relevanceLevel"] == "high" and not item["wasUsed"]
    )
    usage_penalty = unused * penalties.unused_high_relevance_context
    missing_penalty = min(
        len(missing) * penalties.missing_context_per_item, penalties.max_missing_context_penalty
    )
    return round_to_two_decimals(max(0.0, base - usage_penalty - missing_penalty) * scale)


def _resolve_context(
    settings: ContextRelevanceOptions,
) -> Callable[[StepContext], Awaitable[dict[str, Any]]]:
    async def preprocess(ctx: StepContext) -> dict[str, Any]:
        context = await required_context(
            settings, ctx.run, NAME, SCORER_ID, FACTORY, allow_empty=True
        )
        return {"context": context}

    described(preprocess, "Find the context pieces to judge")
    return preprocess


def _analyze_prompt(ctx: StepContext) -> str:
    context = ctx.results.preprocess_step_result["context"]
    if context:
        pieces = (
            f"Rate every piece, in index order ({len(context)} in total). For each give "
            '"context_index" (from 0), "contextPiece" (the piece, copied or shortened), '
            '"relevanceLevel", "wasUsed" and "reasoning" (one short sentence).'
        )
    else:
        pieces = 'No context piece was provided: return an empty "evaluations" list.'
    return "\n\n".join(
        [
            "Below are a user's question, the response that was produced, and the context "
            "pieces the system was given, each with its index. Rate how relevant each piece "
            "is to the question, and whether the response used it.",
            'Relevance levels ("relevanceLevel"):\n'
            '- "high": the piece directly answers the question or is essential to answering '
            "it.\n"
            '- "medium": useful supporting information, but not essential.\n'
            '- "low": related to the topic, but of little help for this question.\n'
            '- "none": unrelated to the question.\n'
            '"wasUsed" is true when the response draws on the piece\'s information, false '
            "otherwise.",
            pieces,
            'Also list in "missingContext" any information needed to answer the question well '
            "that none of the pieces provides (an empty list when nothing is missing), and "
            'sum up in "overallAssessment" (one or two sentences).',
            'Answer with JSON: {"evaluations": [{"context_index": 0, "contextPiece": "...", '
            '"relevanceLevel": "high", "wasUsed": true, "reasoning": "..."}], '
            '"missingContext": [], "overallAssessment": "..."}',
            'Example: for the question "How tall is Mont Blanc and where is it?", the response '
            '"Mont Blanc is 4,806 m tall." and the pieces "[0] Mont Blanc rises to 4,806 m." '
            'and "[1] The Alps span eight countries." the answer is\n'
            '{"evaluations": [{"context_index": 0, "contextPiece": "Mont Blanc rises to 4,806 '
            'm.", "relevanceLevel": "high", "wasUsed": true, "reasoning": "Gives the height '
            'asked for."}, {"context_index": 1, "contextPiece": "The Alps span eight '
            'countries.", "relevanceLevel": "low", "wasUsed": false, "reasoning": "Related, but '
            'does not locate Mont Blanc."}], "missingContext": ["The location of Mont Blanc '
            '(on the France-Italy border)."], "overallAssessment": "The height is covered; the '
            'location is missing."}',
            tagged("question", user_message(ctx.run.input)),
            tagged("response", assistant_message(ctx.run.output)),
            tagged("context", numbered(context) if context else "(no context pieces)"),
        ]
    )


def _findings(ctx: StepContext) -> str:
    if not ctx.results.preprocess_step_result["context"]:
        return (
            "No context piece was provided for this item, so there was nothing irrelevant to "
            "penalise: the score is the maximum."
        )
    return as_json(ctx.results.analyze_step_result)


def create_context_relevance_scorer_llm(
    model: str | JudgeConfig,
    options: ContextRelevanceOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Context relevance (`context-relevance-scorer`), judged by `model`.

    `options` (or keyword arguments): `scale` (1), `context` (a list of strings for every
    item), `context_extractor` (a function `(input, output) -> list[str]`, sync or async),
    `penalties` (`unused_high_relevance_context` 0.1, `missing_context_per_item` 0.15,
    `max_missing_context_penalty` 0.5). Without `context` or an extractor, each item's
    `request_context["context"]` is used.

    Deviations from Mastra: partial options (and partial penalties) merge with the defaults;
    construction accepts no context at all (each item may bring its own; a run without any
    fails in preprocess, before any judge call, saying where to put it); a preprocess step
    (code) records the context used as `{"context": [...]}`.
    """
    settings = build_options(ContextRelevanceOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        return context_relevance_score(
            ctx.results.analyze_step_result,
            settings.penalties,
            settings.scale,
            context_empty=not ctx.results.preprocess_step_result["context"],
        )

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(_resolve_context(settings))
        .analyze(
            PromptStep(
                description="Rate each context piece's relevance and use",
                output_schema=RelevanceAnalysis,
                create_prompt=_analyze_prompt,
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="context relevance",
                scale=settings.scale,
                meaning="higher means more relevant context, used by the response, with "
                "nothing missing",
                example="The score is 0.75 because both pieces are highly relevant, but the "
                "response ignored one of them and the context lacked the opening hours.",
                findings=_findings,
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Context Relevance",
    DESCRIPTION,
    create_context_relevance_scorer_llm,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=context_needs,
    options_model=ContextRelevanceOptions,
)
