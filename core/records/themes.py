"""Records of themes found in judge reasons and failure errors (core/reporting/themes.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.record_base import Record

__all__ = [
    "Theme",
    "ThemeKind",
    "ThemeReport",
]


# ---- themes in judge reasons and failure errors (core/reporting/themes.py) ----

ThemeKind = Literal["low_scores", "failures"]
"""What a theme report groups: the reasons of low-scoring items, or failed runs' errors."""


class Theme(Record):
    """A group of similar texts (judge reasons or errors), named by its most telling words."""

    label: str
    """Its most telling words, joined by " · " ("(no telling words)" when it has none)."""
    words: list[str] = Field(default_factory=list)
    """Its most telling words and word pairs, most telling first."""
    size: int
    """How many texts (one per item and scorer) it holds."""
    item_ids: list[str] = Field(default_factory=list)
    """A few of its items, in the order they were given."""
    example: str = ""
    """One of its texts (the one nearest its centre), cut to a few hundred characters."""


class ThemeReport(Record):
    """The themes of one scorer's low-score reasons, or of an experiment's failure errors."""

    experiment_id: str
    """The experiment."""
    scorer_id: str | None = None
    """The scorer (None: failures of every scorer)."""
    kind: ThemeKind
    """What was grouped."""
    basis: str
    """Which texts were grouped, in words ("reasons of the 12 items scoring below 0.5")."""
    threshold: float | None = None
    """The score below which an item counted as low, when one was given."""
    quantile: float | None = None
    """Else the share of lowest scores taken (their cut-off is `cutoff`)."""
    cutoff: float | None = None
    """The highest score taken as low (bottom quantile), if any."""
    considered: int = 0
    """Texts grouped."""
    without_text: int = 0
    """Items taken whose reason or error was empty (left out of the themes)."""
    seed: int = 0
    """The clustering's seed: the same texts and seed give the same themes."""
    themes: list[Theme] = Field(default_factory=list)
    """The themes, largest first."""
