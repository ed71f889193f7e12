"""The run desk: experiments started, resumed, retried, followed and cancelled in workers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import SecretStr

from core.errors import ExperimentConfigError
from core.experiments.engine import MAX_CONCURRENCY
from core.experiments.jobs import ExperimentJob, StoredPairs, stored_progress
from core.experiments.ray_backend import RayRunner, ray_runner
from core.judge import JudgeConfig
from core.judge.credentials import RoutedJudge
from core.judge.rate_limit import judge_rate_limit
from core.records import (
    ExperimentConfig,
    ExperimentInfo,
    ExperimentProgress,
    RateLimit,
    ScorerSpec,
)
from core.scoring import Scorer
from core.service import judging
from core.service.context import DeskContext
from core.service.listing import RESUMABLE

__all__ = ["RESUMABLE", "RunsDesk"]


class RunsDesk:
    """`service.runs`: starting, resuming, retrying, following and cancelling experiments."""

    def __init__(self, context: DeskContext) -> None:
        self._ctx = context

    def start_experiment(
        self,
        config: ExperimentConfig,
        *,
        api_key: SecretStr | str | None = None,
        ray_address: str | None = None,
    ) -> str:
        """Start an experiment in a background worker; returns its id at once. `api_key`: a
        key typed for this experiment, held in this process's memory only (never stored,
        exported or logged; see `judge_key` for who gets which key). `ray_address`: run its
        scorers on a Ray cluster (`auto`, `ray://host:10001`, `host:port`, `local:N`;
        default SCORELAB_RAY_ADDRESS, else in this process: docs/scale.md).

        Raises ExperimentConfigError (or NotFoundError for an unknown dataset) before anything
        is stored when the configuration cannot work, including judge settings outside the
        allow-list and an API base holding a credential.
        """
        dataset = self._ctx.store.get_dataset(config.dataset_id)
        if isinstance(config.concurrency, bool) or config.concurrency < 1:
            raise ExperimentConfigError(
                f"Concurrency must be a positive integer, got {config.concurrency!r}"
            )
        if config.concurrency > MAX_CONCURRENCY:
            raise ExperimentConfigError(
                f"Concurrency must be at most {MAX_CONCURRENCY} runs at once, got "
                f"{config.concurrency:,}"
            )
        budget = judging.budget(config)
        if config.cache:
            judging.open_judge_cache()
        judge, api_base, settings, routed = judging.set_up_judge(
            config.judge_model, config.api_base, config.judge_settings, api_key, config.cache
        )
        scorers = self._ctx.catalog.build_all(config.scorers, judge)
        problems = self._ctx.catalog.data_problems(dataset, config.scorers)
        if problems:
            raise ExperimentConfigError(" ".join(problems))
        rate_limit = judge_rate_limit(config.judge_model, api_base, config.rate_limit, routed)
        runner = self._runner(ray_address, config.scorers, judge, api_key, rate_limit, routed)
        # Read a page at a time as the runs start: a large dataset is never held whole.
        items = self._ctx.store.iter_dataset_items(dataset.id)
        name = (config.name or "").strip() or (
            f"{dataset.name} · {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"
        )
        info = self._ctx.store.create_experiment(
            name=name,
            dataset_id=dataset.id,
            scorers=config.scorers,
            scorer_ids=[s.id for s in scorers],
            judge_model=config.judge_model,
            api_base=api_base,
            judge_settings=settings,
            concurrency=config.concurrency,
            cache=config.cache,
            max_cost=config.max_cost,
            rate_limit=config.rate_limit,
        )
        job = self._ctx.jobs.add(ExperimentJob(info.id, info.counts))
        job.start(
            self._ctx.store,
            items,
            scorers,
            config.concurrency,
            item_count=info.total_items,
            budget=budget,
            rate_limit=rate_limit,
            runner=runner,
        )
        return info.id

    def resume_experiment(
        self,
        experiment_id: str,
        *,
        api_key: SecretStr | str | None = None,
        max_cost: float | None = None,
        ray_address: str | None = None,
        rate_limit: RateLimit | None = None,
    ) -> str:
        """Run again, in a background worker, the (item, scorer) pairs of an `interrupted`,
        `cancelled` or `budget_reached` experiment that have no stored result (its failed
        runs included); returns its id, the same. The scorers and the judge are rebuilt from
        what the experiment stored (options, model, API base, settings; never a key): `api_key`
        is a key typed for this run, as in `start_experiment`. `max_cost` (USD) caps the whole
        experiment's judge spend, what it spent before included (default: the cap it was
        started with); a `budget_reached` experiment is resumed with a higher one.
        `ray_address`: as in `start_experiment` (a run on Ray resumes anywhere). `rate_limit`:
        the judge rate limit from now on, stored with the experiment (a figure it leaves unset
        keeps the stored one); default: the one the experiment stored.

        The stored results stay as they are; the failed runs are counted anew. A pair stored
        meanwhile by another process (a resume racing the one it resumes) is kept once.
        Raises NotFoundError for an unknown id, ExperimentConfigError for any other status (or
        when the experiment's scorers cannot be rebuilt), before anything runs."""
        info = self._ctx.store.get_experiment(experiment_id)
        job = self._ctx.jobs.get(experiment_id)
        status = "running" if job is not None and job.running else info.status
        if status not in RESUMABLE:
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is {status}: only an experiment "
                f"stopped part-way ({', '.join(RESUMABLE)}) can be resumed"
            )
        scorers = self._rebuilt_scorers(info, api_key)
        budget = judging.resumed_budget(info, max_cost)
        judge, _base, _settings, routed = judging.set_up_judge(
            info.judge_model, info.api_base, info.judge_settings, api_key, info.cache
        )
        wanted = info.rate_limit if rate_limit is None else rate_limit.over(info.rate_limit)
        limit = judge_rate_limit(info.judge_model, info.api_base, wanted, routed)
        runner = self._runner(ray_address, info.scorers, judge, api_key, limit, routed)
        if info.cache:
            judging.open_judge_cache()
        if not self._ctx.store.reopen_experiment(experiment_id, RESUMABLE):
            now = self._ctx.store.get_experiment(experiment_id).status
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is {now} now: another process "
                "resumed it first"
            )
        if wanted != info.rate_limit:
            self._ctx.store.set_rate_limit(experiment_id, wanted)
        info = self._ctx.store.get_experiment(experiment_id)  # the stored successes, no failure
        # Only the items some scorer has not stored (the database finds them), and of those
        # the pairs without a result.
        count, unfinished = self._ctx.store.iter_unfinished_items(
            experiment_id, info.dataset_id, len(scorers)
        )
        stored = StoredPairs(
            unfinished, lambda item_ids: self._ctx.store.stored_pairs(experiment_id, item_ids)
        )
        job = self._ctx.jobs.add(ExperimentJob(info.id, info.counts))
        job.start(
            self._ctx.store,
            stored.items(),
            scorers,
            info.concurrency,
            count,
            skip=stored,
            budget=budget,
            rate_limit=limit,
            runner=runner,
        )
        return info.id

    def retry_failed(self, experiment_id: str, *, api_key: SecretStr | str | None = None) -> int:
        """Run again, in a background worker, the failed runs this process holds in memory for
        an experiment; returns how many pairs it starts (`wait` and `progress` follow it like
        any run). A pair that now succeeds is stored and leaves the failures; one that fails
        again replaces its failure (never stored either). Scorers and judge are rebuilt as in
        `resume_experiment`; the experiment's status is the same after.

        Raises NotFoundError for an unknown id, ExperimentConfigError while it runs or when
        this process holds no failure of it."""
        info = self._ctx.store.get_experiment(experiment_id)
        job = self._ctx.jobs.get(experiment_id)
        failures = job.failures() if job is not None else []
        if job is None or not failures:
            gone = (
                f": its {info.counts.failed:,} failed runs were kept by a process that has "
                "since stopped (resume it instead)"
                if job is None and info.counts.failed
                else ""
            )
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) has no failed run to re-run in "
                f"this process's memory{gone}"
            )
        if job.running:
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({experiment_id}) is running: re-run its failed runs "
                "once it has stopped"
            )
        scorers = self._rebuilt_scorers(info, api_key)
        items = self._ctx.store.dataset_items_by_id(info.dataset_id, (f.item_id for f in failures))
        stored = StoredPairs(
            items, lambda item_ids: self._ctx.store.stored_pairs(experiment_id, item_ids)
        )
        try:
            pairs = job.retry(
                self._ctx.store, stored.items(), len(items), scorers, info.concurrency, skip=stored
            )
        except RuntimeError as error:  # started meanwhile by another thread
            raise ExperimentConfigError(str(error)) from error
        return len(pairs)

    def _runner(
        self,
        ray_address: str | None,
        specs: Sequence[ScorerSpec],
        judge: JudgeConfig | None,
        api_key: SecretStr | str | None,
        rate_limit: tuple[str, RateLimit] | None,
        routed: RoutedJudge | None,
    ) -> RayRunner | None:
        """The Ray runner of a run (None: in this process), with the run's judge, rate limit
        and key decision (a spend cap is the job's budget, which the runner is given)."""
        return ray_runner(
            ray_address,
            specs,
            judge,
            api_key,
            self._ctx.catalog,
            limits=dict([rate_limit]) if rate_limit else None,
            key=None if routed is None else routed.key,
        )

    def _rebuilt_scorers(
        self, info: ExperimentInfo, api_key: SecretStr | str | None
    ) -> list[Scorer]:
        """The experiment's scorers as it ran them, from what it stored."""
        judge, _base, _settings, _routed = judging.set_up_judge(
            info.judge_model, info.api_base, info.judge_settings, api_key, info.cache
        )
        scorers = self._ctx.catalog.build_all(info.scorers, judge)
        if [scorer.id for scorer in scorers] != list(info.scorer_ids):
            raise ExperimentConfigError(
                f"Experiment {info.name!r} ({info.id}) cannot run again: the scorers it stored "
                f"({', '.join(info.scorer_ids) or 'none'}) cannot be rebuilt from their options"
            )
        return scorers

    def progress(self, experiment_id: str) -> ExperimentProgress:
        """Where an experiment is (from memory while this process runs it, else storage)."""
        job = self._ctx.jobs.get(experiment_id)
        if job is not None:
            return judging.masked_progress(job.progress())
        return judging.masked_progress(
            stored_progress(self._ctx.store.get_experiment(experiment_id))
        )

    def cancel(self, experiment_id: str, *, abort_in_flight: bool = False) -> None:
        """Stop starting new runs (and, with `abort_in_flight`, cancel those running).

        Finished results stay stored. Raises NotFoundError for an experiment this process is
        not running.
        """
        job = self._ctx.jobs.get(experiment_id)
        if job is None:
            self._ctx.store.get_experiment(experiment_id)  # NotFoundError for an unknown id
            return  # finished, or run by another process: nothing to stop here
        job.cancel.cancel(abort_in_flight=abort_in_flight)

    def wait(
        self,
        experiment_id: str,
        timeout: float | None = None,
        *,
        until: Callable[[ExperimentProgress], bool] | None = None,
    ) -> ExperimentProgress:
        """Block until the experiment stops (its results and final row written), or until
        `until(progress)` holds; raises TimeoutError after `timeout` seconds."""
        job = self._ctx.jobs.get(experiment_id)
        if job is not None:
            return judging.masked_progress(job.wait(timeout, until))
        return self.progress(experiment_id)

    def running_experiments(self) -> list[str]:
        """Ids of the experiments this process is running, oldest first (from memory: no
        database read, so pages can ask on every rerun)."""
        return self._ctx.jobs.running()
