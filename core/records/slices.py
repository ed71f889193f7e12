"""Records of slices: a scorer's results over the items of one metadata value, and their changes."""

from __future__ import annotations

from pydantic import Field

from core.record_base import Record

__all__ = [
    "SliceChange",
    "SliceScorer",
    "SliceSummary",
]


class SliceScorer(Record):
    """One scorer's results over the items of one slice (a metadata value)."""

    scorer_id: str
    """The scorer."""
    runs: int = 0
    """Its stored runs on the slice's items."""
    scored: int = 0
    """Of those, the runs with a numeric score (the mean is theirs)."""
    mean: float | None = None
    """Mean score (None without a numeric score)."""
    sd: float | None = None
    """Sample standard deviation of the scores (None under two scores)."""
    low: float | None = None
    """Lower end of the 95% t-interval of the mean (None under two scores)."""
    high: float | None = None
    """Upper end of the 95% t-interval of the mean (None under two scores)."""
    missing: int = 0
    """Items of the slice without a stored run of this scorer: failed runs, or runs not made
    (an experiment stopped part-way). Known from the database for any experiment."""
    failed: int | None = None
    """Failed runs among them held in this process's memory; None when the failures' details
    are not here (an experiment run by the CLI or another process: `missing` then)."""


class SliceSummary(Record):
    """The items of an experiment sharing one value of a metadata column, and each scorer's
    results over them."""

    column: str
    """The metadata column."""
    value: str
    """Its value as text (as `ResultQuery.metadata` takes it; "" for no value)."""
    items: int
    """Items of the dataset with this value."""
    scorers: list[SliceScorer] = Field(default_factory=list)
    """Per scorer of the experiment, in its order."""


class SliceChange(Record):
    """How one scorer's mean over one slice changed from a baseline experiment to a candidate
    (its unpaired mean over each side's items of that value)."""

    column: str
    """The metadata column."""
    value: str
    """Its value as text ("" for no value)."""
    scorer_id: str
    """The scorer (run in both experiments)."""
    baseline_n: int = 0
    """Numeric scores of the baseline on the slice."""
    candidate_n: int = 0
    """Numeric scores of the candidate on the slice."""
    baseline_mean: float | None = None
    """The baseline's mean (None without a score)."""
    candidate_mean: float | None = None
    """The candidate's mean (None without a score)."""
    change: float | None = None
    """candidate_mean - baseline_mean (None when either is None); negative: regressed."""
