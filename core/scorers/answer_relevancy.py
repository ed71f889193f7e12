"""Answer relevancy: how much of the response addresses the user's question.
(docs/scorers.md, Answer Relevancy)

Steps: preprocess (judge) splits the assistant's reply into statements; analyze (judge) marks
each statement "yes" (answers the question), "unsure" (partly relevant) or "no"; the score is
`(#yes + uncertainty_weight * #unsure) / #verdicts * scale`, rounded half up to two decimals
(verdicts trimmed and lower-cased first; 0 when there are none); reason (judge) explains it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from core.judge import JudgeConfig, PromptStep
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import ScorerOptions, build_options
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers._text import js_trim
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "AnswerRelevancyOptions",
    "answer_relevancy_score",
    "create_answer_relevancy_scorer",
]

SCORER_ID = "answer-relevancy-scorer"
NAME = "Answer Relevancy Scorer"
DESCRIPTION = (
    "How much of the response addresses the user's question: the judge splits the response"
    " into statements and rates each one's relevance (yes / unsure / no)."
)

INSTRUCTIONS = (
    "You evaluate whether an assistant's response stays on the user's question. You split "
    "responses into statements and rate how relevant each one is to the question; you judge "
    "relevance, not truth or style. Follow the definitions given in each request exactly and "
    "answer in the format it asks for."
)


class AnswerRelevancyOptions(ScorerOptions):
    """Options of the answer-relevancy scorer; each one defaults on its own."""

    uncertainty_weight: float = Field(0.3, ge=0, le=1)
    """What an "unsure" verdict counts for (a "yes" counts 1, a "no" 0)."""
    scale: float = Field(1.0, gt=0)
    """Multiplies the 0-1 score."""


class Statements(BaseModel):
    """Preprocess answer: the response cut into statements."""

    statements: list[str]


class RelevancyVerdict(BaseModel):
    """One statement's relevance."""

    result: str
    reason: str


class RelevancyVerdicts(BaseModel):
    """Analyze answer: one verdict per statement, in order."""

    results: list[RelevancyVerdict]


def answer_relevancy_score(
    results: Sequence[Mapping[str, Any]], uncertainty_weight: float = 0.3, scale: float = 1.0
) -> float:
    """`(#yes + uncertainty_weight * #unsure) / #results * scale`, rounded; 0 without results."""
    if not results:
        return 0.0
    weights = {"yes": 1.0, "unsure": uncertainty_weight}
    total = sum(weights.get(js_trim(item["result"]).lower(), 0.0) for item in results)
    return round_to_two_decimals(total / len(results) * scale)


def _extract_prompt(ctx: StepContext) -> str:
    response = assistant_message(ctx.run.output)
    return "\n\n".join(
        [
            "Split the assistant's response below into statements, so that each statement "
            "can later be judged on its own.",
            "How to split:\n"
            "- A statement is one claim, instruction or piece of information that makes sense "
            "by itself; replace a pronoun by what it refers to when that is needed.\n"
            '- A sentence that joins separate points (with "and", commas or a list) becomes '
            "one statement per point.\n"
            "- A very short answer (one word, a number, yes/no) stays one statement, word for "
            "word.\n"
            "- An error message or a refusal stays one statement.\n"
            "- Only restate what the response says: add nothing, correct nothing.\n"
            "- If the response is empty, return an empty list.",
            'Answer with JSON: {"statements": ["...", "..."]}',
            'Example: for the response "Paris is the capital of France and its largest city. '
            'Visit the Louvre." the answer is\n'
            '{"statements": ["Paris is the capital of France.", '
            '"Paris is the largest city of France.", "Visit the Louvre."]}',
            tagged("response", response),
        ]
    )


def _analyze_prompt(ctx: StepContext) -> str:
    statements = ctx.results.preprocess_step_result["statements"]
    return "\n\n".join(
        [
            "For each statement below, decide how relevant it is to the user's question. "
            "Judge relevance, not whether the statement is true.",
            "Verdicts:\n"
            '- "yes": the statement answers the question, or gives information the user '
            "asked for.\n"
            '- "unsure": the statement is only partly relevant: useful background closely tied '
            "to the question, or an attempt to answer it that is wrong or doubtful.\n"
            '- "no": the statement is unrelated to the question, or only mentions its topic '
            "without helping to answer it.",
            f"Give exactly one verdict per statement, in the order given: {len(statements)} "
            'in total. Each verdict has "result" ("yes", "unsure" or "no") and "reason" (one '
            "short sentence).",
            'Answer with JSON: {"results": [{"result": "yes", "reason": "..."}]}',
            'Example: for the question "What is the capital of France?" and the statements '
            '["Paris is the capital of France.", "France is in Europe.", "I like pizza."] '
            "the answer is\n"
            '{"results": [{"result": "yes", "reason": "It names the capital."}, '
            '{"result": "unsure", "reason": "Background on France, not the answer."}, '
            '{"result": "no", "reason": "Unrelated to the question."}]}',
            "The question is a JSON string:",
            tagged("question", as_json(user_message(ctx.run.input))),
            tagged("statements", as_json(statements)),
        ]
    )


def _findings(ctx: StepContext) -> str:
    return as_json(
        {
            "question": user_message(ctx.run.input),
            "verdicts": ctx.results.analyze_step_result["results"],
        }
    )


def create_answer_relevancy_scorer(
    model: str | JudgeConfig,
    options: AnswerRelevancyOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Answer relevancy (`answer-relevancy-scorer`), judged by `model`.

    `options` (or keyword arguments): `uncertainty_weight` (0.3), `scale` (1).

    Deviation from Mastra: a partial options object (say `{"scale": 10}`) is merged with the
    defaults. Mastra replaces its defaults with it, so the missing field is undefined and the
    score becomes NaN.
    """
    settings = build_options(AnswerRelevancyOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        results = ctx.results.analyze_step_result["results"]
        return answer_relevancy_score(results, settings.uncertainty_weight, settings.scale)

    return (
        create_scorer(
            id=SCORER_ID,
            name=NAME,
            description=DESCRIPTION,
            judge=judge_for(model, INSTRUCTIONS),
        )
        .preprocess(
            PromptStep(
                description="Split the response into statements",
                output_schema=Statements,
                create_prompt=_extract_prompt,
            )
        )
        .analyze(
            PromptStep(
                description="Rate each statement's relevance to the question",
                output_schema=RelevancyVerdicts,
                create_prompt=_analyze_prompt,
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric="answer relevancy",
                scale=settings.scale,
                meaning="higher means more of the response addresses the question",
                example="The score is 0.67 because two of the three statements answer the "
                "question directly, while one is about an unrelated topic.",
                findings=_findings,
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Answer Relevancy",
    DESCRIPTION,
    create_answer_relevancy_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=AnswerRelevancyOptions,
)
