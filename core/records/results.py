"""Aggregates and pages of stored results computed by the database (summaries, pages)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from core.record_base import Record
from core.run_results import JudgeUsage

__all__ = [
    "FailureCounts",
    "ItemRow",
    "ItemSort",
    "ResultPage",
    "ResultQuery",
    "ScoreHistogram",
    "ScoreSummary",
    "ScorerUsage",
    "StepUsage",
    "StoredScores",
]


# ---- aggregates and pages computed by the database (docs/storage.md, Reading a large
# experiment): small records, whatever the number of results ----


class ScoreSummary(Record):
    """One scorer's stored results of an experiment, summed up by the database."""

    scorer_id: str
    """The scorer."""
    count: int
    """Stored (successful) runs."""
    scored: int
    """Those with a numeric score (a not-scorable run is stored without one)."""
    mean: float | None = None
    """Mean score (None when nothing was scored)."""
    min: float | None = None
    """Lowest score."""
    max: float | None = None
    """Highest score."""


class ScoreHistogram(Record):
    """One scorer's score distribution: `len(counts)` equal bins from `low` to `high`, each
    closed on the left, the last closed on both sides (NumPy's `histogram`)."""

    scorer_id: str
    """The scorer."""
    low: float
    """Left edge of the first bin: 0, or the lowest score when below 0."""
    high: float
    """Right edge of the last bin: 1, or the highest score when above 1."""
    counts: list[int]
    """Scores per bin."""

    @property
    def edges(self) -> list[float]:
        """The bins' edges (`len(counts) + 1` of them)."""
        step = (self.high - self.low) / len(self.counts)  # as NumPy's linspace, and the store
        return [k * step + self.low for k in range(len(self.counts))] + [self.high]


class StepUsage(Record):
    """Judge usage of one prompt step of a scorer's stored runs, for one model answering it,
    summed by the database (from `scorer_results.step_usage`, revision 0011)."""

    step: str
    """The prompt step (`analyze`, `generateScore`, ...); empty for the runs stored without a
    per-step split (`ScorerUsage.unsplit`)."""
    model: str | None = None
    """The model that answered, as the provider named it."""
    runs: int = 0
    """Stored runs whose step called this model."""
    judge_calls: int = 0
    """Judge model calls that returned."""
    judge_attempts: int = 0
    """Judge attempts started."""
    cached_calls: int = 0
    """Executions answered from the judge cache (no request sent, no cost)."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Judge tokens."""
    duration_ms: int = 0
    """Milliseconds of the step, summed (of the whole runs for `ScorerUsage.unsplit`)."""
    est_cost_usd: float | None = None
    """Estimated judge cost (litellm's price table; None without tokens or a known price).
    Filled by the service, not the store."""


class ScorerUsage(Record):
    """Judge usage of one scorer's stored runs of an experiment, summed by the database."""

    scorer_id: str
    """The scorer."""
    model: str | None = None
    """The experiment's judge model (None: no judge)."""
    runs: int = 0
    """Stored runs that called the judge (one attempt or more, or an answer from the judge
    cache); the sums below are theirs."""
    judge_calls: int = 0
    """Judge model calls that returned."""
    judge_attempts: int = 0
    """Judge attempts started."""
    cached_calls: int = 0
    """Judge executions answered from the judge cache (no request sent, no cost)."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Judge tokens."""
    duration_ms: int = 0
    """Wall time of those runs, summed."""
    est_cost_usd: float | None = None
    """Estimated judge cost (litellm's price table; None without tokens or a known price).
    Filled by the service, not the store."""
    steps: tuple[StepUsage, ...] = ()
    """The same usage per prompt step and model, over the stored runs that keep it (every run
    stored since revision 0011); empty when none does."""
    unsplit: StepUsage | None = None
    """The runs stored without a per-step split (before revision 0011, or imported without
    their judge executions), summed, when `steps` is not empty and some are; their usage is
    shown as "all steps"."""


ItemSort = Literal["position", "score_asc", "score_desc"]


class ResultQuery(Record):
    """Which page of an experiment's item table to read, and how it is filtered and sorted.

    The filters combine (all must hold): `score_range` keeps the items where one of
    `scorer_ids` (every scorer when empty) has a stored score within it, inclusive;
    `failed_only` the items where one of them failed (failures are in memory: the service
    resolves it); `search` the items whose id, input, output or ground truth contains it,
    case-insensitively (a plain substring, never a pattern); `metadata` the items whose
    metadata column holds one of the given values (compared as text, `metadata_text` of
    `core.storage.slices`: a string as it is, true/false, a number as written; the empty
    string stands for no value)."""

    scorer_ids: list[str] = Field(default_factory=list)
    """The scorers the filters look at (empty: all)."""
    score_range: tuple[float, float] | None = None
    """Inclusive score range."""
    failed_only: bool = False
    """Items with a failed run only."""
    search: str = ""
    """Substring of the item's id, input, output or ground truth (blank: none)."""
    sort: ItemSort = "position"
    """Dataset order, or by `sort_scorer`'s score (then only the items it scored)."""
    sort_scorer: str | None = None
    """The scorer whose score sorts the table (needed unless `sort` is `position`)."""
    page: int = 1
    """Page number, from 1 (a page past the last gives the last page)."""
    page_size: int = 50
    """Items per page (1 to 1,000)."""
    metadata: dict[str, list[str]] = Field(default_factory=dict)
    """Metadata filters: column -> the values kept (as text; "" for no value). Every column
    must hold one of its values; a column with no value listed keeps nothing."""


class ItemRow(Record):
    """One item of an experiment's table: its text and its runs' outcomes."""

    position: int
    """Its place in the dataset (from 0)."""
    item_id: str
    """The item."""
    input: Any = None
    """Its input."""
    output: Any = None
    """Its output."""
    ground_truth: Any = None
    """Its ground truth."""
    scores: dict[str, float | None] = Field(default_factory=dict)
    """Stored score per scorer that succeeded on it."""
    failed: list[str] = Field(default_factory=list)
    """Scorers that failed on it (from memory)."""
    judge_tokens: int = 0
    """Judge tokens over its stored runs (and its failed runs held in memory)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Its dataset metadata (the columns kept at import)."""


class ResultPage(Record):
    """A page of an experiment's item table."""

    rows: list[ItemRow]
    """The page's items."""
    total: int
    """Items matching the query, over every page (more than this: `total_at_least`)."""
    total_at_least: bool = False
    """True when a text search stopped counting (past 1,000 matches and the page asked for):
    there are more matches than `total` then."""
    page: int
    """This page's number (from 1; clamped to the last page)."""
    page_size: int
    """Items per page."""

    @property
    def pages(self) -> int:
        """Pages in all (at least 1)."""
        return max(1, -(-self.total // self.page_size))


class FailureCounts(Record):
    """How many runs of an experiment failed, and how many of those this process remembers."""

    total: int
    """Failed runs (the experiment row's count)."""
    in_memory: int
    """Those whose details this process holds."""
    by_scorer: dict[str, int] = Field(default_factory=dict)
    """Failed runs held in memory, per scorer."""
    details_in_memory: bool
    """False when the details were lost (another process ran it, or it restarted)."""


class StoredScores(Record):
    """Every stored run of an experiment as columns, in the order written (Compare pairs
    them): the i-th entry of each list is one run. No result JSON: what a pairing needs, read
    in one light SELECT (`Store.stored_scores`)."""

    item_ids: list[str] = Field(default_factory=list)
    """The run's item."""
    scorer_ids: list[str] = Field(default_factory=list)
    """The run's scorer."""
    scores: list[float | None] = Field(default_factory=list)
    """The run's score (None: not scorable)."""
    reasons: list[Any] = Field(default_factory=list)
    """The run's reason (None when the scorer gives none)."""
