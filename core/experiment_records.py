"""Records shared by dataset import, the experiment engine, storage, reporting and the service.

They live below all of those layers (not in `core.experiments`) because the store must accept
and return them while experiments and storage never import each other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from core.record_base import Record
from core.run_results import JudgeExecutionFailure, JudgeUsage

__all__ = [
    "CONFIDENCE_STEPS",
    "REVIEW_NOTE_MAX",
    "ColumnMapping",
    "CostEstimate",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetItem",
    "DeletionImpact",
    "ExperimentConfig",
    "ExperimentDetail",
    "ExperimentInfo",
    "ExperimentProgress",
    "ExperimentStatus",
    "ExperimentSummary",
    "FailureCounts",
    "ImportProblem",
    "ImportReport",
    "ItemRow",
    "ItemSort",
    "RateLimit",
    "ResultPage",
    "ResultQuery",
    "Review",
    "ReviewInput",
    "ReviewVerdict",
    "RunCounts",
    "ScoreHistogram",
    "ScoreSummary",
    "ScoredRun",
    "ScorerCatalogEntry",
    "ScorerOptionInfo",
    "ScorerOutcome",
    "ScorerSpec",
    "ScorerStepInfo",
    "ScorerUsage",
    "SliceChange",
    "SliceScorer",
    "SliceSummary",
    "Theme",
    "ThemeKind",
    "ThemeReport",
]

DatasetFormat = Literal["csv", "tsv", "jsonl", "json", "xlsx", "parquet"]

ExperimentStatus = Literal[
    "pending",
    "running",
    "completed",
    "failed",
    "cancelled",
    "budget_reached",
    "error",
    "interrupted",
]
"""`completed`: every run was attempted (some may have failed); `failed`: every run failed;
`cancelled`: stopped by the user (finished runs are kept); `budget_reached`: stopped because the
next judge call would have taken the spend past `ExperimentConfig.max_cost` (finished runs are
kept; the runs not started are `counts.skipped`); `error`: the experiment itself broke
(say the database went away), see `error`; `interrupted`: its process died while it was pending
or running (no heartbeat for a while: dashboard restarted, CLI killed), the results written
until then are kept and `finished_at` is its last heartbeat. An `interrupted`, `cancelled` or
`budget_reached` experiment can be resumed (`Service.resume_experiment`)."""


# ---- datasets ----


class DatasetItem(Record):
    """One row of a dataset: what was asked, what was answered, and what was expected."""

    id: str
    """The row's id: from the mapped id column, else its 1-based row number."""
    input: Any = None
    """What the evaluated system was asked."""
    output: Any = None
    """What it answered (the value the scorers score)."""
    ground_truth: Any = None
    """The expected answer, if the dataset has one."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The row's other columns, by column name."""


class ColumnMapping(Record):
    """Which column of the file plays which role."""

    id: str | None = None
    """The id column; rows are numbered 1, 2, ... when None."""
    input: str
    """The input column."""
    output: str
    """The output column."""
    ground_truth: str | None = None
    """The ground-truth column, if any."""
    metadata: list[str] = Field(default_factory=list)
    """Columns kept with each item as metadata."""


class ImportProblem(Record):
    """One thing wrong with an imported file, with its place."""

    code: str
    """A stable code, e.g. `empty_output`, `malformed_row`, `duplicate_id`, `file_too_large`."""
    message: str
    """A plain sentence naming the place, e.g. "Row 17: the output (column 'answer') is empty"."""
    row: int | None = None
    """The 1-based data row (for JSONL, the line number), when the problem has one."""
    column: str | None = None
    """The column concerned, when there is one."""


class ImportReport(Record):
    """What reading a file under one mapping gave: its columns, the mappings, a preview, and its
    problems or its fingerprint. The items themselves come with it from the parsed upload
    (`core.datasets.upload.MappedUpload.items`), not in this record."""

    file_name: str
    """The file's name as given."""
    format: DatasetFormat | None = None
    """The format read (from the extension); None when unknown."""
    row_count: int = 0
    """Data rows read."""
    columns: list[str] = Field(default_factory=list)
    """Column names in file order."""
    proposed_mapping: ColumnMapping | None = None
    """The mapping detected from the column names, if input and output columns were found."""
    mapping_used: ColumnMapping | None = None
    """The mapping applied: the one given, else the proposed one."""
    problems: list[ImportProblem] = Field(default_factory=list)
    """Everything wrong; the import goes ahead only when this is empty."""
    preview: list[dict[str, Any]] = Field(default_factory=list)
    """The first rows as read (column name -> value)."""
    fingerprint: str | None = None
    """BLAKE3 of the mapped items' canonical form (the dataset's version); None with problems."""

    @property
    def ok(self) -> bool:
        """True when the file can be imported."""
        return not self.problems


class DatasetInfo(Record):
    """A stored dataset (without its items)."""

    id: str
    """The dataset's id."""
    name: str
    """Its display name."""
    file_name: str
    """The file it was imported from."""
    format: str
    """The file's format."""
    fingerprint: str
    """The content fingerprint (same items, same fingerprint)."""
    item_count: int
    """Number of items."""
    columns: list[str] = Field(default_factory=list)
    """The file's columns."""
    mapping: ColumnMapping
    """The mapping used at import."""
    created_at: datetime
    """When it was imported (UTC)."""


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


# ---- runs ----


class ScorerOutcome(Record):
    """What one scorer did on one item: a result, or a failure kept in memory only."""

    item_id: str
    """The item's id."""
    scorer_id: str
    """The scorer's id."""
    status: Literal["success", "failed"]
    """`success`: the run finished; `failed`: a step raised (never written to storage)."""
    score: float | None = None
    """The score (None for a failure, or a not-scorable run)."""
    reason: Any = None
    """The reason, when the scorer gives one."""
    result: dict[str, Any] | None = None
    """Success: the Mastra-format result (`ScorerRunResult.to_dict()`), judge record included."""
    error: str | None = None
    """Failure: the error message."""
    error_type: str | None = None
    """Failure: the error's class name."""
    recovered_score: float | None = None
    """Failure (`ScorerRunError`): the score computed before the failure, if any."""
    recovered_reason: Any = None
    """Failure (`ScorerRunError`): the reason computed before the failure, if any."""
    failed_step: str | None = None
    """Failure: the Mastra step that raised."""
    completed_steps: list[str] = Field(default_factory=list)
    """Failure: the steps that finished before it."""
    failed_execution: JudgeExecutionFailure | None = None
    """Failure: the failed judge execution of `failed_step`, if a judge call was attempted."""
    snapshot: dict[str, Any] | None = None
    """Failure: the error's result snapshot (`error.result.to_dict()`), if any."""
    duration_ms: int = 0
    """Wall time of the run."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Judge usage summed over the run's judge executions (successful and failed)."""
    judge_calls: int = 0
    """Judge model calls that returned (sum of `modelCallCount`)."""
    judge_attempts: int = 0
    """Judge attempts started (sum of `attemptCount`)."""
    cached_calls: int = 0
    """Judge executions answered from the judge cache (no request sent, no cost)."""


class RunCounts(Record):
    """How far an experiment's scorer runs got and what its judge cost: the one set of counters
    the engine keeps, the store writes in the experiment's row, and the service, the CLI and
    the pages show. Counts from several sources (chunks run elsewhere) add up with `+`."""

    total: int = 0
    """Scorer runs planned (items × scorers)."""
    succeeded: int = 0
    """Runs that produced a result (the stored ones)."""
    failed: int = 0
    """Runs that failed (counted only: their details stay in the memory of the process)."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Judge tokens over every finished run, failed ones included."""
    judge_calls: int = 0
    """Judge model calls that returned, over every finished run."""
    judge_attempts: int = 0
    """Judge attempts started, over every finished run."""
    cached_calls: int = 0
    """Judge executions answered from the judge cache, over every finished run: counted apart
    from `judge_calls` (no request reached the provider, nothing was spent)."""

    @property
    def done(self) -> int:
        """Runs finished (succeeded + failed)."""
        return self.succeeded + self.failed

    @property
    def skipped(self) -> int:
        """Runs planned but not finished (cancelled, or not reached yet)."""
        return self.total - self.done

    @property
    def fraction(self) -> float:
        """done / total, for progress bars."""
        return self.done / self.total if self.total else 1.0

    def with_run(
        self,
        *,
        succeeded: bool,
        usage: JudgeUsage,
        judge_calls: int,
        judge_attempts: int,
        cached_calls: int = 0,
    ) -> RunCounts:
        """These counts with one more finished run."""
        return RunCounts(
            total=self.total,
            succeeded=self.succeeded + succeeded,
            failed=self.failed + (not succeeded),
            usage=self.usage if usage.is_empty() else self.usage + usage,
            judge_calls=self.judge_calls + judge_calls,
            judge_attempts=self.judge_attempts + judge_attempts,
            cached_calls=self.cached_calls + cached_calls,
        )

    def with_outcome(self, outcome: ScorerOutcome) -> RunCounts:
        """These counts with one more finished run, described by its outcome."""
        return self.with_run(
            succeeded=outcome.status == "success",
            usage=outcome.usage,
            judge_calls=outcome.judge_calls,
            judge_attempts=outcome.judge_attempts,
            cached_calls=outcome.cached_calls,
        )

    def __add__(self, other: RunCounts) -> RunCounts:
        """Field-by-field sum (the counts of two parts of one experiment)."""
        if not isinstance(other, RunCounts):
            return NotImplemented
        return RunCounts(
            total=self.total + other.total,
            succeeded=self.succeeded + other.succeeded,
            failed=self.failed + other.failed,
            usage=self.usage + other.usage,
            judge_calls=self.judge_calls + other.judge_calls,
            judge_attempts=self.judge_attempts + other.judge_attempts,
            cached_calls=self.cached_calls + other.cached_calls,
        )


class ExperimentProgress(Record):
    """Where a running (or finished) experiment is."""

    experiment_id: str | None = None
    """The experiment, when the service runs it."""
    status: ExperimentStatus = "running"
    """The experiment's status."""
    counts: RunCounts = Field(default_factory=RunCounts)
    """Its runs and judge totals so far."""
    elapsed_s: float = 0.0
    """Seconds since the start."""
    eta_s: float | None = None
    """Estimated seconds left; None until something finished or after the end."""
    error: str | None = None
    """Why the experiment broke (status `error`)."""
    spent_usd: float | None = None
    """Under a spend cap (`ExperimentConfig.max_cost`), what its judge calls cost so far
    (litellm's prices, in this process); None without a cap."""

    @property
    def finished(self) -> bool:
        """True once the experiment stopped, whatever the reason."""
        return self.status not in ("pending", "running")

    @classmethod
    def measured(
        cls,
        status: ExperimentStatus,
        counts: RunCounts,
        elapsed_s: float,
        *,
        experiment_id: str | None = None,
        error: str | None = None,
        spent_usd: float | None = None,
    ) -> ExperimentProgress:
        """The progress after `elapsed_s` seconds, with the time left estimated from the pace
        so far while the experiment runs."""
        eta = None
        if status == "running" and counts.done:
            eta = elapsed_s / counts.done * counts.skipped
        return cls(
            experiment_id=experiment_id,
            status=status,
            counts=counts,
            elapsed_s=elapsed_s,
            eta_s=eta,
            error=error,
            spent_usd=spent_usd,
        )


class ExperimentSummary(Record):
    """What `run_experiment` returns once every run finished (or it was stopped)."""

    status: ExperimentStatus
    """`completed` (some runs may have failed: see `counts.failed`), `failed` (every run
    failed), `cancelled` or `budget_reached` (see `counts.skipped`)."""
    counts: RunCounts
    """The runs and judge totals."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Mean of the numeric scores of successful runs, per scorer id."""
    started_at: datetime
    """Start (UTC)."""
    finished_at: datetime
    """End (UTC)."""


class RateLimit(Record):
    """How many requests and tokens a judge model may receive per minute (the judge rate
    limit, `core.judge.rate_limit`; docs/core.md, Judge rate limits)."""

    requests_per_minute: int | None = Field(default=None, gt=0, strict=True)
    """Requests per minute, a whole number above 0; None: not limited (in an experiment's
    `rate_limit`: the provider's default)."""
    tokens_per_minute: int | None = Field(default=None, gt=0, strict=True)
    """Tokens per minute, prompt and answer together, a whole number above 0; None: not
    limited (in an experiment's `rate_limit`: the provider's default). A request counts at its
    estimated prompt tokens before it is sent, corrected by the usage reported after."""

    def is_unlimited(self) -> bool:
        """True when neither requests nor tokens are limited."""
        return self.requests_per_minute is None and self.tokens_per_minute is None

    def over(self, base: RateLimit | None) -> RateLimit:
        """This limit with each unset figure taken from `base`."""
        if base is None:
            return self
        return RateLimit(
            requests_per_minute=self.requests_per_minute or base.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute or base.tokens_per_minute,
        )


class ExperimentConfig(Record):
    """What to run: which dataset, which scorers, which judge."""

    name: str | None = None
    """Display name; a default one is made from the dataset and the time when None."""
    dataset_id: str
    """The stored dataset to score."""
    scorers: list[ScorerSpec]
    """The scorers and their options."""
    judge_model: str | None = None
    """litellm model string for the LLM-judge scorers."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible judge server, without user:password, query or fragment
    (it is stored). It gets only a key meant for it (docs/deploy.md, section 7); a key typed
    for the run is an argument of `Service.start_experiment`, never a field of this record."""
    concurrency: int = 8
    """Scorer runs at once."""
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    """Judge call settings from an allow-list (temperature, timeout, num_retries, ...:
    `core.judge.allowed_settings`); any other is refused."""
    cache: bool = False
    """Answer identical judge requests from the judge cache (and store new answers there);
    False: the cache is neither read nor written (docs/core.md, The judge cache)."""
    max_cost: float | None = None
    """A hard cap on the judge spend, in USD (litellm's prices): no judge call starts once the
    spend so far plus the calls in flight (each at its estimated cost) would pass it, and the
    experiment ends `budget_reached`. A judge model litellm has no price for cannot be capped:
    the experiment is refused. None: no cap."""
    rate_limit: RateLimit | None = None
    """Requests and tokens per minute the judge model may receive from this process while the
    experiment runs (shared with every other experiment on the same model). A figure left
    unset takes the provider's conservative default (`core.judge.rate_limit.PROVIDER_DEFAULTS`;
    none for a model served at another API base); None: the defaults."""


class CostEstimate(Record):
    """What an experiment's judge calls will probably cost: an ESTIMATE from a sample of its
    items (their real prompts, counted by litellm's token counter) and litellm's price table,
    never a bill. Low and high come from the smallest and the largest sampled item; the
    structured-output fallback and retries can add calls on top."""

    is_estimate: Literal[True] = True
    """Always true: every figure here is an estimate."""
    judge_model: str | None = None
    """The judge model priced."""
    items: int = 0
    """Items in the dataset."""
    sample_size: int = 0
    """Items whose prompts were built and counted."""
    judge_calls: int = 0
    """Judge calls the experiment makes at least (sampled calls per item × items)."""
    input_tokens_low: int = 0
    """Prompt tokens over the experiment if every item were like the smallest sampled one."""
    input_tokens_typical: int = 0
    """Prompt tokens over the experiment at the sample's mean."""
    input_tokens_high: int = 0
    """Prompt tokens over the experiment if every item were like the largest sampled one."""
    output_tokens_low: int = 0
    """Answer tokens if every answer were the shortest valid one."""
    output_tokens_typical: int = 0
    """Answer tokens at a typical judge answer length."""
    output_tokens_high: int = 0
    """Answer tokens if every answer were as long as allowed (`max_tokens`, else a long
    answer)."""
    priced: bool = False
    """Whether litellm's price table knows the judge model (no dollars without it)."""
    cost_usd_low: float | None = None
    """Estimated USD at the low token counts; None without a price."""
    cost_usd_typical: float | None = None
    """Estimated USD at the typical token counts; None without a price."""
    cost_usd_high: float | None = None
    """Estimated USD at the high token counts; None without a price."""


class ExperimentInfo(Record):
    """A stored experiment, with per-scorer means computed by the database."""

    id: str
    """The experiment's id."""
    name: str
    """Its display name."""
    dataset_id: str
    """The dataset scored."""
    dataset_name: str | None = None
    """That dataset's name."""
    dataset_fingerprint: str
    """That dataset's version."""
    scorers: list[ScorerSpec] = Field(default_factory=list)
    """The scorers as chosen (catalog ids and options)."""
    scorer_ids: list[str] = Field(default_factory=list)
    """The ids the results are keyed by."""
    judge_model: str | None = None
    """The judge model."""
    api_base: str | None = None
    """The judge server, if not the provider's default."""
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    """The judge call settings."""
    concurrency: int = 8
    """Scorer runs at once."""
    cache: bool = False
    """Whether its judge calls read and wrote the judge cache."""
    max_cost: float | None = None
    """Its judge spend cap in USD, if it had one."""
    status: ExperimentStatus = "pending"
    """Where it is."""
    total_items: int = 0
    """Items in the dataset."""
    counts: RunCounts = Field(default_factory=RunCounts)
    """Its runs and judge totals (failed runs' usage included; their details stay in memory)."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Mean stored score per scorer id."""
    comparisons: dict[str, str] = Field(default_factory=dict)
    """What each scorer compared, in words ("output vs ground truth"), by scorer id; a scorer
    whose options are unknown (an imported experiment from an older export) is left out."""
    error: str | None = None
    """Why the experiment broke (status `error`)."""
    created_at: datetime
    """When it was created (UTC)."""
    started_at: datetime | None = None
    """When it started running."""
    finished_at: datetime | None = None
    """When it stopped."""
    note: str | None = None
    """A note about it, written by a person (`Service.set_experiment_note`)."""
    tags: list[str] = Field(default_factory=list)
    """Short tags to find it by, in the order given."""


class ExperimentDetail(Record):
    """An experiment with its items, its stored results and its in-memory failures."""

    info: ExperimentInfo
    """The experiment."""
    items: list[DatasetItem]
    """The dataset's items, in order."""
    results: list[ScorerOutcome]
    """Successful runs, from storage."""
    failures: list[ScorerOutcome]
    """Failed runs, from this process's memory."""
    failures_in_memory: bool
    """False when the failures were lost (another process ran it, or it was restarted)."""
    reviews: list[Review] = Field(default_factory=list)
    """Human reviews of its items' scores (those of `items` only), oldest first."""


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
    """True when a text search stopped counting (past 10,000 matches and the page asked for):
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


class DeletionImpact(Record):
    """What deleting a dataset or an experiment takes with it, for the confirmation."""

    kind: Literal["dataset", "experiment"]
    """What would be deleted."""
    id: str
    """Its id."""
    name: str
    """Its name."""
    items: int = 0
    """Dataset items deleted (a dataset only)."""
    experiments: int = 0
    """Experiments deleted (a dataset: those over it; an experiment: 1)."""
    results: int = 0
    """Stored scorer results deleted."""
    reviews: int = 0
    """Human reviews of those results deleted."""
    running: int = 0
    """Of those experiments, how many this process is running (they must be cancelled first)."""


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


# ---- human review of scores (docs/review.md) ----


ReviewVerdict = Literal["right", "wrong"]
"""A reviewer's verdict on a scorer's score of an item."""

REVIEW_NOTE_MAX = 2_000
"""Characters a review's note may hold."""


class ReviewInput(Record):
    """A review as a reviewer gives it (`Service.save_review` checks it against the experiment)."""

    item_id: str
    """The item reviewed."""
    scorer_id: str
    """The scorer whose score is reviewed."""
    verdict: ReviewVerdict
    """Whether the scorer's score of the item is right or wrong."""
    score: float | None = None
    """The score the reviewer would have given, in the scorer's range (optional)."""
    note: str = ""
    """Why (optional; at most `REVIEW_NOTE_MAX` characters)."""
    reviewer: str = "anonymous"
    """Who reviewed: the dashboard login's user, a typed name, else "anonymous"."""


class Review(Record):
    """A stored review: one per (experiment, item, scorer, reviewer), updated in place."""

    experiment_id: str
    """The experiment."""
    item_id: str
    """The item reviewed."""
    scorer_id: str
    """The scorer whose score is reviewed."""
    verdict: ReviewVerdict
    """Whether the scorer's score of the item is right or wrong."""
    score: float | None = None
    """The score the reviewer would have given, if any."""
    note: str = ""
    """The reviewer's note (may be empty)."""
    reviewer: str
    """Who reviewed."""
    created_at: datetime
    """When the review was first saved (UTC)."""
    updated_at: datetime
    """When it was last changed (UTC)."""


CONFIDENCE_STEPS = ("preprocessStepResult", "analyzeStepResult")
"""The step results of a run whose `confidence` the review queue reads, in this order."""


class ScoredRun(Record):
    """A stored run as the review queue reads it: its score and the confidence values it
    reports, without the rest of its result (core/reporting/review_queue.py)."""

    item_id: str
    """The item."""
    scorer_id: str
    """The scorer."""
    score: float | None = None
    """Its score (None: not scorable)."""
    confidences: list[Any] = Field(default_factory=list)
    """`confidence` of each of its `CONFIDENCE_STEPS` results, as stored (None where absent;
    the queue keeps the first number in [0, 1])."""


ExperimentDetail.model_rebuild()  # its `reviews` names Review, defined after it
