"""Context recall: how much of the expected answer the context covers.
(docs/scorers.md, Context Recall)

Steps: preprocess (judge) lists the claims of the ground truth (a non-string ground truth is
JSON-encoded); analyze (judge) says for each claim whether the context supports it ("yes") or
not ("no"); the score is `min(1, #"yes" / #claims) * scale` (trimmed, lower-cased; the
denominator is the number of claims, not of verdicts), rounded half up to two decimals; 0 when
the item has no ground truth or the ground truth has no claim. Reason (judge).

Context: `context_extractor(input, output)`, else the `context` option, else the item's
`request_context["context"]`; a run without any fails before any judge call (failed step
"preprocess"), saying where to put it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from core.judge import JudgeConfig
from core.scorers._answers import Verdicts
from core.scorers._claims import claim_check_scorer
from core.scorers._context import ExtractedContextOptions, required_context
from core.scorers._judge_setup import judge_for
from core.scorers._options import Scale, build_options
from core.scorers._prompts import as_json, claims_prompt, explain_step, numbered, tagged
from core.scorers._registry import DataNeed, PrebuiltScorer, context_needs, ground_truth_needs
from core.scorers._scores import round_to_two_decimals
from core.scorers._text import js_trim
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, ScorerRun, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "ContextRecallOptions",
    "context_recall_score",
    "create_context_recall_scorer",
]

SCORER_ID = "context-recall-scorer"
NAME = "Context Recall Scorer"
FACTORY = "create_context_recall_scorer"
DESCRIPTION = (
    "How much of the expected answer (ground truth) the context supports: the share of the"
    " ground truth's claims found in the context."
)

INSTRUCTIONS = (
    "You evaluate whether retrieved context contains what is needed to give an expected "
    "answer. You list the claims of the expected answer and decide, using only the context "
    "and never your own knowledge, whether each claim can be attributed to the context. "
    "Follow the definitions given in each request exactly and answer in the format it asks "
    "for."
)


class ContextRecallOptions(ExtractedContextOptions):
    """Options: `scale` (1), `context`, `context_extractor`."""

    scale: Scale = 1.0


def ground_truth_text(value: Any) -> str | None:
    """The ground truth as text (JSON for non-strings); None when absent or blank."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if text.strip() else None


def context_recall_score(
    claims: Sequence[str], verdicts: Sequence[Mapping[str, Any]], scale: float = 1.0
) -> float:
    """`min(1, #"yes" / #claims) * scale`, rounded; 0 without claims."""
    if not claims:
        return 0.0
    attributed = sum(1 for item in verdicts if js_trim(item["verdict"]).lower() == "yes")
    return round_to_two_decimals(min(1.0, attributed / len(claims)) * scale)


async def _context(run: ScorerRun, settings: ContextRecallOptions) -> list[str]:
    return await required_context(settings, run, NAME, SCORER_ID, FACTORY)


def _preprocess_prompt(settings: ContextRecallOptions) -> Callable[[StepContext], Awaitable[str]]:
    async def create_prompt(ctx: StepContext) -> str:
        await _context(ctx.run, settings)  # fail before any judge call when there is none
        text = ground_truth_text(ctx.run.ground_truth)
        return claims_prompt("" if text is None else text, "expected answer")

    return create_prompt


def _analyze_prompt(settings: ContextRecallOptions) -> Callable[[StepContext], Awaitable[str]]:
    async def create_prompt(ctx: StepContext) -> str:
        claims = ctx.results.preprocess_step_result["claims"]
        context = await _context(ctx.run, settings)
        return "\n\n".join(
            [
                "Below are context pieces and the claims of an expected answer. For each "
                "claim, decide whether it can be attributed to the context. Use only the "
                "context, never your own knowledge.",
                "Verdicts:\n"
                '- "yes": one or more context pieces state the claim, or it follows directly '
                "from them.\n"
                '- "no": the context does not contain the claim (or contradicts it).',
                f"Give exactly one verdict per claim, in the order given: {len(claims)} in "
                'total. Each verdict has "verdict" ("yes" or "no", in lower case) and '
                '"reason" (one short sentence; name the supporting piece by its index when '
                'the answer is "yes").',
                'Answer with JSON: {"verdicts": [{"verdict": "yes", "reason": "..."}]}',
                'Example: with the context "[0] The Nile flows through Egypt and Sudan." and '
                'the claims ["The Nile flows through Egypt.", "The Nile is 6,650 km long."] the '
                "answer is\n"
                '{"verdicts": [{"verdict": "yes", "reason": "Piece 0 names Egypt."}, '
                '{"verdict": "no", "reason": "No piece gives the length."}]}',
                tagged("context", numbered(context)),
                tagged("claims", as_json(claims)),
            ]
        )

    return create_prompt


def _findings(ctx: StepContext) -> str:
    if ground_truth_text(ctx.run.ground_truth) is None:
        return (
            "The item has no ground truth (expected answer), so nothing could be recalled: "
            "the score is 0."
        )
    return as_json(
        {
            "claims": ctx.results.preprocess_step_result["claims"],
            "verdicts": ctx.results.analyze_step_result["verdicts"],
        }
    )


def create_context_recall_scorer(
    model: str | JudgeConfig,
    options: ContextRecallOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Context recall (`context-recall-scorer`), judged by `model`. Needs each item's
    `ground_truth` (an item without one scores 0, as in Mastra).

    `options` (or keyword arguments): `scale` (1), `context` (a list of strings for every
    item), `context_extractor` (a function `(input, output) -> list[str]`, sync or async).
    Without either, each item's `request_context["context"]` is used.

    Deviations from Mastra: partial options merge with the defaults; construction accepts no
    context at all (each item may bring its own; a run without any fails in preprocess,
    before any judge call, saying where to put it).
    """
    settings = build_options(ContextRecallOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        if ground_truth_text(ctx.run.ground_truth) is None:
            return 0.0
        claims = ctx.results.preprocess_step_result["claims"]
        verdicts = ctx.results.analyze_step_result["verdicts"]
        return context_recall_score(claims, verdicts, settings.scale)

    return claim_check_scorer(
        scorer_id=SCORER_ID,
        name=NAME,
        description=DESCRIPTION,
        judge=judge_for(model, INSTRUCTIONS),
        claims=("List the claims of the ground truth", _preprocess_prompt(settings)),
        check=("Check each claim against the context", Verdicts, _analyze_prompt(settings)),
        generate_score=generate_score,
        reason=explain_step(
            metric="context recall",
            scale=settings.scale,
            meaning="higher means the context covers more of the expected answer",
            example="The score is 0.67 because the context supports two of the three "
            "claims of the expected answer, but says nothing about the population figure.",
            findings=_findings,
        ),
    )


def _needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """The context, and the ground truth whose claims it must cover (without one, every item
    would score 0)."""
    return (*context_needs(options), *ground_truth_needs(options))


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Context Recall",
    DESCRIPTION,
    create_context_recall_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=_needs,
    options_model=ContextRecallOptions,
)
