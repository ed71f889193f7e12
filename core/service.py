"""The synchronous facade the dashboard and the CLI call: datasets, the scorer catalog, and
experiments run in background worker threads.

It composes the engine (`core.experiments`) and the store (`core.storage`), which never import
each other. Successful scorer results are written to the store in batches as they complete;
failed runs stay in this process's memory (never in the score storage). Judge API keys come
from the environment only and are never stored.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any

from core._sync import run_coroutine_sync
from core.experiment_records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ExperimentConfig,
    ExperimentDetail,
    ExperimentInfo,
    ExperimentProgress,
    ImportReport,
    ScorerCatalogEntry,
    ScorerOutcome,
    ScorerSpec,
)
from core.experiments.datasets import (
    SUPPORTED_EXTENSIONS,
    ParsedUpload,
    dataset_fingerprint,
    read_upload,
)
from core.experiments.engine import CancelToken, run_experiment
from core.judge import JudgeConfig
from core.judge.check import judge_problems
from core.reporting.experiment_file import (
    ExperimentFileError,
    ExportedExperiment,
    read_experiment_json,
)
from core.run_results import ScorerRunResult
from core.scorers import PREBUILT, DataNeed, PrebuiltScorer, ScorerBuildError
from core.scoring import Scorer
from core.storage import NotFoundError, StorageError, Store

__all__ = [
    "DEFAULT_JUDGE_SETTINGS",
    "JUDGE_API_KEY_ENV",
    "DatasetImportError",
    "ExperimentConfigError",
    "ExperimentFileError",
    "NotFoundError",
    "Service",
    "StorageError",
    "get_service",
    "scorer_catalog",
]

logger = logging.getLogger(__name__)

JUDGE_API_KEY_ENV = "SCORELAB_JUDGE_API_KEY"
"""Optional key for the judge server (else litellm reads the provider's usual variable)."""

DEFAULT_JUDGE_SETTINGS: dict[str, Any] = {"num_retries": 2}
"""The judge retries (with backoff, each retry a recorded attempt) rate-limited and failed
judge requests; settings given per experiment override these."""

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "data" / "samples"

_BATCH_SIZE = 500
_FLUSH_EVERY_S = 0.5
_HEARTBEAT_EVERY_S = 5.0
"""How often a running experiment's row is touched even when no run finishes (a slow judge):
well within `core.storage.STALE_AFTER_S`, after which it would be reported as interrupted."""
_CREDENTIAL_SETTING = re.compile(r"key|token|secret|password|authorization|header", re.I)


class DatasetImportError(ValueError):
    """A file that cannot be imported; `report.problems` says why and where."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        problems = report.problems
        first = problems[0].message if problems else "unknown problem"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{report.file_name}: {first}{more}")


class ExperimentConfigError(ValueError):
    """An experiment that cannot start (unknown scorer, bad option, no judge model, ...)."""


# ---- jobs ----


@dataclass
class _Job:
    """A running (or finished) experiment of this process."""

    experiment_id: str
    cancel: CancelToken
    progress: ExperimentProgress
    failures: list[ScorerOutcome] = field(default_factory=list)
    thread: threading.Thread | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class _ResultWriter:
    """Writes successful outcomes (and the latest progress) to the store in batches, from its
    own thread, so the event loop never waits for the database."""

    def __init__(self, store: Store, experiment_id: str, on_error: Any) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self._on_error = on_error
        self._queue: queue.Queue[ScorerOutcome | None] = queue.Queue()
        self._progress: ExperimentProgress | None = None
        self._last_beat = time.monotonic()  # the experiment row was just written
        self.error: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(
            target=self._run, name=f"scorelab-writer-{experiment_id[:8]}", daemon=True
        )
        self._thread.start()

    def put(self, outcome: ScorerOutcome) -> None:
        self._queue.put(outcome)

    def set_progress(self, progress: ExperimentProgress) -> None:
        self._progress = progress

    def close(self) -> None:
        """Flush everything still queued and stop."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        batch: list[ScorerOutcome] = []
        last_flush = time.monotonic()
        while True:
            try:
                outcome = self._queue.get(timeout=_FLUSH_EVERY_S)
            except queue.Empty:
                outcome = ...  # no news: maybe time to flush
            if outcome is None:
                self._flush(batch)
                return
            if isinstance(outcome, ScorerOutcome):
                batch.append(outcome)
            now = time.monotonic()
            due = now - last_flush >= _FLUSH_EVERY_S
            beat = now - self._last_beat >= _HEARTBEAT_EVERY_S
            if len(batch) >= _BATCH_SIZE or (due and (batch or self._progress is not None)) or beat:
                self._flush(batch)
                batch = []
                last_flush = time.monotonic()

    def _flush(self, batch: list[ScorerOutcome]) -> None:
        if self.error is not None:
            return
        try:
            if batch:
                self.written += self._store.add_results(self._experiment_id, batch)
            progress, self._progress = self._progress, None
            if progress is not None:  # writes the heartbeat too
                self._store.update_experiment_progress(self._experiment_id, progress)
                self._last_beat = time.monotonic()
            elif time.monotonic() - self._last_beat >= _HEARTBEAT_EVERY_S:
                self._store.heartbeat(self._experiment_id)
                self._last_beat = time.monotonic()
        except Exception as error:  # a broken database stops the experiment, loudly
            self.error = error
            self._on_error()


# ---- the service ----


class Service:
    """One per process (see `get_service`); thread-safe."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        catalog: Mapping[str, PrebuiltScorer] | None = None,
        samples_dir: Path | None = None,
    ) -> None:
        self.store = Store(database_url)
        self.catalog: Mapping[str, PrebuiltScorer] = PREBUILT if catalog is None else catalog
        self.samples_dir = SAMPLES_DIR if samples_dir is None else samples_dir
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._catalog_cache: list[ScorerCatalogEntry] | None = None

    # ---- datasets ----

    def read_upload(self, file_name: str, data: bytes) -> ParsedUpload:
        """Parse a file once, without storing it: `preview` and `import_parsed` then map it as
        often as needed without reading it again. What cannot be read is in the previews."""
        return read_upload(file_name, data)

    def preview(self, parsed: ParsedUpload, mapping: ColumnMapping | None = None) -> ImportReport:
        """A parsed file under `mapping` (the proposed one when None): columns, proposed
        mapping, preview, and the problems or the fingerprint."""
        return parsed.map(mapping).report

    def import_parsed(
        self,
        parsed: ParsedUpload,
        mapping: ColumnMapping | None = None,
        *,
        name: str | None = None,
        reuse_existing: bool = False,
    ) -> DatasetInfo:
        """Import a parsed file as a new dataset (whole or nothing), under `mapping` (the
        proposed one when None).

        Raises DatasetImportError listing the problems. With `reuse_existing`, a stored dataset
        with the same content fingerprint is returned instead of a copy.
        """
        mapped = parsed.map(mapping)
        report = mapped.report
        if not report.ok:
            raise DatasetImportError(report)
        assert report.fingerprint is not None and report.mapping_used is not None
        if reuse_existing:
            existing = self.store.find_dataset(report.fingerprint)
            if existing is not None:
                return existing
        file_name = parsed.file_name
        return self.store.save_dataset(
            name=(name or "").strip() or PurePath(file_name).stem or file_name,
            file_name=file_name,
            format=report.format or "",
            fingerprint=report.fingerprint,
            columns=report.columns,
            mapping=report.mapping_used,
            items=mapped.items(),
        )

    def preview_import(
        self, file_name: str, data: bytes, mapping: ColumnMapping | None = None
    ) -> ImportReport:
        """Read a file without storing it: columns, proposed mapping, preview and problems."""
        return self.preview(self.read_upload(file_name, data), mapping)

    def import_dataset(
        self,
        file_name: str,
        data: bytes,
        *,
        name: str | None = None,
        mapping: ColumnMapping | None = None,
        reuse_existing: bool = False,
    ) -> DatasetInfo:
        """Import a file as a new dataset (whole or nothing): `read_upload`, then
        `import_parsed`.

        Raises DatasetImportError listing the problems. With `reuse_existing`, a stored dataset
        with the same content fingerprint is returned instead of a copy.
        """
        parsed = self.read_upload(file_name, data)
        return self.import_parsed(parsed, mapping, name=name, reuse_existing=reuse_existing)

    def list_datasets(self) -> list[DatasetInfo]:
        """Every stored dataset, newest first."""
        return self.store.list_datasets()

    def get_dataset(self, dataset_id: str) -> DatasetInfo:
        """One dataset; raises NotFoundError."""
        return self.store.get_dataset(dataset_id)

    def dataset_items(self, dataset_id: str) -> list[DatasetItem]:
        """A dataset's items in file order."""
        return self.store.dataset_items(dataset_id)

    def delete_dataset(self, dataset_id: str) -> None:
        """Remove a dataset with its experiments and their results."""
        self.store.delete_dataset(dataset_id)

    def ensure_sample_datasets(self) -> list[DatasetInfo]:
        """Import each file of `data/samples/` that is not stored yet (by content fingerprint);
        returns the sample datasets. A sample that cannot be read is logged and skipped."""
        if not self.samples_dir.is_dir():
            return []
        found = []
        for path in sorted(self.samples_dir.iterdir()):
            if path.suffix.lower() not in SUPPORTED_EXTENSIONS or not path.is_file():
                continue
            try:
                found.append(self.import_dataset(path.name, path.read_bytes(), reuse_existing=True))
            except DatasetImportError as error:
                logger.warning("Sample dataset %s was not imported: %s", path, error)
        return found

    # ---- scorers ----

    def scorer_catalog(self) -> list[ScorerCatalogEntry]:
        """The scorers an experiment can use, with their options and steps."""
        if self._catalog_cache is None:
            self._catalog_cache = scorer_catalog(self.catalog)
        return list(self._catalog_cache)

    def build_scorer(self, spec: ScorerSpec, judge: JudgeConfig | None) -> Scorer:
        """The scorer for a catalog id and options; raises ExperimentConfigError."""
        entry = self.catalog.get(spec.scorer_id)
        if entry is None:
            known = ", ".join(sorted(self.catalog))
            raise ExperimentConfigError(f"Unknown scorer {spec.scorer_id!r}; known: {known}")
        try:
            return entry.build(spec.options, judge)
        except ScorerBuildError as error:
            raise ExperimentConfigError(str(error)) from error

    def try_scorer(
        self,
        spec: ScorerSpec,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        request_context: Any = None,
        judge_model: str | None = None,
        api_base: str | None = None,
        judge_settings: Mapping[str, Any] | None = None,
    ) -> ScorerRunResult:
        """Run one catalog scorer on one input/output (the playground), blocking.

        Raises ExperimentConfigError for a configuration that cannot work and ScorerRunError
        when a step fails; nothing is stored.
        """
        config = ExperimentConfig(
            dataset_id="playground",
            scorers=[spec],
            judge_model=judge_model,
            api_base=api_base,
            judge_settings=dict(judge_settings or {}),
        )
        judge = _judge_config(config) if judge_model else None
        scorer = self.build_scorer(spec, judge)
        return scorer.run_sync(
            input=input, output=output, ground_truth=ground_truth, request_context=request_context
        )

    def data_problems(self, dataset: DatasetInfo, specs: Sequence[ScorerSpec]) -> list[str]:
        """What stops the chosen scorers from running on this dataset: a field they need that
        the dataset does not map (ground truth, a context column, ...), one sentence each,
        written for the person choosing the scorers."""
        problems = []
        for spec in specs:
            entry = self.catalog.get(spec.scorer_id)
            if entry is None:
                continue  # build_scorer says so
            for need in entry.data_needs(spec.options):
                if not _dataset_has(dataset, need):
                    problems.append(_missing_data_message(entry, need, dataset))
        return problems

    def comparison(self, spec: ScorerSpec) -> str | None:
        """What a chosen scorer compares with its options, in words; None for an unknown id."""
        entry = self.catalog.get(spec.scorer_id)
        return entry.comparison(spec.options) if entry is not None else None

    def comparisons(self, info: ExperimentInfo) -> dict[str, str]:
        """What each scorer of an experiment compared, in words, by scorer id."""
        if len(info.scorers) != len(info.scorer_ids):
            return {}  # an import whose file did not list the scorers behind the ids
        found = {}
        for spec, scorer_id in zip(info.scorers, info.scorer_ids, strict=True):
            entry = self.catalog.get(spec.scorer_id)
            if entry is not None:
                found[scorer_id] = entry.comparison(spec.options)
        return found

    def _described(self, info: ExperimentInfo) -> ExperimentInfo:
        return info.model_copy(update={"comparisons": self.comparisons(info)})

    def estimate_judge_calls(self, dataset_id: str, scorers: Sequence[str | ScorerSpec]) -> int:
        """Judge calls an experiment will make at least: items × prompt steps (the
        structured-output fallback and retries can add more)."""
        items = self.store.get_dataset(dataset_id).item_count
        steps = 0
        for scorer in scorers:
            spec = scorer if isinstance(scorer, ScorerSpec) else ScorerSpec(scorer_id=scorer)
            entry = self.catalog.get(spec.scorer_id)
            if entry is not None:
                steps += entry.judge_calls_per_item(spec.options)
        return items * steps

    # ---- experiments ----

    def start_experiment(self, config: ExperimentConfig) -> str:
        """Start an experiment in a background worker; returns its id at once.

        Raises ExperimentConfigError (or NotFoundError for an unknown dataset) before anything
        is stored when the configuration cannot work.
        """
        dataset = self.store.get_dataset(config.dataset_id)
        scorers = self._scorers_for(config)
        problems = self.data_problems(dataset, config.scorers)
        if problems:
            raise ExperimentConfigError(" ".join(problems))
        items = self.store.dataset_items(dataset.id)
        name = (config.name or "").strip() or (
            f"{dataset.name} · {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"
        )
        info = self.store.create_experiment(
            name=name,
            dataset_id=dataset.id,
            scorers=config.scorers,
            scorer_ids=[s.id for s in scorers],
            judge_model=config.judge_model,
            api_base=config.api_base,
            judge_settings=config.judge_settings,
            concurrency=config.concurrency,
        )
        job = _Job(
            experiment_id=info.id,
            cancel=CancelToken(),
            progress=ExperimentProgress(
                experiment_id=info.id, status="pending", total=info.total_runs
            ),
        )
        job.thread = threading.Thread(
            target=self._run_job,
            args=(job, items, scorers, config.concurrency),
            name=f"scorelab-experiment-{info.id[:8]}",
            daemon=True,
        )
        with self._lock:
            self._jobs[info.id] = job
        job.thread.start()
        return info.id

    def progress(self, experiment_id: str) -> ExperimentProgress:
        """Where an experiment is (from memory while this process runs it, else storage)."""
        job = self._jobs.get(experiment_id)
        if job is not None:
            with job.lock:
                return job.progress
        return _stored_progress(self.store.get_experiment(experiment_id))

    def cancel(self, experiment_id: str, *, abort_in_flight: bool = False) -> None:
        """Stop starting new runs (and, with `abort_in_flight`, cancel those running).

        Finished results stay stored. Raises NotFoundError for an experiment this process is
        not running.
        """
        job = self._jobs.get(experiment_id)
        if job is None:
            self.store.get_experiment(experiment_id)  # NotFoundError for an unknown id
            return  # finished, or run by another process: nothing to stop here
        job.cancel.cancel(abort_in_flight=abort_in_flight)

    def wait(self, experiment_id: str, timeout: float | None = None) -> ExperimentProgress:
        """Block until the experiment stops; raises TimeoutError after `timeout` seconds."""
        job = self._jobs.get(experiment_id)
        if job is not None and job.thread is not None:
            job.thread.join(timeout)
            if job.thread.is_alive():
                raise TimeoutError(f"Experiment {experiment_id} still running after {timeout} s")
        return self.progress(experiment_id)

    def list_experiments(self) -> list[ExperimentInfo]:
        """Every experiment, newest first, with per-scorer means."""
        return [self._described(info) for info in self.store.list_experiments()]

    def running_experiments(self) -> list[str]:
        """Ids of the experiments this process is running, oldest first (from memory: no
        database read, so pages can ask on every rerun)."""
        with self._lock:
            jobs = list(self._jobs.values())
        return [j.experiment_id for j in jobs if j.thread is not None and j.thread.is_alive()]

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """One experiment; raises NotFoundError."""
        return self._described(self.store.get_experiment(experiment_id))

    def load_experiment(self, experiment_id: str) -> ExperimentDetail:
        """An experiment with its items, stored results and in-memory failures."""
        info = self.get_experiment(experiment_id)
        job = self._jobs.get(experiment_id)
        return ExperimentDetail(
            info=info,
            items=self.store.dataset_items(info.dataset_id),
            results=self.store.experiment_results(experiment_id),
            failures=self.failures(experiment_id),
            failures_in_memory=job is not None,
        )

    def failures(self, experiment_id: str) -> list[ScorerOutcome]:
        """The failed runs of an experiment this process ran (empty otherwise)."""
        job = self._jobs.get(experiment_id)
        if job is None:
            return []
        with job.lock:
            return list(job.failures)

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove a finished experiment and its results."""
        job = self._jobs.get(experiment_id)
        if job is not None and job.thread is not None and job.thread.is_alive():
            raise ExperimentConfigError("Cancel the experiment before deleting it")
        self.store.delete_experiment(experiment_id)
        with self._lock:
            self._jobs.pop(experiment_id, None)

    # ---- imported experiments ----

    def import_experiment_json(self, data: bytes, *, name: str | None = None) -> str:
        """Import an experiment exported as JSON (`core.reporting.experiment_json`); returns the
        new experiment's id.

        Its dataset is reused when one with the same content fingerprint is stored, else created
        from the file's items. The file's successful results are stored; its failed runs are
        counted in `failed_runs` and kept in this process's memory (`failures(id)`), never in
        the score storage, like the failures of an experiment run here. Raises
        ExperimentFileError (naming the place) for a file that is not a readable export, and
        StorageError when the database refuses; then nothing is left half-imported.
        """
        exported = read_experiment_json(data)
        dataset, created = self._dataset_for(exported)
        experiment_id: str | None = None
        try:
            info = self.store.create_experiment(
                name=(name or "").strip() or f"{exported.name} (imported)",
                dataset_id=dataset.id,
                scorers=exported.scorers,  # empty for exports that did not record them
                scorer_ids=exported.scorer_ids,
                judge_model=exported.judge_model,
                api_base=None,
                judge_settings={},
                concurrency=1,
            )
            experiment_id = info.id
            self.store.add_results(info.id, exported.results)
            progress = _imported_progress(info, exported)
            # A progress write first stamps started_at, so it never falls after finished_at.
            self.store.update_experiment_progress(info.id, progress)
            self.store.finish_experiment(info.id, exported.status, progress)
        except BaseException:
            self._undo_import(experiment_id, dataset.id if created else None)
            raise
        job = _Job(info.id, CancelToken(), progress, failures=list(exported.failures))
        with self._lock:
            self._jobs[info.id] = job
        return info.id

    def _dataset_for(self, exported: ExportedExperiment) -> tuple[DatasetInfo, bool]:
        """The stored dataset with the items' fingerprint, or a new one; True when new."""
        fingerprint = dataset_fingerprint(exported.items)
        existing = self.store.find_dataset(fingerprint)
        if existing is not None:
            return existing, False
        metadata = list(dict.fromkeys(key for item in exported.items for key in item.metadata))
        mapping = ColumnMapping(
            id="id", input="input", output="output", ground_truth="groundTruth", metadata=metadata
        )
        saved = self.store.save_dataset(
            name=exported.dataset_name or f"{exported.name} (dataset)",
            file_name=f"{exported.name}.json",
            format="json",
            fingerprint=fingerprint,
            columns=["id", "input", "output", "groundTruth", *metadata],
            mapping=mapping,
            items=exported.items,
        )
        return saved, True

    def _undo_import(self, experiment_id: str | None, dataset_id: str | None) -> None:
        """Remove what a failed import wrote (best effort: the database may be the problem)."""
        try:
            if experiment_id is not None:
                self.store.delete_experiment(experiment_id)
            if dataset_id is not None:
                self.store.delete_dataset(dataset_id)
        except StorageError as error:
            logger.error("Could not remove a half-imported experiment: %s", error)

    # ---- internals ----

    def _scorers_for(self, config: ExperimentConfig) -> list[Scorer]:
        if not config.scorers:
            raise ExperimentConfigError("Choose at least one scorer")
        if isinstance(config.concurrency, bool) or config.concurrency < 1:
            raise ExperimentConfigError(
                f"Concurrency must be a positive integer, got {config.concurrency!r}"
            )
        judge = _judge_config(config) if config.judge_model else None
        scorers = [self.build_scorer(spec, judge) for spec in config.scorers]
        ids = [s.id for s in scorers]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ExperimentConfigError(
                f"Scorer id {', '.join(map(repr, repeated))} is chosen twice; results are keyed "
                "by id (give checks an `id` option to run several side by side)"
            )
        return scorers

    def _run_job(
        self, job: _Job, items: list[DatasetItem], scorers: list[Scorer], concurrency: int
    ) -> None:
        experiment_id = job.experiment_id
        writer = _ResultWriter(
            self.store, experiment_id, lambda: job.cancel.cancel(abort_in_flight=True)
        )

        def on_outcome(outcome: ScorerOutcome) -> None:
            if outcome.status == "success":
                writer.put(outcome)
            else:
                with job.lock:
                    job.failures.append(outcome)

        def on_progress(progress: ExperimentProgress) -> None:
            # The final status is shown only once every result is written (see _finish).
            update: dict[str, Any] = {"experiment_id": experiment_id}
            if progress.finished:
                update["status"] = "running"
            progress = progress.model_copy(update=update)
            with job.lock:
                job.progress = progress
            writer.set_progress(progress)

        final: ExperimentProgress | None = None
        error: BaseException | None = None
        try:
            self.store.update_experiment_progress(
                experiment_id, job.progress.model_copy(update={"status": "running"})
            )
            on_progress(job.progress.model_copy(update={"status": "running"}))
            summary = run_coroutine_sync(
                run_experiment(
                    items=items,
                    scorers=scorers,
                    concurrency=concurrency,
                    on_outcome=on_outcome,
                    on_progress=on_progress,
                    cancel=job.cancel,
                )
            )
            final = job.progress.model_copy(update={"status": summary.status})
        except BaseException as failure:  # the worker must always record how it ended
            error = failure
        finally:
            writer.close()
        self._finish(job, final, error or writer.error)

    def _finish(
        self, job: _Job, final: ExperimentProgress | None, error: BaseException | None
    ) -> None:
        with job.lock:
            progress = final or job.progress
            if error is not None:
                message = f"{type(error).__name__}: {error}" if str(error) else repr(error)
                progress = progress.model_copy(
                    update={"status": "error", "error": message, "eta_s": None}
                )
                logger.error("Experiment %s stopped: %s", job.experiment_id, message)
            job.progress = progress
        try:
            self.store.finish_experiment(
                job.experiment_id, progress.status, progress, error=progress.error
            )
        except Exception as failure:  # nothing more can be done than say so
            logger.error(
                "Could not record the end of experiment %s: %s", job.experiment_id, failure
            )
            with job.lock:
                job.progress = job.progress.model_copy(
                    update={"status": "error", "error": f"Could not record the end: {failure}"}
                )


# ---- helpers ----


def _judge_config(config: ExperimentConfig) -> JudgeConfig:
    for key in config.judge_settings:
        if _CREDENTIAL_SETTING.search(key):
            raise ExperimentConfigError(
                f"judge_settings may not hold {key!r}: credentials come from the environment "
                f"(the provider's usual variable, or {JUDGE_API_KEY_ENV}) and are never stored"
            )
    api_key = os.environ.get(JUDGE_API_KEY_ENV) or None
    problems = judge_problems(config.judge_model or "", config.api_base, api_key is not None)
    if problems:
        raise ExperimentConfigError("; ".join(problems))
    if config.api_base and api_key is None and not _provider_key_in_environment(config):
        # OpenAI-compatible servers (vLLM, Ollama, proxies) often need no key, but the OpenAI
        # client refuses to start without one.
        api_key = "no-key"
    try:
        return JudgeConfig(
            model=config.judge_model,
            api_base=config.api_base or None,
            api_key=api_key,
            model_settings={**DEFAULT_JUDGE_SETTINGS, **config.judge_settings},
        )
    except ValueError as error:
        raise ExperimentConfigError(f"Invalid judge settings: {error}") from error


def _dataset_has(dataset: DatasetInfo, need: DataNeed) -> bool:
    if need.column == "ground_truth":
        return dataset.mapping.ground_truth is not None
    return need.column in dataset.mapping.metadata


def _missing_data_message(entry: PrebuiltScorer, need: DataNeed, dataset: DatasetInfo) -> str:
    columns = ", ".join(repr(c) for c in dataset.columns) or "none"
    if need.column == "ground_truth":
        fix = (
            "Import the file again with its ground-truth column mapped (the Datasets page, or "
            "--ground-truth-column in the CLI)"
        )
        if any(option.name == "reference" for option in entry.options):
            fix += ", or set the scorer's reference option to input"
        return (
            f"{entry.name} needs {need.what}, but dataset {dataset.name!r} maps no "
            f"ground-truth column (its columns: {columns}). {fix}."
        )
    instead = f", or give the scorer's {need.option!r} option" if need.option else ""
    return (
        f"{entry.name} needs {need.what} from a column named {need.column!r}, but dataset "
        f"{dataset.name!r} has no such column (its columns: {columns}). Add a "
        f"{need.column!r} column to the file and import it again{instead}."
    )


def _provider_key_in_environment(config: ExperimentConfig) -> bool:
    provider = (config.judge_model or "").split("/", 1)[0].upper().replace("-", "_")
    return bool(os.environ.get(f"{provider}_API_KEY"))


def scorer_catalog(
    catalog: Mapping[str, PrebuiltScorer] | None = None,
) -> list[ScorerCatalogEntry]:
    """The catalog (PREBUILT by default) as records, without opening any database."""
    return [e.catalog_entry() for e in (PREBUILT if catalog is None else catalog).values()]


def _stored_progress(info: ExperimentInfo) -> ExperimentProgress:
    end = info.finished_at or datetime.now(UTC)
    elapsed = (end - info.started_at).total_seconds() if info.started_at else 0.0
    return ExperimentProgress(
        experiment_id=info.id,
        status=info.status,
        total=info.total_runs,
        done=info.done_runs,
        succeeded=info.succeeded_runs,
        failed=info.failed_runs,
        usage=info.usage,
        judge_calls=info.judge_calls,
        judge_attempts=info.judge_attempts,
        elapsed_s=max(elapsed, 0.0),
        error=info.error,
    )


def _imported_progress(info: ExperimentInfo, exported: ExportedExperiment) -> ExperimentProgress:
    succeeded, failed = len(exported.results), len(exported.failures)
    return ExperimentProgress(
        experiment_id=info.id,
        status=exported.status,
        total=info.total_runs,
        done=succeeded + failed,
        succeeded=succeeded,
        failed=failed,
        usage=exported.usage,
        judge_calls=exported.judge_calls,
        judge_attempts=exported.judge_attempts,
    )


_service: Service | None = None
_service_lock = threading.Lock()


def get_service() -> Service:
    """The process-wide service (database from SCORELAB_DATABASE_URL or the default file)."""
    global _service
    with _service_lock:
        if _service is None:
            _service = Service()
        return _service
