"""Faithfulness: how much of the response the context supports (docs/scorers.md, Faithfulness).

Steps: preprocess (judge) lists the claims of the assistant's reply; analyze (judge) checks
each claim against the context: "yes" (supported), "no" (contradicted) or "unsure" (not in the
context, or speculative); the score is `#"yes" / #verdicts * scale` (exact, case-sensitive
"yes", as in Mastra), rounded half up to two decimals, 0 without verdicts; reason (judge).

Context, first found: the `context` option; the item's `request_context["context"]` (or a
request context that is itself a list of strings); the JSON results of the tool calls in the
assistant's messages (Mastra's fallback). With none, the run fails before any judge call with
a `ScorerRunError` (failed step "preprocess") whose message says where to put the context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.judge import JudgeConfig
from core.scorers._answers import Verdicts
from core.scorers._claims import claim_check_scorer, share_of_yes
from core.scorers._context import ContextScorerOptions, missing_context, resolve_context
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, tool_result_context
from core.scorers._options import Scale, build_options
from core.scorers._prompts import as_json, claims_prompt, explain_step, numbered, tagged
from core.scorers._registry import PrebuiltScorer, context_needs
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, ScorerRun, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "FaithfulnessOptions",
    "create_faithfulness_scorer",
    "faithfulness_score",
]

SCORER_ID = "faithfulness-scorer"
NAME = "Faithfulness Scorer"
FACTORY = "create_faithfulness_scorer"
DESCRIPTION = (
    "How faithful the response is to the given context: the share of its claims that the"
    " context supports."
)

INSTRUCTIONS = (
    "You check whether an assistant's response is faithful to a given context. You list the "
    "claims a response makes and decide, using only the context and never your own knowledge, "
    "whether the context supports, contradicts or does not cover each claim. Follow the "
    "definitions given in each request exactly and answer in the format it asks for."
)


class FaithfulnessOptions(ContextScorerOptions):
    """Options of the faithfulness scorer: `scale` (1) and `context` (unset)."""

    scale: Scale = 1.0


faithfulness_score = share_of_yes
"""The share of verdicts exactly "yes" (`core.scorers._claims.share_of_yes`)."""


def _context(run: ScorerRun, settings: FaithfulnessOptions) -> list[str]:
    context = resolve_context(settings.context, run.request_context)
    if context is None:
        context = tool_result_context(run.output) or None
    if context is None:
        raise missing_context(NAME, SCORER_ID, FACTORY)
    return context


def _preprocess_prompt(settings: FaithfulnessOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        _context(ctx.run, settings)  # fail before any judge call when there is no context
        return claims_prompt(assistant_message(ctx.run.output))

    return create_prompt


def _analyze_prompt(settings: FaithfulnessOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        claims = ctx.results.preprocess_step_result["claims"]
        return "\n\n".join(
            [
                "Check each claim below against the context. Use only the context, never your "
                "own knowledge: a claim that is true in the world but absent from the context "
                'is "unsure".',
                "Verdicts:\n"
                '- "yes": the context supports the claim: it states it, or the claim follows '
                "directly from what it states.\n"
                '- "no": the context contradicts the claim.\n'
                '- "unsure": the context neither supports nor contradicts the claim, or the '
                "claim is a speculation or prediction the context does not settle.",
                f"Give exactly one verdict per claim, in the order given: {len(claims)} in "
                'total. Each verdict has "verdict" ("yes", "no" or "unsure", in lower case) '
                'and "reason" (one short sentence, quoting the context when it helps).',
                'Answer with JSON: {"verdicts": [{"verdict": "yes", "reason": "..."}]}',
                'Example: with the context "[0] The Eiffel Tower was finished in 1889." and the '
                'claims ["The Eiffel Tower was finished in 1889.", "The Eiffel Tower was '
                'finished in 1901.", "The Eiffel Tower is 330 m tall."] the answer is\n'
                '{"verdicts": [{"verdict": "yes", "reason": "The context gives 1889."}, '
                '{"verdict": "no", "reason": "The context says 1889, not 1901."}, '
                '{"verdict": "unsure", "reason": "The context does not give the height."}]}',
                tagged("context", numbered(_context(ctx.run, settings))),
                tagged("claims", as_json(claims)),
            ]
        )

    return create_prompt


def _findings(ctx: StepContext) -> str:
    return as_json(
        {
            "claims": ctx.results.preprocess_step_result["claims"],
            "verdicts": ctx.results.analyze_step_result["verdicts"],
        }
    )


def create_faithfulness_scorer(
    model: str | JudgeConfig,
    options: FaithfulnessOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Faithfulness (`faithfulness-scorer`), judged by `model`.

    `options` (or keyword arguments): `scale` (1), `context` (a list of strings used for every
    item; unset: each item's `request_context["context"]`, then the results of the tool calls
    in the output).

    Deviations from Mastra: partial options merge with the defaults; a run with no context at
    all fails (before any judge call) with a message saying where to put the context, where
    Mastra would judge the claims against nothing; `context=[]` is refused at construction.
    """
    settings = build_options(FaithfulnessOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        return faithfulness_score(ctx.results.analyze_step_result["verdicts"], settings.scale)

    return claim_check_scorer(
        scorer_id=SCORER_ID,
        name=NAME,
        description=DESCRIPTION,
        judge=judge_for(model, INSTRUCTIONS),
        claims=("List the claims of the response", _preprocess_prompt(settings)),
        check=("Check each claim against the context", Verdicts, _analyze_prompt(settings)),
        generate_score=generate_score,
        reason=explain_step(
            metric="faithfulness",
            scale=settings.scale,
            meaning='higher means more claims are supported by the context; only "yes" counts',
            example="The score is 0.5 because the context supports the founding date and the "
            "location, but contradicts the revenue figure and does not mention the CEO.",
            findings=_findings,
        ),
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Faithfulness",
    DESCRIPTION,
    create_faithfulness_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    needs=context_needs,
    options_model=FaithfulnessOptions,
)
