"""Trajectory accuracy (LLM): were the agent's steps necessary and in a sensible order?
(docs/scorers.md, Trajectory Accuracy (LLM))

Steps: preprocess (code) formats the actual trajectory, and the expected one when there is
one, as numbered lines. Analyze (judge) evaluates each actual step (necessary? in order?) and
lists missing and extra steps. Score: with no step evaluation, 0 when steps are missing, else
0.5 when there are extra steps, else 1; otherwise
`0.6 * #necessary / n + 0.3 * #in_order / n - 0.1 * #missing / (n + #missing)`, clamped to
[0, 1] and rounded half up to two decimals. As in Mastra, a perfect trajectory scores 0.9,
not 1 (the weights of the positive terms sum to 0.9); kept for parity with Mastra's numbers.
Reason (judge).

The actual trajectory is the run's output: `{"steps": [...]}`, a list of steps (dicts with
`name`, and optionally `stepType`, `toolArgs`, `success`, `children`, ...), a list of Mastra
messages (their tool calls become `tool_call` steps), or a text describing the steps. The
expected one: the `expected_trajectory` argument, else the item's
`request_context["expectedTrajectory"]`, else the item's `ground_truth`; in the same shapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field

from core.judge import JudgeConfig, PromptStep
from core.scorers._context import item_value
from core.scorers._judge_setup import judge_for
from core.scorers._messages import user_message
from core.scorers._options import OptionType, ScorerOptions
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers._text import ScorerInputError, tool_invocations
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer, described

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "TrajectoryAccuracyOptions",
    "create_trajectory_accuracy_scorer_llm",
    "format_trajectory",
    "trajectory_accuracy_score",
]

SCORER_ID = "llm-trajectory-accuracy-scorer"
NAME = "Trajectory Accuracy (LLM) Scorer"
DESCRIPTION = (
    "Whether the agent's steps (tool calls, model calls, workflow steps) were necessary and"
    " in a sensible order for the task, optionally against an expected trajectory."
)

INSTRUCTIONS = (
    "You review the trajectory of an AI agent: the sequence of steps (tool calls, model "
    "generations, workflow steps) it took to complete a task. You judge whether each step "
    "was necessary and came in a sensible order, and which steps were missing or superfluous. "
    "Follow the definitions given in each request exactly and answer in the format it asks "
    "for."
)

_ARGUMENT_LIMIT = 300


class TrajectoryAccuracyOptions(ScorerOptions):
    """Options of the LLM trajectory accuracy scorer (the factory's `expected_trajectory`)."""

    expected_trajectory: Annotated[Any, OptionType("list[dict]")] = None
    """The expected steps for every item; unset: each item's
    request_context['expectedTrajectory'] or ground_truth."""


class StepEvaluation(BaseModel):
    """The judge's view of one actual step."""

    stepName: str
    wasNecessary: bool
    wasInOrder: bool
    reasoning: str


class TrajectoryAnalysis(BaseModel):
    """Analyze answer."""

    stepEvaluations: list[StepEvaluation]
    missingSteps: list[str] = Field(default_factory=list)
    extraSteps: list[str] = Field(default_factory=list)
    overallAssessment: str


def trajectory_accuracy_score(analysis: Mapping[str, Any]) -> float:
    """The trajectory score of an analysis (see the module docstring)."""
    evaluations: Sequence[Mapping[str, Any]] = analysis.get("stepEvaluations") or []
    missing = len(analysis.get("missingSteps") or [])
    extra = len(analysis.get("extraSteps") or [])
    if not evaluations:
        return 0.0 if missing else 0.5 if extra else 1.0
    count = len(evaluations)
    necessary = sum(1 for item in evaluations if item["wasNecessary"]) / count
    in_order = sum(1 for item in evaluations if item["wasInOrder"]) / count
    score = 0.6 * necessary + 0.3 * in_order - 0.1 * missing / (count + missing)
    return round_to_two_decimals(min(1.0, max(0.0, score)))


def _is_message(item: Any) -> bool:
    return isinstance(item, Mapping) and ("role" in item or "content" in item)


def _steps(value: Any, side: str) -> list[Any] | str:
    """The steps of a trajectory value, or its text when it is a description."""
    if value is None:
        return []
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and "steps" in value:
        return list(value["steps"] or [])
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence):
        raise ScorerInputError(
            f"{side} must be a string (a description of the steps), {{'steps': [...]}}, a list "
            f"of steps or a list of messages; got {type(value).__name__} {value!r:.60}"
        )
    if value and all(_is_message(item) for item in value):
        return [
            {
                "stepType": "tool_call",
                "name": call.get("toolName"),
                "toolArgs": call.get("args"),
                "success": call.get("state") != "output-error",
            }
            for call in tool_invocations(list(value))
            if call.get("toolName") and call.get("state") != "partial-call"
        ]
    return list(value)


def _step_line(step: Any, label: str) -> list[str]:
    if not isinstance(step, Mapping):
        return [f"{label} {step}"]
    line = f"{label} {step.get('name') or '(unnamed)'}"
    if step.get("stepType"):
        line += f" [{step['stepType']}]"
    if step.get("toolArgs") is not None:
        arguments = json.dumps(step["toolArgs"], ensure_ascii=False, default=str)
        if len(arguments) > _ARGUMENT_LIMIT:
            arguments = arguments[:_ARGUMENT_LIMIT] + "..."
        line += f" args={arguments}"
    if step.get("success") is False:
        line += " (failed)"
    lines = [line]
    for index, child in enumerate(step.get("children") or [], start=1):
        lines.extend("  " + text for text in _step_line(child, f"{label[:-1]}.{index}."))
    return lines


def format_trajectory(value: Any, side: str = "output") -> tuple[str, int]:
    """A trajectory as numbered lines, and its number of top-level steps (0 for a text)."""
    steps = _steps(value, side)
    if isinstance(steps, str):
        return steps, 0
    if not steps:
        return "(no steps)", 0
    lines: list[str] = []
    for index, step in enumerate(steps, start=1):
        lines.extend(_step_line(step, f"{index}."))
    return "\n".join(lines), len(steps)


def _preprocess(expected_trajectory: Any) -> Callable[[StepContext], dict[str, Any]]:
    def preprocess(ctx: StepContext) -> dict[str, Any]:
        actual, actual_count = format_trajectory(ctx.run.output)
        expected_value = expected_trajectory
        if expected_value is None:
            expected_value = item_value(ctx.run.request_context, "expectedTrajectory")
        if expected_value is None:
            expected_value = ctx.run.ground_truth
        expected = (
            None
            if expected_value is None
            else format_trajectory(expected_value, "expected trajectory")[0]
        )
        return {
            "actualTrajectory": actual,
            "actualStepCount": actual_count,
            "expectedTrajectory": expected,
        }

    described(preprocess, "Format the trajectories")
    return preprocess


def _analyze_prompt(ctx: StepContext) -> str:
    formatted = ctx.results.preprocess_step_result
    expected = formatted["expectedTrajectory"]
    if expected is None:
        basis = (
            "There is no expected trajectory: judge from the task what a competent agent "
            "would need to do."
        )
    else:
        basis = (
            "Judge against the expected trajectory: a step is necessary when the expected "
            "trajectory has it (or an equivalent), and in order when it comes in the expected "
            "order."
        )
    parts = [
        "Evaluate the trajectory (the steps an AI agent took) for the task below. " + basis,
        "For each step of the actual trajectory, in order, give:\n"
        '- "stepName": the step\'s name;\n'
        '- "wasNecessary": true when the step was needed to complete the task;\n'
        '- "wasInOrder": true when it came at a sensible point of the sequence (after what it '
        "depends on);\n"
        '- "reasoning": one short sentence.\n'
        'Then list "missingSteps" (steps that were needed or expected but not taken), '
        '"extraSteps" (steps taken that were not needed) and "overallAssessment" (one or two '
        "sentences). Use empty lists when there is nothing to list.",
        'Answer with JSON: {"stepEvaluations": [{"stepName": "...", "wasNecessary": true, '
        '"wasInOrder": true, "reasoning": "..."}], "missingSteps": [], "extraSteps": [], '
        '"overallAssessment": "..."}',
        'Example: for the task "Find recent news on solar power and summarise it" and the '
        'steps "1. summarize [tool_call]", "2. web-search [tool_call]", "3. web-search '
        '[tool_call]" the answer is\n'
        '{"stepEvaluations": [{"stepName": "summarize", "wasNecessary": true, "wasInOrder": '
        'false, "reasoning": "Summarising before searching has nothing to summarise."}, '
        '{"stepName": "web-search", "wasNecessary": true, "wasInOrder": false, "reasoning": '
        '"Needed, but should come first."}, {"stepName": "web-search", "wasNecessary": false, '
        '"wasInOrder": true, "reasoning": "Repeats the same search."}], "missingSteps": [], '
        '"extraSteps": ["web-search (repeated)"], "overallAssessment": "The right tools, in '
        'the wrong order, with one redundant search."}',
        tagged("task", user_message(ctx.run.input) or "(not given)"),
        tagged("actual_trajectory", formatted["actualTrajectory"]),
    ]
    if expected is not None:
        parts.append(tagged("expected_trajectory", expected))
    return "\n\n".join(parts)


def create_trajectory_accuracy_scorer_llm(
    model: str | JudgeConfig, expected_trajectory: Any = None
) -> Scorer:
    """Trajectory accuracy judged by `model` (`llm-trajectory-accuracy-scorer`).

    `expected_trajectory`: the expected steps for every item (see the module docstring for
    the accepted shapes); unset, each item's `request_context["expectedTrajectory"]` or
    `ground_truth` is used, and without one the judge works from the task alone.
    Note: as in Mastra, the best reachable score is 0.9.
    """
    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(_preprocess(expected_trajectory))
        .analyze(
            PromptStep(
                description="Evaluate each step of the trajectory",
                output_schema=TrajectoryAnalysis,
                create_prompt=_analyze_prompt,
            )
        )
        .generate_score(lambda ctx: trajectory_accuracy_score(ctx.results.analyze_step_result))
        .generate_reason(
            explain_step(
                metric="trajectory accuracy",
                scale=1,
                meaning="higher means necessary steps in a sensible order; 0.9 is the best "
                "reachable",
                example="The score is 0.42 because only one of the two steps was necessary and "
                "in order, and the summarising step was missing.",
                findings=lambda ctx: as_json(ctx.results.analyze_step_result),
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Trajectory Accuracy (LLM)",
    DESCRIPTION,
    create_trajectory_accuracy_scorer_llm,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=TrajectoryAccuracyOptions,
)
