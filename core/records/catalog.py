"""Records of the scorer catalog: a scorer chosen for an experiment, its options and steps."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from core.record_base import Record

__all__ = [
    "ScorerCatalogEntry",
    "ScorerOptionInfo",
    "ScorerSpec",
    "ScorerStepInfo",
]


# ---- scorers ----


class ScorerSpec(Record):
    """A scorer chosen for an experiment: a catalog id and the factory's options."""

    scorer_id: str
    """The catalog id (`core.scorers.PREBUILT`)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options for the factory."""


class ScorerOptionInfo(Record):
    """One option of a catalog scorer, for forms."""

    name: str
    """The option's keyword."""
    type: str
    """A short type label: str, bool, float, int, choice, list[str], list[dict], dict, regex,
    callable."""
    description: str
    """What it does."""
    default: Any = None
    """Its default value."""
    required: bool = False
    """Whether it must be given."""
    choices: list[str] | None = None
    """The only values allowed, when the option is a choice."""
    code_only: bool = False
    """Only Python callers can give it (a function, type "callable"): forms and the CLI skip
    it."""


class ScorerStepInfo(Record):
    """One step of a catalog scorer."""

    name: str
    """The Mastra step name."""
    kind: Literal["function", "prompt"]
    """`prompt` steps call the judge."""
    description: str | None = None
    """The step's description, if any."""


class ScorerCatalogEntry(Record):
    """A scorer as the catalog lists it."""

    id: str
    """The catalog id."""
    name: str
    """Display name."""
    description: str
    """What it measures."""
    calls_judge: bool
    """Whether a run calls an LLM judge."""
    compares: str = "output vs input"
    """What the score compares with the default options, in words ("output vs input")."""
    options: list[ScorerOptionInfo] = Field(default_factory=list)
    """Its options."""
    steps: list[ScorerStepInfo] = Field(default_factory=list)
    """Its steps in order (empty when they cannot be known without options)."""
