"""The synchronous facade the dashboard and the CLI call: datasets, the scorer catalog, and
experiments run in background worker threads.

Composition only: the engine and the jobs that drive it (`core.experiments`), the store
(`core.storage`; the two never import each other: a job writes to the store as its
`ResultSink`), the judge's credential policy (`core.judge.credentials`) and the export reader.
Successful scorer results are stored as they complete; failed runs stay in this process's
memory (never in the score storage). Judge API keys come from the environment only and are
never stored.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any

from core.experiment_import import import_experiment
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
from core.experiments.datasets import SUPPORTED_EXTENSIONS, ParsedUpload, read_upload
from core.experiments.jobs import ExperimentJob, Jobs, stored_progress
from core.judge import JudgeConfig
from core.judge.credentials import (
    DEFAULT_JUDGE_SETTINGS,
    JUDGE_API_KEY_ENV,
    JudgeSetupError,
    experiment_judge,
)
from core.reporting.experiment_file import ExperimentFileError
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

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "data" / "samples"


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
        self._jobs = Jobs()
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
        judge = _judge(judge_model, api_base, dict(judge_settings or {}))
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
        job = self._jobs.add(ExperimentJob(info.id, info.counts))
        job.start(self.store, items, scorers, config.concurrency)
        return info.id

    def progress(self, experiment_id: str) -> ExperimentProgress:
        """Where an experiment is (from memory while this process runs it, else storage)."""
        job = self._jobs.get(experiment_id)
        if job is not None:
            return job.progress()
        return stored_progress(self.store.get_experiment(experiment_id))

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

    def wait(
        self,
        experiment_id: str,
        timeout: float | None = None,
        *,
        until: Callable[[ExperimentProgress], bool] | None = None,
    ) -> ExperimentProgress:
        """Block until the experiment stops (its results and final row written), or until
        `until(progress)` holds; raises TimeoutError after `timeout` seconds."""
        job = self._jobs.get(experiment_id)
        if job is not None:
            return job.wait(timeout, until)
        return self.progress(experiment_id)

    def list_experiments(self) -> list[ExperimentInfo]:
        """Every experiment, newest first, with per-scorer means."""
        return [self._described(info) for info in self.store.list_experiments()]

    def running_experiments(self) -> list[str]:
        """Ids of the experiments this process is running, oldest first (from memory: no
        database read, so pages can ask on every rerun)."""
        return self._jobs.running()

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """One experiment; raises NotFoundError."""
        return self._described(self.store.get_experiment(experiment_id))

    def load_experiment(self, experiment_id: str) -> ExperimentDetail:
        """An experiment with its items, stored results and in-memory failures."""
        info = self.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=self.store.dataset_items(info.dataset_id),
            results=self.store.experiment_results(experiment_id),
            failures=self.failures(experiment_id),
            failures_in_memory=self._jobs.get(experiment_id) is not None,
        )

    def failures(self, experiment_id: str) -> list[ScorerOutcome]:
        """The failed runs of an experiment this process ran (empty otherwise)."""
        job = self._jobs.get(experiment_id)
        return job.failures() if job is not None else []

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove a finished experiment and its results."""
        job = self._jobs.get(experiment_id)
        if job is not None and job.running:
            raise ExperimentConfigError("Cancel the experiment before deleting it")
        self.store.delete_experiment(experiment_id)
        self._jobs.forget(experiment_id)

    # ---- imported experiments ----

    def import_experiment_json(self, data: bytes, *, name: str | None = None) -> str:
        """Import an experiment exported as JSON (`core.reporting.experiment_json`); returns the
        new experiment's id.

        Its dataset is reused when one with the same content fingerprint is stored, else created
        from the file's items. The file's successful results are stored; its failed runs are
        counted in `counts.failed` and kept in this process's memory (`failures(id)`), never in
        the score storage, like the failures of an experiment run here. Raises
        ExperimentFileError (naming the place) for a file that is not a readable export, and
        StorageError when the database refuses; then nothing is left half-imported.
        """
        return self._jobs.add(import_experiment(self.store, data, name)).experiment_id

    # ---- internals ----

    def _scorers_for(self, config: ExperimentConfig) -> list[Scorer]:
        if not config.scorers:
            raise ExperimentConfigError("Choose at least one scorer")
        if isinstance(config.concurrency, bool) or config.concurrency < 1:
            raise ExperimentConfigError(
                f"Concurrency must be a positive integer, got {config.concurrency!r}"
            )
        judge = _judge(config.judge_model, config.api_base, config.judge_settings)
        scorers = [self.build_scorer(spec, judge) for spec in config.scorers]
        ids = [s.id for s in scorers]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ExperimentConfigError(
                f"Scorer id {', '.join(map(repr, repeated))} is chosen twice; results are keyed "
                "by id (give checks an `id` option to run several side by side)"
            )
        return scorers


# ---- helpers ----


def _judge(
    model: str | None, api_base: str | None, settings: Mapping[str, Any]
) -> JudgeConfig | None:
    """The judge of a model string (None without one: a scorer that needs it says so)."""
    if not model:
        return None
    try:
        return experiment_judge(model, api_base, settings)
    except JudgeSetupError as error:
        raise ExperimentConfigError(str(error)) from error


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




def scorer_catalog(
    catalog: Mapping[str, PrebuiltScorer] | None = None,
) -> list[ScorerCatalogEntry]:
    """The catalog (PREBUILT by default) as records, without opening any database."""
    return [e.catalog_entry() for e in (PREBUILT if catalog is None else catalog).values()]


_service: Service | None = None
_service_lock = threading.Lock()


def get_service() -> Service:
    """The process-wide service (database from SCORELAB_DATABASE_URL or the default file)."""
    global _service
    with _service_lock:
        if _service is None:
            _service = Service()
        return _service
