"""Context precision: are the useful context pieces ranked first?
(docs/scorers.md, Context Precision)

Steps: preprocess (code) resolves the context: `context_extractor(input, output)`, else the
`context` option, else the item's `request_context["context"]`; a run without any fails here,
before any judge call. Analyze (judge) marks each indexed piece "yes" when it was useful for
producing the response. The score is the mean average precision of those verdicts sorted by
`context_index` (at each useful piece, add #useful so far / position; divide by #useful; 0
when none), times `scale`, rounded half up to two decimals. Reason (judge).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from core.judge import JudgeConfig, PromptStep
from core.scorers._context import ExtractedContextOptions, required_context
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import Scale, build_options
from core.scorers._prompts import as_json, explain_step, numbered, tagged
from core.scorers._registry import PrebuiltScorer, context_needs
from core.scorers._scores import round_to_two_decimals
from core.scorers._text import js_trim
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer, described

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "ContextPrecisionOptions",
    "context_precision_score",
    "create_context_precision_scorer",
]

SCORER_ID = "context-precision-scorer"
NAME = "Context Precision Scorer"
FACTORY = "create_context_precision_scorer"
DESCRIPTION = (
    "Whether the context pieces that were useful for the response come first: mean average"
    " precision of the judge's useful / not useful verdicts, in context order."
)

INSTRUCTIONS = (
    "You evaluate retrieved context for a question-answering system. Given a question, the "
    "response that was produced and the retrieved context pieces, you decide for each piece "
    "whether it was really useful for producing that response. You are strict: loosely "
    "related background does not count. Follow the definitions given in each request exactly "
    "and answer in the format it asks for."
)


class ContextPrecisionOptions(ExtractedContextOptions):
    """Options: `scale` (1), `context`, `context_extractor`."""

    scale: Scale = 1.0


class PrecisionVerdict(BaseModel):
    """One context piece's verdict."""

    context_index: int
    verdict: str
    reason: str


class PrecisionVerdicts(BaseModel):
    """Analyze answer: one verdict per context piece."""

    verdicts: list[PrecisionVerdict]


def context_precision_score(verdicts: Sequence[Mapping[str, Any]], scale: float = 1.0) -> float:
    """Mean average precision of the verdicts sorted by `context_index`, times `scale`,
    rounded; 0 when no piece is useful."""
    ordered = sorted(verdicts, key=lambda item: item["context_index"])
    useful = 0
    precision_sum = 0.0
    for position, item in enumerate(ordered, start=1):
        if js_trim(item["verdict"]).lower() == "yes":
            useful += 1
            precision_sum += useful / position
    average = precision_sum / useful if useful else 0.0
    return round_to_two_decimals(average * scale)


def _resolve_context(
    settings: ContextPrecisionOptions,
) -> Callable[[StepContext], Awaitable[dict[str, Any]]]:
    async def preprocess(ctx: StepContext) -> dict[str, Any]:
        return {"context": await required_context(settings, ctx.run, NAME, SCORER_ID, FACTORY)}

    described(preprocess, "Find the context pieces to judge")
    return preprocess


def _analyze_prompt(ctx: StepContext) -> str:
    context = ctx.results.preprocess_step_result["context"]
    return "\n\n".join(
        [
            "Below are a question, the response that was produced for it, and the context "
            "pieces that were retrieved, each with its index. For each piece, decide whether "
            "it was useful for producing this response.",
            "Verdicts:\n"
            '- "yes": the piece clearly contributes information that the response uses or '
            "needs.\n"
            '- "no": the piece is off-topic, or it is background that does not contribute to '
            "this response, even if it is on the same subject. Be strict: when in doubt, "
            '"no".',
            f"Give one verdict per piece, in index order ({len(context)} in total). Each "
            'verdict has "context_index" (the piece\'s index, from 0), "verdict" ("yes" or '
            '"no", in lower case) and "reason" (one short sentence).',
            'Answer with JSON: {"verdicts": [{"context_index": 0, "verdict": "yes", '
            '"reason": "..."}]}',
            'Example: for the question "What does aspirin treat?", the response "Aspirin '
            'relieves pain and reduces fever." and the pieces "[0] Aspirin is used to relieve '
            'pain and fever." and "[1] Aspirin was first synthesised in 1897." the answer is\n'
            '{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "Gives the uses '
            'the response states."}, {"context_index": 1, "verdict": "no", "reason": '
            '"History, not used in the response."}]}',
            tagged("question", user_message(ctx.run.input)),
            tagged("response", assistant_message(ctx.run.output)),
            tagged("context", numbered(context)),
        ]
    )


def create_context_precision_scorer(
    model: str | JudgeConfig,
    options: ContextPrecisionOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Context precision (`context-precision-scorer`), judged by `model`.

    `options` (or keyword arguments): `scale` (1), `context` (a list of strings for every
    item), `context_extractor` (a function `(input, output) -> list[str]`, sync or async).
    With neither, each item's `request_context["context"]` is used.

    Deviations from Mastra: partial options merge with the defaults; construction accepts no
    context at all (each item may bring its own; a run without any fails in preprocess, before
    any judge call, saying where to put it); a preprocess step (code) records the context
    used as `{"context": [...]}`, where Mastra has no preprocess result.
    """
    settings = build_options(ContextPrecisionOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        verdicts = ctx.results.analyze_step_result["verdicts"]
        return context_precision_score(verdicts, settings.scale)

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(_resolve_context(settings))
        .analyze(
            PromptStep(
                description="Mark each context piece useful or not",
                output_schema=PrecisionVerdicts,
                create_prompt=_analyze_prompt,
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="context precision",
                scale=settings.scale,
                meaning="higher means the useful context pieces come earlier in the list",
                example="The score is 0.83 because both useful pieces are near the top "
                "(positions 1 and 3), with one unhelpful piece ranked between them.",
                findings=lambda ctx: as_json(ctx.results.analyze_step_result["verdicts"]),
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Context Precision",
    DESCRIPTION,
    create_context_precision_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=context_needs,
    options_model=ContextPrecisionOptions,
)
