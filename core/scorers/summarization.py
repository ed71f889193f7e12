"""Summarization: is the summary faithful to its source, and does it cover it?
(docs/scorers.md, Summarization)

The summary is the last assistant message with text. The source is `source_extractor(input,
output)`, else the `source` option, else the user's message (the run's input).

Steps: preprocess (judge, one call) checks each claim of the summary against the source
(alignment) and writes up to `max_questions` yes/no questions whose answer in the source is
"yes"; analyze (judge) sees only the summary and those questions and says which ones the
summary answers (coverage). Score: `min(alignment, coverage) * scale`, rounded half up to two
decimals, where alignment = #supported / #claims and coverage = #answered among the first
`min(#questions, max_questions)` coverage entries divided by that number (missing entries
count as unanswered, extra ones are ignored); 0 when there is no claim or no question.
Reason (judge).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from core.judge import JudgeConfig, PromptStep
from core.scorers._context import MissingInputError
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import ScorerOptions, build_options, call_maybe_async
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "SummarizationOptions",
    "create_summarization_scorer",
    "summarization_score",
]

SCORER_ID = "summarization-scorer"
NAME = "Summarization Scorer"
DESCRIPTION = (
    "Summary quality: the lower of alignment (share of the summary's claims the source"
    " supports) and coverage (share of the source's key questions the summary answers)."
)

INSTRUCTIONS = (
    "You evaluate summaries. You check whether each claim of a summary is supported by its "
    "source text, you write questions about the source's key points, and you decide which of "
    "those questions a summary answers. Use only the texts you are given, never your own "
    "knowledge. Follow the definitions given in each request exactly and answer in the format "
    "it asks for."
)


class SummarizationOptions(ScorerOptions):
    """Options of the summarization scorer; each one defaults on its own."""

    source: str | None = None
    """The source text for every item; else each item's user message."""
    source_extractor: Callable[..., Any] | None = None
    """A function (input, output) -> str, sync or async, giving each item's source; wins
    over `source`."""
    max_questions: int = Field(10, ge=1)
    """How many coverage questions the judge writes, at most."""
    scale: float = Field(1.0, gt=0)
    """Multiplies the 0-1 score."""


class ClaimAlignment(BaseModel):
    """One summary claim, checked against the source."""

    claim: str
    supported: bool
    reason: str


class AlignmentAndQuestions(BaseModel):
    """Preprocess answer."""

    alignment: list[ClaimAlignment]
    questions: list[str]


class QuestionCoverage(BaseModel):
    """Whether the summary answers one question."""

    question: str
    answered: bool
    reason: str


class Coverage(BaseModel):
    """Analyze answer."""

    coverage: list[QuestionCoverage]


def summarization_score(
    alignment: Sequence[Mapping[str, Any]],
    questions: Sequence[str],
    coverage: Sequence[Mapping[str, Any]],
    *,
    max_questions: int = 10,
    scale: float = 1.0,
) -> float:
    """`min(alignment, coverage) * scale`, rounded; 0 without claims or questions."""
    if not alignment or not questions:
        return 0.0
    aligned = sum(1 for item in alignment if item["supported"]) / len(alignment)
    counted = min(len(questions), max_questions)
    answered = sum(1 for item in coverage[:counted] if item["answered"])
    return round_to_two_decimals(min(aligned, answered / counted) * scale)


async def _source(ctx: StepContext, settings: SummarizationOptions) -> str:
    if settings.source_extractor is not None:
        value = await call_maybe_async(settings.source_extractor, ctx.run.input, ctx.run.output)
    elif settings.source is not None:
        value = settings.source
    else:
        value = user_message(ctx.run.input)
    if not isinstance(value, str) or not value.strip():
        raise MissingInputError(
            f"{NAME} needs the source text that was summarised, and it is empty: give it as "
            "the item's input, or pass options={'source': ...} (or a source_extractor) to "
            "create_summarization_scorer().",
            scorer_id=SCORER_ID,
            missing="source",
        )
    return value


def _preprocess_prompt(settings: SummarizationOptions) -> Callable[[StepContext], Awaitable[str]]:
    async def create_prompt(ctx: StepContext) -> str:
        source = await _source(ctx, settings)
        limit = settings.max_questions
        return "\n\n".join(
            [
                "Below are a source text and a summary of it. Do two things.",
                '1. Alignment ("alignment"): list the claims the summary makes (one fact or '
                "statement each), and for each say whether the source supports it: "
                '"supported" is true when the source states it or it follows directly from '
                "the source, false when the source contradicts it or does not mention it. "
                'Give "claim", "supported" and "reason" (one short sentence). An empty '
                "summary has no claims.",
                f'2. Questions ("questions"): write up to {limit} closed questions about the '
                'most important points of the source, each answered "yes" by the source. '
                "Cover the main points rather than details, one point per question. Write "
                "them from the source only, not from the summary.",
                'Answer with JSON: {"alignment": [{"claim": "...", "supported": true, '
                '"reason": "..."}], "questions": ["...?"]}',
                'Example: for the source "The city council approved a new park in March. It '
                'will open in 2026 and cost 2 million euros." and the summary "The council '
                'approved a park that opens in 2025." the answer is\n'
                '{"alignment": [{"claim": "The council approved a park.", "supported": true, '
                '"reason": "Stated in the source."}, {"claim": "The park opens in 2025.", '
                '"supported": false, "reason": "The source says 2026."}], "questions": ["Did '
                'the city council approve a new park?", "Will the park open in 2026?", "Will '
                'the park cost 2 million euros?"]}',
                tagged("source", source),
                tagged("summary", assistant_message(ctx.run.output)),
            ]
        )

    return create_prompt


def _questions(ctx: StepContext, settings: SummarizationOptions) -> list[str]:
    questions: list[str] = ctx.results.preprocess_step_result["questions"]
    return questions[: settings.max_questions]


def _analyze_prompt(settings: SummarizationOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        questions = _questions(ctx, settings)
        return "\n\n".join(
            [
                "Below are a summary and a list of yes/no questions. For each question, "
                "decide whether the summary alone answers it: read only the summary, and use "
                "no other knowledge.",
                '"answered" is true when the summary gives the information needed to answer '
                '"yes" to the question; false when it leaves the point out, is too vague to '
                "answer, or says something else.",
                f"Give exactly one entry per question, in the order given: {len(questions)} "
                'in total. Each entry has "question" (copied), "answered" (true or false) and '
                '"reason" (one short sentence).',
                'Answer with JSON: {"coverage": [{"question": "...?", "answered": true, '
                '"reason": "..."}]}',
                'Example: for the summary "The council approved a park that opens in 2026." '
                'and the questions ["Did the city council approve a new park?", "Will the park '
                'cost 2 million euros?"] the answer is\n'
                '{"coverage": [{"question": "Did the city council approve a new park?", '
                '"answered": true, "reason": "The summary says so."}, {"question": "Will the '
                'park cost 2 million euros?", "answered": false, "reason": "The cost is not '
                'mentioned."}]}',
                tagged("summary", assistant_message(ctx.run.output)),
                tagged("questions", as_json(questions)),
            ]
        )

    return create_prompt


def _findings(ctx: StepContext) -> str:
    return as_json(
        {
            "alignment": ctx.results.preprocess_step_result["alignment"],
            "coverage": ctx.results.analyze_step_result["coverage"],
        }
    )


def create_summarization_scorer(
    model: str | JudgeConfig,
    options: SummarizationOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Summarization (`summarization-scorer`), judged by `model`.

    `options` (or keyword arguments): `scale` (1), `source` (the source text for every item;
    else each item's user message), `source_extractor` (a function `(input, output) -> str`,
    sync or async, that wins over `source`), `max_questions` (10, at least 1).

    Deviations from Mastra: partial options merge with the defaults; an empty source fails the
    run in preprocess, before any judge call, saying where to put it.
    """
    settings = build_options(SummarizationOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        extracted = ctx.results.preprocess_step_result
        return summarization_score(
            extracted["alignment"],
            extracted["questions"],
            ctx.results.analyze_step_result["coverage"],
            max_questions=settings.max_questions,
            scale=settings.scale,
        )

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(
            PromptStep(
                description="Check the summary's claims and write questions about the source",
                output_schema=AlignmentAndQuestions,
                create_prompt=_preprocess_prompt(settings),
            )
        )
        .analyze(
            PromptStep(
                description="Check which questions the summary answers",
                output_schema=Coverage,
                create_prompt=_analyze_prompt(settings),
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="summarization",
                scale=settings.scale,
                meaning="the lower of alignment (claims supported by the source) and coverage "
                "(key questions the summary answers)",
                example="The score is 0.5 because, although every claim of the summary is "
                "supported by the source, it answers only half of the key questions, leaving "
                "out the cost and the opening date.",
                findings=_findings,
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Summarization",
    DESCRIPTION,
    create_summarization_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=SummarizationOptions,
)
