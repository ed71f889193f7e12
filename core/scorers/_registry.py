"""The catalog record of a prebuilt scorer (`core.scorers.PREBUILT` maps ids to these): the
one way a prebuilt scorer is declared, described and built.

Each scorer module declares its entry next to its factory::

    CATALOG_ENTRY = PrebuiltScorer(
        SCORER_ID, "Faithfulness", DESCRIPTION, create_faithfulness_scorer,
        calls_judge=True, options_model=FaithfulnessOptions,
        compares=COMPARES[SCORER_ID], needs=context_needs,
    )

and `core.scorers.prebuilt` collects the entries; what each compares is its line of
`core.scorers.metadata.COMPARES` (read without importing the scorers). The options model is the
only declaration of the scorer's options: `entry.options` (what forms and the CLI show),
`entry.build(options, judge)` (validation through the model, then the factory),
`entry.catalog_entry()` and `entry.judge_calls_per_item(options)` are all derived from it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.errors import ScorerConfigError
from core.judge import JudgeConfig
from core.records import ScorerCatalogEntry, ScorerOptionInfo, ScorerStepInfo
from core.scorers._option_info import ScorerOption, describe_options, placeholder_options
from core.scorers._options import ScorerOptions, field_names
from core.scorers._text import describe_value
from core.scorers.metadata import GROUND_TRUTH, Compares, reference_comparison, worded
from core.scoring import Scorer

__all__ = [
    "GROUND_TRUTH",
    "DataNeed",
    "PrebuiltScorer",
    "ScorerBuildError",
    "build_catalog",
    "context_needs",
    "ground_truth_needs",
    "reference_comparison",
    "reference_needs",
]

logger = logging.getLogger(__name__)

_STAND_IN_JUDGE = JudgeConfig(model="openai/catalog")
"""The judge a scorer is built with to learn its steps; it is never called."""


class ScorerBuildError(ScorerConfigError):
    """A catalog scorer that cannot be built with these options or this judge; the message
    names the scorer, the option and what it allows."""

    def __init__(self, message: str, *, scorer_id: str, option: str | None = None) -> None:
        details: dict[str, Any] = {"scorerId": scorer_id}
        if option is not None:
            details["option"] = option
        super().__init__(id="PREBUILT_SCORER_BUILD_FAILED", message=message, details=details)
        self.scorer_id = scorer_id
        self.option = option


@dataclass(frozen=True, slots=True)
class DataNeed:
    """A field every item must have for a scorer to run, unless an option stands in for it."""

    column: str
    """`GROUND_TRUTH`, or the name of the metadata column the scorer reads."""
    what: str
    """What the field is, for a person: "the context the output is checked against"."""
    option: str | None = None
    """The scorer option that can give it for every item instead, if any."""


def _no_needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class PrebuiltScorer:
    """A prebuilt scorer as the catalog lists it: `build(options, judge)` makes the scorer."""

    id: str
    name: str
    description: str
    factory: Callable[..., Scorer]
    """Takes every option as a keyword (and the judge as `model=` when `calls_judge`)."""
    calls_judge: bool
    options_model: type[ScorerOptions] = ScorerOptions
    """The scorer's options, declared once: one field per option (the base: none)."""
    compares: Compares = "output vs input"
    """What the score compares, in words ("output vs ground truth"), or a function of the
    options that says it: a prebuilt scorer's is its entry in `core.scorers.metadata.COMPARES`
    (which `scorelab export` reads without importing the scorers)."""
    needs: Callable[[Mapping[str, Any]], tuple[DataNeed, ...]] = _no_needs
    """What every item must hold, given the options (checked before an experiment starts)."""
    options: tuple[ScorerOption, ...] = field(init=False, repr=False, compare=False)
    """The options as forms and the CLI show them, derived from `options_model`."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", describe_options(self.options_model))

    def comparison(self, options: Mapping[str, Any] | None = None) -> str:
        """What this scorer compares with these options, in words."""
        return worded(self.compares, options)

    def data_needs(self, options: Mapping[str, Any] | None = None) -> tuple[DataNeed, ...]:
        """What every item must hold with these options."""
        return self.needs(options or {})

    # ---- building ----

    def build(
        self, options: Mapping[str, Any] | None = None, judge: JudgeConfig | None = None
    ) -> Scorer:
        """The scorer with these options (a None value means "not given") and this judge.

        Raises ScorerBuildError naming the scorer and the option: no judge for a judge
        scorer, an unknown option (listing the scorer's options), a missing or invalid value
        (saying what is allowed), or a factory that refused the options."""
        if self.calls_judge and (judge is None or not judge.model):
            raise ScorerBuildError(
                f"Scorer {self.id!r} calls an LLM judge: choose a judge model "
                "(any litellm model string, e.g. openai/gpt-4o-mini)",
                scorer_id=self.id,
            )
        keywords = self.factory_arguments(options or {})
        if self.calls_judge:
            keywords["model"] = judge
        try:
            scorer = self.factory(**keywords)
        except Exception as error:
            raise ScorerBuildError(
                f"Cannot build scorer {self.id!r}: {error}", scorer_id=self.id
            ) from error
        if not isinstance(scorer, Scorer):
            raise ScorerBuildError(
                f"The factory of {self.id!r} did not return a Scorer", scorer_id=self.id
            )
        return scorer

    def factory_arguments(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The factory's keyword arguments for these options, validated by the options model
        (the options given, by field name; None values are left out)."""
        given = {key: value for key, value in options.items() if value is not None}
        names = field_names(self.options_model)
        for key in given:
            if key not in names:
                listed = ", ".join(option.name for option in self.options) or "none"
                raise ScorerBuildError(
                    f"Scorer {self.id!r} has no option {key!r} (its options: {listed})",
                    scorer_id=self.id,
                    option=str(key),
                )
        try:
            settings = self.options_model.model_validate(given)
        except ValidationError as error:
            raise self._invalid(error, names) from None
        return {name: getattr(settings, name) for name in settings.model_fields_set}

    def _invalid(self, error: ValidationError, names: Mapping[str, str]) -> ScorerBuildError:
        described = {option.name: option for option in self.options}
        problems: list[str] = []
        first: str | None = None
        for problem in error.errors(include_url=False):
            head, *rest = [str(part) for part in problem["loc"]] or ["(options)"]
            name = names.get(head, head)
            first = first or name
            option = described.get(name)
            if problem["type"] == "missing" and not rest and option is not None:
                about = f" ({option.description})" if option.description else ""
                problems.append(f"option {name!r} is required{about}")
            else:
                where = ".".join([name, *rest])
                got = describe_value(problem.get("input"))
                problems.append(f"option {where!r}: {problem['msg']} (got {got})")
        return ScorerBuildError(
            f"Cannot build scorer {self.id!r}: " + "; ".join(problems),
            scorer_id=self.id,
            option=first,
        )

    # ---- describing ----

    def _sample(self, options: Mapping[str, Any] | None) -> Scorer:
        """The scorer built with stand-ins for the required options not given (and for the
        judge), to learn its steps."""
        given = {key: value for key, value in (options or {}).items() if value is not None}
        stand_ins = placeholder_options(self.options_model)
        judge = _STAND_IN_JUDGE if self.calls_judge else None
        return self.build({**stand_ins, **given}, judge)

    def steps(self, options: Mapping[str, Any] | None = None) -> list[ScorerStepInfo]:
        """The scorer's steps in order; empty when it cannot be built to learn them."""
        try:
            built = self._sample(options)
        except ScorerBuildError as error:
            logger.debug("Steps of %s unknown: %s", self.id, error)
            return []
        return [
            ScorerStepInfo(name=step.name, kind=step.kind, description=step.description)
            for step in built.steps
        ]

    def judge_calls_per_item(self, options: Mapping[str, Any] | None = None) -> int:
        """Judge calls one item costs at least with these options: the prompt steps (the
        structured-output fallback and retries can add more); 1 when the options do not
        build yet (the score step at least calls the judge); 0 for a code scorer."""
        if not self.calls_judge:
            return 0
        try:
            built = self._sample(options)
        except ScorerBuildError:
            return 1
        return sum(1 for step in built.steps if step.kind == "prompt")

    def catalog_entry(self) -> ScorerCatalogEntry:
        """This scorer as the catalog lists it: options derived from the model, and the steps
        learnt by building it with stand-in values."""
        return ScorerCatalogEntry(
            id=self.id,
            name=self.name,
            description=self.description,
            calls_judge=self.calls_judge,
            compares=self.comparison(),
            options=[
                ScorerOptionInfo(
                    name=option.name,
                    type=option.type,
                    description=option.description,
                    default=option.default,
                    required=option.required,
                    choices=list(option.choices) if option.choices else None,
                    code_only=option.code_only,
                )
                for option in self.options
            ],
            steps=self.steps(),
        )


def reference_needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """A two-text code scorer needs a ground truth only when it compares with it."""
    if options.get("reference") == GROUND_TRUTH:
        return (DataNeed(GROUND_TRUTH, "the ground truth the output is compared with"),)
    return ()


def ground_truth_needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """Scorers that always compare the output with the ground truth."""
    return (DataNeed(GROUND_TRUTH, "the ground truth the output is compared with"),)


def context_needs(options: Mapping[str, Any]) -> tuple[DataNeed, ...]:
    """Context scorers read each item's `context` column unless the `context` option (or a
    context function, which only Python callers can give) stands in."""
    if options.get("context") or options.get("context_extractor") or options.get("get_context"):
        return ()
    return (DataNeed("context", "the context the output is judged against", option="context"),)


def build_catalog(entries: Iterable[PrebuiltScorer]) -> dict[str, PrebuiltScorer]:
    """The id -> entry mapping; a repeated id is a programming error."""
    catalog: dict[str, PrebuiltScorer] = {}
    for entry in entries:
        if entry.id in catalog:
            raise ValueError(f"prebuilt scorer id {entry.id!r} is registered twice")
        catalog[entry.id] = entry
    return catalog
