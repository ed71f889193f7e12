"""Records of experiments: status, counts, progress, config, cost estimate, info, detail."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from core.record_base import Record
from core.records.catalog import ScorerSpec
from core.records.datasets import DatasetItem
from core.records.outcomes import ScorerOutcome
from core.records.reviews import Review
from core.run_results import JudgeUsage

__all__ = [
    "CostEstimate",
    "DeletionImpact",
    "ExperimentConfig",
    "ExperimentDetail",
    "ExperimentInfo",
    "ExperimentListing",
    "ExperimentProgress",
    "ExperimentStatus",
    "ExperimentSummary",
    "RateLimit",
    "RunCounts",
]


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
    rate_limit: RateLimit | None = None
    """The judge rate limit it runs under (a resume keeps it unless given another); None: the
    provider's defaults."""
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


class ExperimentListing(Record):
    """What the experiments list (`scorelab experiments`) shows of an experiment: read straight
    through the database driver by `core.storage.listing`, or taken from an `ExperimentInfo`
    (`of`); the same figures either way."""

    id: str
    """The experiment's id."""
    name: str
    """Its name."""
    dataset_id: str
    """The dataset it ran on."""
    dataset_name: str | None = None
    """That dataset's name (None once the dataset is gone)."""
    status: ExperimentStatus
    """Its status, `interrupted` for a live one without a fresh heartbeat."""
    total_items: int
    """Items planned."""
    succeeded: int
    """Runs that succeeded (the stored results)."""
    failed: int
    """Runs that failed."""
    judge_model: str | None = None
    """Its judge model (None: code scorers only)."""
    created_at: datetime
    """When it was created."""
    started_at: datetime | None = None
    """When it started."""
    finished_at: datetime | None = None
    """When it ended (the last heartbeat for an `interrupted` one)."""

    @classmethod
    def of(cls, info: ExperimentInfo) -> ExperimentListing:
        """The listing of an experiment read by the `Store`."""
        return cls(
            id=info.id,
            name=info.name,
            dataset_id=info.dataset_id,
            dataset_name=info.dataset_name,
            status=info.status,
            total_items=info.total_items,
            succeeded=info.counts.succeeded,
            failed=info.counts.failed,
            judge_model=info.judge_model,
            created_at=info.created_at,
            started_at=info.started_at,
            finished_at=info.finished_at,
        )


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
    """Of those experiments, how many are running, in this process or another (`running` with a
    fresh heartbeat in the database): the deletion is refused until they stop."""
