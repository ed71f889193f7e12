"""The catalog record of a prebuilt scorer (`core.scorers.PREBUILT` maps ids to these): how to
build it, its options, what it compares the output with, and what each item must hold."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.scoring import Scorer

__all__ = [
    "GROUND_TRUTH",
    "DataNeed",
    "PrebuiltScorer",
    "ScorerOption",
    "build_catalog",
    "context_needs",
    "ground_truth_needs",
    "reference_comparison",
    "reference_needs",
    "reference_option",
]

GROUND_TRUTH = "ground_truth"
"""The `DataNeed.column` of the dataset's mapped ground-truth column (other needs name a
metadata column, which reaches the scorers in each item's request context)."""


@dataclass(frozen=True, slots=True)
class ScorerOption:
    """One argument of a prebuilt scorer's factory, for the dashboard's forms and the CLI."""

    name: str
    """The factory's keyword (or positional) argument name."""
    type: str
    """A short type label: "str", "bool", "float", "int", "list[str]", "regex", ..."""
    description: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] | None = None
    """The only values allowed, when the option is a choice."""


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
    """A prebuilt scorer as the catalog lists it; `factory(**options)` builds the scorer."""

    id: str
    name: str
    description: str
    factory: Callable[..., Scorer]
    calls_judge: bool
    options: tuple[ScorerOption, ...] = field(default_factory=tuple)
    compares: str | Callable[[Mapping[str, Any]], str] = "output vs input"
    """What the score compares, in words ("output vs ground truth"), or a function of the
    options that says it."""
    needs: Callable[[Mapping[str, Any]], tuple[DataNeed, ...]] = _no_needs
    """What every item must hold, given the options (checked before an experiment starts)."""

    def comparison(self, options: Mapping[str, Any] | None = None) -> str:
        """What this scorer compares with these options, in words."""
        if isinstance(self.compares, str):
            return self.compares
        return self.compares(options or {})

    def data_needs(self, options: Mapping[str, Any] | None = None) -> tuple[DataNeed, ...]:
        """What every item must hold with these options."""
        return self.needs(options or {})


def reference_option() -> ScorerOption:
    """The `reference` option of the two-text code scorers."""
    from core.scorers._reference import REFERENCE_OPTION_DESCRIPTION

    return ScorerOption(
        "reference",
        "choice",
        REFERENCE_OPTION_DESCRIPTION,
        default="input",
        choices=("input", "ground_truth"),
    )


def reference_comparison(options: Mapping[str, Any]) -> str:
    """The words for a two-text code scorer's `reference` option."""
    if options.get("reference") == GROUND_TRUTH:
        return "output vs ground truth"
    return "output vs input"


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
