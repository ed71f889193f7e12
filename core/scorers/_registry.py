"""The catalog record of a prebuilt scorer (`core.scorers.PREBUILT` maps ids to these)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.scoring import Scorer

__all__ = ["PrebuiltScorer", "ScorerOption", "build_catalog"]


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


@dataclass(frozen=True, slots=True)
class PrebuiltScorer:
    """A prebuilt scorer as the catalog lists it; `factory(**options)` builds the scorer."""

    id: str
    name: str
    description: str
    factory: Callable[..., Scorer]
    calls_judge: bool
    options: tuple[ScorerOption, ...] = field(default_factory=tuple)


def build_catalog(entries: Iterable[PrebuiltScorer]) -> dict[str, PrebuiltScorer]:
    """The id -> entry mapping; a repeated id is a programming error."""
    catalog: dict[str, PrebuiltScorer] = {}
    for entry in entries:
        if entry.id in catalog:
            raise ValueError(f"prebuilt scorer id {entry.id!r} is registered twice")
        catalog[entry.id] = entry
    return catalog
