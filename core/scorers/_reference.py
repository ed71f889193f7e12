"""What the code scorers compare the output with: the run's input or its ground truth.

Mastra's code scorers compare the output with the input. Five of them (keyword coverage,
completeness, content similarity, textual difference, tone) take `reference="ground_truth"`
to put the run's ground truth in the input's place in every step instead; exact match and
token F1 always compare with the ground truth. An item without a ground truth (None, or a
text that is blank after `strip()`) is then not scorable rather than scored as empty.

A ground truth is read like an input: a string, a message dict, or a list of these (joined
with `", "`); a number counts as its text. For exact match and token F1 a list means
several acceptable answers instead (`ground_truth_answers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeGuard, get_args

from core.errors import ScorerConfigError
from core.scorers._options import ScorerOptions
from core.scorers._registry import PrebuiltScorer, reference_needs
from core.scorers._text import ScorerInputError, join_texts, side_texts
from core.scorers.metadata import COMPARES, Compares
from core.scoring import NotScorable, Scorer, ScorerRun, StepContext, create_scorer, not_scorable

__all__ = [
    "NO_GROUND_TRUTH",
    "Reference",
    "ReferenceOptions",
    "check_reference",
    "ground_truth_answers",
    "ground_truth_reason",
    "reference_entry",
    "reference_scorer",
    "reference_text",
    "scorer_name",
    "with_ground_truth_reason",
]

Reference = Literal["input", "ground_truth"]
_REFERENCES: tuple[str, ...] = get_args(Reference)

NO_GROUND_TRUTH = "the item has no ground truth to compare with"


class ReferenceOptions(ScorerOptions):
    """Options of a two-text code scorer (keyword coverage, completeness, textual
    difference; content similarity and tone add theirs)."""

    reference: Reference = "input"
    """What the output is compared with: 'input' (Mastra's behaviour) or 'ground_truth' (the
    item's expected answer; items without one are not scorable)."""


def check_reference(reference: Any, factory: str) -> Reference:
    """`reference` itself, or a `ScorerConfigError` naming the factory and the valid values."""
    if _is_reference(reference):
        return reference
    raise ScorerConfigError(
        id="PREBUILT_SCORER_INVALID_OPTION",
        message=f"{factory}(reference=...) must be 'input' or 'ground_truth', got {reference!r}",
        details={"factory": factory, "option": "reference"},
    )


def _is_reference(value: object) -> TypeGuard[Reference]:
    return isinstance(value, str) and value in _REFERENCES


def _as_readable(value: Any) -> Any:
    """Numbers count as their text (a CSV column of numeric answers); the rest is unchanged."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def reference_text(run: ScorerRun, reference: Reference) -> str | NotScorable:
    """The text the output is compared with: the joined input, or the ground truth (read
    like an input); `not_scorable` when the ground truth is missing or blank."""
    if reference == "input":
        return join_texts(run.input, "input")
    if run.ground_truth is None:
        return not_scorable(f"{NO_GROUND_TRUTH} (reference='ground_truth')")
    text = join_texts(_as_readable(run.ground_truth), "ground_truth")
    if not text.strip():
        return not_scorable(f"{NO_GROUND_TRUTH}: it is blank (reference='ground_truth')")
    return text


def ground_truth_answers(value: Any) -> list[str] | NotScorable:
    """The acceptable answers of a ground truth: a string (or number, or message) is one, a
    list or tuple holds several. Blank answers are dropped; none left is `not_scorable`."""
    if value is None:
        return not_scorable(NO_GROUND_TRUTH)
    items = value if isinstance(value, (list, tuple)) else [value]
    answers: list[str] = []
    for index, item in enumerate(items):
        place = "ground_truth" if items is not value else f"ground_truth[{index}]"
        try:
            texts = side_texts(_as_readable(item), place)
        except ScorerInputError as error:
            raise ScorerInputError(
                f"{error} (a ground truth is an answer text or a list of acceptable answers)"
            ) from None
        answers.extend(text for text in texts if text.strip())
    if not answers:
        return not_scorable(f"{NO_GROUND_TRUTH}: it is blank")
    return answers


def ground_truth_reason(detail: str) -> str:
    """The reason of a code scorer run with `reference="ground_truth"`: it says what was
    compared, since the step results keep their Mastra keys (`detail` says which of them
    describe the ground truth)."""
    return (
        "Compared the output with the item's ground truth, not its input"
        f" (reference='ground_truth'): {detail}"
    )


def scorer_name(name: str, reference: Reference) -> str:
    """The display name, which says when the ground truth is the reference."""
    return name if reference == "input" else f"{name} (vs ground truth)"


def with_ground_truth_reason(scorer: Scorer, reference: Reference, detail: str) -> Scorer:
    """The scorer, with a reason step saying what was compared when the reference is the
    ground truth (the default keeps Mastra's steps: no reason)."""
    if reference == "input":
        return scorer
    reason = ground_truth_reason(detail)
    return scorer.generate_reason(lambda ctx: reason)


def reference_scorer(
    scorer_id: str,
    name: str,
    description: str,
    reference: Reference,
    preprocess: Callable[[StepContext], Any],
    generate_score: Callable[[StepContext], Any],
    ground_truth_detail: str,
    *,
    analyze: Callable[[StepContext], Any] | None = None,
) -> Scorer:
    """A code scorer that compares the output with its reference: Mastra's steps
    (`preprocess`, the optional `analyze`, `generate_score`), a name that says when the ground
    truth is the reference, and then a reason step saying so (`ground_truth_detail`: which step
    results describe it)."""
    scorer = create_scorer(
        id=scorer_id, name=scorer_name(name, reference), description=description
    ).preprocess(preprocess)
    if analyze is not None:
        scorer = scorer.analyze(analyze)
    return with_ground_truth_reason(
        scorer.generate_score(generate_score), reference, ground_truth_detail
    )


def reference_entry(
    scorer_id: str,
    name: str,
    description: str,
    factory: Callable[..., Scorer],
    options_model: type[ScorerOptions] = ReferenceOptions,
    compares: Compares | None = None,
) -> PrebuiltScorer:
    """The catalog entry of a code scorer with the `reference` option: no judge, what it
    compares (`compares`, else its entry in `COMPARES`) and the data it needs read from that
    option."""
    return PrebuiltScorer(
        scorer_id,
        name,
        description,
        factory,
        calls_judge=False,
        options_model=options_model,
        compares=COMPARES[scorer_id] if compares is None else compares,
        needs=reference_needs,
    )
