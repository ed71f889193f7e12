"""Rubric: does the response pass every required criterion of a rubric? (docs/scorers.md, Rubric)

The rubric is the `criteria` argument (a string, one criterion per line, list markers
stripped, each required; or a list of strings / `{"id", "description", "required"}` dicts),
else the item's `request_context["rubric"]`, else the `rubric` key of a dict input.

Steps: analyze (judge) marks each criterion satisfied or not, copying whether it is required.
Score (binary, not rounded): 1 (unscaled) when there is no rubric or the judge returns no
criterion; otherwise the gating criteria are those the judge marked required (all of them
when none is marked), and the score is `scale` when every gating criterion is satisfied,
else 0. Reason (code): one line per criterion with its mark.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError

from core.errors import ScorerConfigError
from core.judge import JudgeConfig, PromptStep
from core.scorers._context import item_value
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, user_message
from core.scorers._options import OptionType, ScorerOptions, build_options
from core.scorers._prompts import tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import format_score
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, ScorerRun, StepContext, create_scorer, described

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "RubricCriterion",
    "RubricOptions",
    "create_rubric_scorer",
    "parse_rubric",
    "rubric_score",
]

SCORER_ID = "rubric-scorer"
NAME = "Rubric Scorer"
DESCRIPTION = (
    "Pass/fail against a rubric: 1 when the response meets every required criterion, else 0"
    " (the rubric is given once or per item)."
)

INSTRUCTIONS = (
    "You grade responses against rubrics. For each criterion you decide, strictly and "
    "independently, whether the response fully satisfies it. You do not reward effort or "
    "near misses, and you do not invent criteria. Follow the definitions given in each "
    "request exactly and answer in the format it asks for."
)

_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|\[[ xX]?\])\s*")


class RubricCriterion(BaseModel):
    """One criterion of a rubric."""

    id: str | None = None
    description: str
    required: bool = True


class RubricOptions(ScorerOptions):
    """Options of the rubric scorer."""

    criteria: Annotated[Any, OptionType("str")] = None
    """The rubric, one criterion per line (each required), or a list of
    {'description', 'required'} dicts; unset: each item's request_context['rubric']."""
    scale: float = Field(1.0, gt=0)
    """The score of a pass."""


class CriterionGrade(BaseModel):
    """The judge's mark for one criterion."""

    criterion: str
    satisfied: bool
    required: bool
    reasoning: str


class RubricGrades(BaseModel):
    """Analyze answer."""

    criteria: list[CriterionGrade]
    overallAssessment: str


def parse_rubric(rubric: Any) -> list[RubricCriterion]:
    """The criteria of a rubric: a string (one required criterion per non-empty line, list
    markers stripped) or a list of strings, dicts or `RubricCriterion`; None gives []."""
    if rubric is None:
        return []
    if isinstance(rubric, str):
        lines = (_LIST_MARKER.sub("", line).strip() for line in rubric.splitlines())
        return [RubricCriterion(description=line) for line in lines if line]
    if isinstance(rubric, Sequence):
        return [_criterion(item) for item in rubric]
    raise TypeError(f"a rubric must be a string or a list of criteria, not {type(rubric).__name__}")


def _criterion(item: Any) -> RubricCriterion:
    if isinstance(item, RubricCriterion):
        return item
    if isinstance(item, str):
        return RubricCriterion(description=item)
    if isinstance(item, Mapping):
        try:
            return RubricCriterion.model_validate(item)
        except ValidationError:
            pass
    raise TypeError(
        "each rubric criterion must be a string or a {'description', 'required'?, 'id'?} dict, "
        f"got {item!r}"
    )


def rubric_score(grades: Sequence[Mapping[str, Any]], scale: float = 1.0) -> float:
    """`scale` when every gating criterion is satisfied, else 0; 1 without grades."""
    if not grades:
        return 1.0
    gating = [grade for grade in grades if grade["required"]] or list(grades)
    return scale if all(grade["satisfied"] for grade in gating) else 0.0


def _resolve(criteria: list[RubricCriterion] | None, run: ScorerRun) -> list[RubricCriterion]:
    if criteria is not None:
        return criteria
    rubric = item_value(run.request_context, "rubric")
    if rubric is None:
        rubric = item_value(run.input, "rubric")
    return parse_rubric(rubric)


def _rubric_lines(criteria: list[RubricCriterion]) -> str:
    return "\n".join(
        f"{index}. [{'required' if item.required else 'optional'}]"
        f"{f' ({item.id})' if item.id else ''} {item.description}"
        for index, item in enumerate(criteria, start=1)
    )


def _analyze_prompt(criteria: list[RubricCriterion] | None) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        response = assistant_message(ctx.run.output)  # refuses an unreadable output early
        rubric = _resolve(criteria, ctx.run)
        if not rubric:
            return (
                "No rubric was provided for this item, so there is nothing to grade. Answer "
                'with exactly: {"criteria": [], "overallAssessment": "No rubric provided; '
                'nothing to grade."}'
            )
        return "\n\n".join(
            [
                "Grade the response below against each criterion of the rubric.",
                "Rules:\n"
                '- "satisfied" is true only when the response fully meets the criterion; a '
                "partial or approximate fulfilment is false.\n"
                "- Judge each criterion on its own, from the response's content only.\n"
                f"- Give exactly one entry per criterion, in the rubric's order: "
                f'{len(rubric)} in total. Each entry has "criterion" (its text, copied), '
                '"satisfied" (true or false), "required" (true for a [required] criterion, '
                'false for an [optional] one, as marked in the rubric) and "reasoning" (one '
                "short sentence).\n"
                '- Then sum up in "overallAssessment" (one or two sentences).',
                'Answer with JSON: {"criteria": [{"criterion": "...", "satisfied": true, '
                '"required": true, "reasoning": "..."}], "overallAssessment": "..."}',
                'Example: for the rubric "1. [required] Mentions the deadline" and "2. '
                '[optional] Uses a friendly tone", a response that gives the deadline curtly '
                "gets\n"
                '{"criteria": [{"criterion": "Mentions the deadline", "satisfied": true, '
                '"required": true, "reasoning": "States the 5 May deadline."}, {"criterion": '
                '"Uses a friendly tone", "satisfied": false, "required": false, "reasoning": '
                '"The tone is curt."}], "overallAssessment": "Meets the required criterion '
                'only."}',
                tagged("rubric", _rubric_lines(rubric)),
                tagged("task", user_message(ctx.run.input) or "(not given)"),
                tagged("response", response),
            ]
        )

    return create_prompt


def _reason(ctx: StepContext) -> str:
    grades = ctx.results.analyze_step_result["criteria"]
    score = format_score(ctx.score)
    if not grades:
        return f"The score is {score} because no rubric was provided: nothing was graded."
    gating = [grade for grade in grades if grade["required"]] or grades
    failed = [grade["criterion"] for grade in gating if not grade["satisfied"]]
    verdict = (
        "every required criterion is satisfied"
        if not failed
        else "these required criteria are not satisfied: " + "; ".join(failed)
    )
    lines = [f"The score is {score} because {verdict}."]
    for grade in grades:
        mark = "PASS" if grade["satisfied"] else "FAIL"
        kind = "required" if grade["required"] else "optional"
        lines.append(f"- {mark} ({kind}) {grade['criterion']}: {grade['reasoning']}")
    return "\n".join(lines)


described(_reason, "List each criterion with its mark")


def create_rubric_scorer(
    model: str | JudgeConfig,
    criteria: str | Sequence[str | Mapping[str, Any] | RubricCriterion] | None = None,
    options: RubricOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Rubric (`rubric-scorer`), judged by `model`.

    `criteria`: the rubric (see the module docstring); unset, each item's
    `request_context["rubric"]` (or the `rubric` key of a dict input) is used, and an item
    without one scores 1 (nothing to grade, as in Mastra). `options` (or keyword arguments):
    `scale` (1), the score of a pass; `criteria` may be given there too.
    """
    settings = build_options(
        RubricOptions, options, {"criteria": criteria, **option_values}, SCORER_ID
    )
    try:
        fixed = None if settings.criteria is None else parse_rubric(settings.criteria)
    except TypeError as error:
        raise ScorerConfigError(
            id="PREBUILT_SCORER_INVALID_OPTIONS", message=f"{SCORER_ID}: {error}"
        ) from None

    def generate_score(ctx: StepContext) -> float:
        if not _resolve(fixed, ctx.run):
            return 1.0
        return rubric_score(ctx.results.analyze_step_result["criteria"], settings.scale)

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .analyze(
            PromptStep(
                description="Grade the response against each criterion",
                output_schema=RubricGrades,
                create_prompt=_analyze_prompt(fixed),
            )
        )
        .generate_score(generate_score)
        .generate_reason(_reason)
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Rubric",
    DESCRIPTION,
    create_rubric_scorer,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=RubricOptions,
)
