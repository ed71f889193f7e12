"""Hallucination: how much of the response the context does not back.
(docs/scorers.md, Hallucination)

Steps: preprocess (judge) lists the claims of the assistant's reply; analyze (judge) marks each
claim "yes" when it is a hallucination (contradicts the context, or asserts what the context
does not support) and "no" otherwise; the score is `#"yes" / #verdicts * scale` (exact,
case-sensitive "yes"), rounded half up to two decimals, 0 without verdicts. Higher is worse.
Reason (judge).

Context, first found: `get_context(ctx, step)` (called for analyze and for the reason, sync or
async); the `context` option; the item's `request_context["context"]` (or a request context
that is itself a list of strings). Without `get_context`, a run with no context fails before
any judge call (failed step "preprocess"); with it, an empty answer fails the analyze step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel

from core.judge import JudgeConfig
from core.scorers._claims import claim_check_scorer, share_of_yes
from core.scorers._context import (
    ContextScorerOptions,
    context_list,
    missing_context,
    resolve_context,
)
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message
from core.scorers._options import Scale, build_options, call_maybe_async
from core.scorers._prompts import as_json, claims_prompt, explain_step, numbered, tagged
from core.scorers._registry import PrebuiltScorer, context_needs
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "HallucinationOptions",
    "create_hallucination_scorer",
    "hallucination_score",
]

SCORER_ID = "hallucination-scorer"
NAME = "Hallucination Scorer"
FACTORY = "create_hallucination_scorer"
DESCRIPTION = (
    "How much of the response is not backed by the given context: the share of its claims"
    " that contradict the context or go beyond it (higher is worse)."
)

INSTRUCTIONS = (
    "You detect hallucinations: claims in an assistant's response that a given context "
    "contradicts or does not support. You judge only against the context, never against your "
    "own knowledge. Follow the definitions given in each request exactly and answer in the "
    "format it asks for."
)

ContextGetter = Callable[..., Any]
"""`(ctx, step) -> list[str]`, sync or async."""


class HallucinationOptions(ContextScorerOptions):
    """Options of the hallucination scorer: `scale` (1), `context`, `get_context`."""

    get_context: ContextGetter | None = None
    """A function (ctx, step) -> list[str], sync or async, giving the context at the
    "analyze" and "generateReason" steps; wins over `context`."""
    scale: Scale = 1.0


class HallucinationVerdict(BaseModel):
    """One claim's verdict ("yes" means hallucinated)."""

    statement: str
    verdict: str
    reason: str


class HallucinationVerdicts(BaseModel):
    """Analyze answer: one verdict per claim, in order."""

    verdicts: list[HallucinationVerdict]


hallucination_score = share_of_yes
"""The share of verdicts exactly "yes" (`core.scorers._claims.share_of_yes`)."""


async def _context(ctx: StepContext, step: str, settings: HallucinationOptions) -> list[str]:
    if settings.get_context is not None:
        context = context_list(await call_maybe_async(settings.get_context, ctx, step))
    else:
        context = resolve_context(settings.context, ctx.run.request_context)
    if context is None:
        raise missing_context(NAME, SCORER_ID, FACTORY)
    return context


def _preprocess_prompt(settings: HallucinationOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        # Fail before any judge call when no context can be found (get_context is only
        # asked at the steps that need it, as in Mastra).
        static = resolve_context(settings.context, ctx.run.request_context)
        if settings.get_context is None and static is None:
            raise missing_context(NAME, SCORER_ID, FACTORY)
        return claims_prompt(assistant_message(ctx.run.output))

    return create_prompt


def _analyze_prompt(settings: HallucinationOptions) -> Callable[[StepContext], Awaitable[str]]:
    async def create_prompt(ctx: StepContext) -> str:
        claims = ctx.results.preprocess_step_result["claims"]
        context = await _context(ctx, "analyze", settings)
        return "\n\n".join(
            [
                "Decide, for each claim below, whether it is a hallucination with respect to "
                "the context. Use only the context, never your own knowledge: a claim that is "
                "true in the world but not supported by the context is a hallucination.",
                "Verdicts:\n"
                '- "yes" (hallucination): the claim contradicts the context, or asserts '
                "something the context does not support, including subjective or speculative "
                "statements about facts the context does not mention.\n"
                '- "no": the context supports the claim. These are still "no": a less precise '
                'date or figure than the context gives ("in the 1880s" for 1889), a reasonable '
                "approximation, or leaving details out.",
                f"Give exactly one verdict per claim, in the order given: {len(claims)} in "
                'total. Each verdict has "statement" (the claim, copied), "verdict" ("yes" or '
                '"no", in lower case) and "reason" (one short sentence).',
                'Answer with JSON: {"verdicts": [{"statement": "...", "verdict": "no", '
                '"reason": "..."}]}',
                'Example: with the context "[0] Marie Curie won the Nobel Prize in Physics in '
                '1903." and the claims ["Marie Curie won a Nobel Prize in the early 1900s.", '
                '"Marie Curie won the Nobel Prize in Chemistry in 1903."] the answer is\n'
                '{"verdicts": [{"statement": "Marie Curie won a Nobel Prize in the early '
                '1900s.", "verdict": "no", "reason": "A less precise date for the 1903 '
                'prize."}, {"statement": "Marie Curie won the Nobel Prize in Chemistry in '
                '1903.", "verdict": "yes", "reason": "The context says Physics, not '
                'Chemistry."}]}',
                tagged("context", numbered(context)),
                tagged("claims", as_json(claims)),
            ]
        )

    return create_prompt


def _findings(settings: HallucinationOptions) -> Callable[[StepContext], Awaitable[str]]:
    async def findings(ctx: StepContext) -> str:
        return as_json(
            {
                "context": await _context(ctx, "generateReason", settings),
                "verdicts": ctx.results.analyze_step_result["verdicts"],
            }
        )

    return findings


def create_hallucination_scorer(
    model: str | JudgeConfig,
    options: HallucinationOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Hallucination (`hallucination-scorer`), judged by `model`. Higher is worse.

    `options` (or keyword arguments): `scale` (1), `context` (a list of strings used for every
    item; unset: each item's `request_context["context"]`), `get_context` (a function
    `(ctx, step) -> list[str]`, sync or async, that wins over both).

    Deviations from Mastra: partial options merge with the defaults; a run with no context
    fails with a message saying where to put it (Mastra judges against an empty context,
    which marks every claim as hallucinated); `context=[]` is refused at construction.
    """
    settings = build_options(HallucinationOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        return hallucination_score(ctx.results.analyze_step_result["verdicts"], settings.scale)

    return claim_check_scorer(
        scorer_id=SCORER_ID,
        name=NAME,
        description=DESCRIPTION,
        judge=judge_for(model, INSTRUCTIONS),
        claims=("List the claims of the response", _preprocess_prompt(settings)),
        check=(
            "Mark each claim the context does not back",
            HallucinationVerdicts,
            _analyze_prompt(settings),
        ),
        generate_score=generate_score,
        reason=explain_step(
            metric="hallucination",
            scale=settings.scale,
            meaning='higher is worse: the share of claims marked "yes" (hallucinated)',
            example="The score is 0.25 because one of the four claims, the founding year, "
            "contradicts the context, while the other three are supported by it.",
            findings=_findings(settings),
        ),
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Hallucination",
    DESCRIPTION,
    create_hallucination_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=context_needs,
    options_model=HallucinationOptions,
)
