"""`Service`: the one door of the dashboard and the CLI, composed of desks (one line each)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core._delegate import delegate
from core.experiments.jobs import Jobs
from core.scorers import PREBUILT, PrebuiltScorer
from core.scorers.catalog import ScorerCatalog
from core.service.context import SAMPLES_DIR, DeskContext
from core.service.datasets_desk import DatasetsDesk
from core.service.exchange_desk import ExchangeDesk
from core.service.experiments_desk import ExperimentsDesk
from core.service.manage import ManageDesk
from core.service.pass_fail import PassFailDesk
from core.service.results_desk import ResultsDesk
from core.service.review_desk import ReviewsDesk
from core.service.runs_desk import RESUMABLE, RunsDesk
from core.service.scorers_desk import ScorersDesk
from core.service.themes import ThemesDesk
from core.storage import Store

__all__ = ["RESUMABLE", "SAMPLES_DIR", "Service"]


class Service:
    """One per process (see `get_service`); thread-safe. Its desks (docs/architecture.md):
    `datasets`, `scorers`, `runs`, `experiments`, `results`, `reviewing`, `theming`,
    `grading`, `manage`, `exchange`.
    Successful scorer results are stored as they complete; failed runs stay in this process's
    memory. Judge keys come from the environment or are typed for one experiment (held in
    memory only, never stored); every secret the process holds is masked in what the service
    hands out (docs/deploy.md, Judge keys)."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        catalog: Mapping[str, PrebuiltScorer] | None = None,
        samples_dir: Path | None = None,
    ) -> None:
        self.context = DeskContext(
            store=Store(database_url),
            catalog=ScorerCatalog(PREBUILT if catalog is None else catalog),
            jobs=Jobs(),
            samples_dir=SAMPLES_DIR if samples_dir is None else samples_dir,
        )
        """What the desks share."""
        ctx = self.context
        self.datasets = DatasetsDesk(ctx)
        self.scorers = ScorersDesk(ctx)
        self.runs = RunsDesk(ctx)
        self.experiments = ExperimentsDesk(ctx)
        self.results = ResultsDesk(ctx, self.experiments)
        self.reviewing = ReviewsDesk(ctx, self.experiments)
        self.theming = ThemesDesk(ctx, self.experiments)
        self.grading = PassFailDesk(ctx, self.experiments, self.results)
        self.manage = ManageDesk(ctx, self.experiments)
        self.exchange = ExchangeDesk(ctx, self.scorers, self.grading)

    @property
    def store(self) -> Store:
        """The database."""
        return self.context.store

    @property
    def catalog(self) -> ScorerCatalog:
        """The scorers an experiment can use (set: every desk builds from the new one)."""
        return self.context.catalog

    @catalog.setter
    def catalog(self, catalog: ScorerCatalog) -> None:
        self.context.catalog = catalog

    @property
    def samples_dir(self) -> Path:
        """The folder of the sample datasets."""
        return self.context.samples_dir

    # ---- datasets: uploads and datasets (docs/datasets.md) ----
    read_upload = delegate("datasets", DatasetsDesk.read_upload)
    preview = delegate("datasets", DatasetsDesk.preview)
    import_parsed = delegate("datasets", DatasetsDesk.import_parsed)
    preview_import = delegate("datasets", DatasetsDesk.preview_import)
    import_dataset = delegate("datasets", DatasetsDesk.import_dataset)
    list_datasets = delegate("datasets", DatasetsDesk.list_datasets)
    get_dataset = delegate("datasets", DatasetsDesk.get_dataset)
    dataset_items = delegate("datasets", DatasetsDesk.dataset_items)
    iter_dataset_items = delegate("datasets", DatasetsDesk.iter_dataset_items)
    delete_dataset = delegate("datasets", DatasetsDesk.delete_dataset)
    ensure_sample_datasets = delegate("datasets", DatasetsDesk.ensure_sample_datasets)

    # ---- scorers: the catalog, the playground, what a configuration needs and costs ----
    scorer_catalog = delegate("scorers", ScorersDesk.scorer_catalog)
    build_scorer = delegate("scorers", ScorersDesk.build_scorer)
    try_scorer = delegate("scorers", ScorersDesk.try_scorer)
    judge_key = delegate("scorers", ScorersDesk.judge_key)
    data_problems = delegate("scorers", ScorersDesk.data_problems)
    comparison = delegate("scorers", ScorersDesk.comparison)
    estimate_judge_calls = delegate("scorers", ScorersDesk.estimate_judge_calls)
    estimate_cost = delegate("scorers", ScorersDesk.estimate_cost)

    # ---- runs: experiments started, resumed, retried, followed, cancelled ----
    start_experiment = delegate("runs", RunsDesk.start_experiment)
    resume_experiment = delegate("runs", RunsDesk.resume_experiment)
    retry_failed = delegate("runs", RunsDesk.retry_failed)
    progress = delegate("runs", RunsDesk.progress)
    cancel = delegate("runs", RunsDesk.cancel)
    wait = delegate("runs", RunsDesk.wait)
    running_experiments = delegate("runs", RunsDesk.running_experiments)

    # ---- experiments: stored experiments read and deleted ----
    list_experiments = delegate("experiments", ExperimentsDesk.list_experiments)
    get_experiment = delegate("experiments", ExperimentsDesk.get_experiment)
    load_experiment = delegate("experiments", ExperimentsDesk.load_experiment)
    experiment_pages = delegate("experiments", ExperimentsDesk.experiment_pages)
    failures = delegate("experiments", ExperimentsDesk.failures)
    sample_results = delegate("experiments", ExperimentsDesk.sample_results)
    sample_items = delegate("experiments", ExperimentsDesk.sample_items)
    label_agreement = delegate("experiments", ExperimentsDesk.label_agreement)
    delete_experiment = delegate("experiments", ExperimentsDesk.delete_experiment)

    # ---- results: aggregates, pages, one item, slices (docs/storage.md) ----
    score_summaries = delegate("results", ResultsDesk.score_summaries)
    score_histograms = delegate("results", ResultsDesk.score_histograms)
    judge_usage = delegate("results", ResultsDesk.judge_usage)
    failure_counts = delegate("results", ResultsDesk.failure_counts)
    result_page = delegate("results", ResultsDesk.result_page)
    prepare_search = delegate("results", ResultsDesk.prepare_search)
    item_detail = delegate("results", ResultsDesk.item_detail)
    compare_sides = delegate("results", ResultsDesk.compare_sides)
    metadata_columns = delegate("results", ResultsDesk.metadata_columns)
    slices = delegate("results", ResultsDesk.slices)
    compare_slices = delegate("results", ResultsDesk.compare_slices)

    # ---- reviewing: human reviews of scores (docs/review.md) ----
    save_review = delegate("reviewing", ReviewsDesk.save_review)
    reviews = delegate("reviewing", ReviewsDesk.reviews)
    delete_review = delegate("reviewing", ReviewsDesk.delete_review)
    review_marks = delegate("reviewing", ReviewsDesk.review_marks)
    review_queue = delegate("reviewing", ReviewsDesk.review_queue)
    review_agreement = delegate("reviewing", ReviewsDesk.review_agreement)

    # ---- theming: themes in judge reasons and errors ----
    themes = delegate("theming", ThemesDesk.themes)

    # ---- grading: pass/fail thresholds ----
    thresholds = delegate("grading", PassFailDesk.thresholds)
    set_thresholds = delegate("grading", PassFailDesk.set_thresholds)
    pass_fail = delegate("grading", PassFailDesk.pass_fail)

    # ---- manage: renames, notes, tags, deletion impacts ----
    find_dataset = delegate("manage", ManageDesk.find_dataset)
    rename_dataset = delegate("manage", ManageDesk.rename_dataset)
    rename_experiment = delegate("manage", ManageDesk.rename_experiment)
    set_experiment_note = delegate("manage", ManageDesk.set_experiment_note)
    dataset_deletion = delegate("manage", ManageDesk.dataset_deletion)
    experiment_deletion = delegate("manage", ManageDesk.experiment_deletion)
    review_count = delegate("manage", ManageDesk.review_count)

    # ---- exchange: experiment files and Mastra stores in and out (docs/mastra.md) ----
    mastra_summary = delegate("exchange", ExchangeDesk.mastra_summary)
    import_mastra = delegate("exchange", ExchangeDesk.import_mastra)
    export_mastra = delegate("exchange", ExchangeDesk.export_mastra)
    import_experiment_json = delegate("exchange", ExchangeDesk.import_experiment_json)
