"""The store's scorer results: written in bulk (each pair once), read back, aggregated by SQL."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    func,
    null,
    select,
)
from sqlalchemy.engine import make_url
from sqlmodel import col

from core.records import (
    ResultPage,
    ResultQuery,
    ScoreHistogram,
    ScorerOutcome,
    ScorerUsage,
    ScoreSummary,
    SliceSummary,
    StoredScores,
)
from core.run_results import ResultRow
from core.storage import reads, result_rows, slices, step_usage, totals
from core.storage._engines import is_sqlite_file
from core.storage._rows import (
    _KEY_PAGE,
    _outcome,
    _score_row,
    _settled_key,
)
from core.storage.database import Database
from core.storage.experiments import ExperimentStore
from core.storage.search_index import SearchIndexer
from core.storage.tables import DatasetItemRow, ExperimentRow, ScoreRow

if TYPE_CHECKING:
    from core.storage.writer_process import WriterProcess

__all__ = ["ResultStore"]


class ResultStore:
    """`store.results`: the stored results and what the database reads of them."""

    def __init__(self, database: Database, experiments: ExperimentStore) -> None:
        self._db = database
        self._experiments = experiments
        self.search_indexer = SearchIndexer(lambda: database.engine)
        """This process's builds of SQLite's text search index (core/storage/search_index.py)."""

    def add_results(self, experiment_id: str, outcomes: Iterable[ScorerOutcome]) -> int:
        """Bulk-insert successful outcomes; returns how many were written.

        An outcome whose (item, scorer) already has a stored result is skipped, never an error
        (`INSERT ... ON CONFLICT DO NOTHING` on the table's unique key): a resumed experiment
        racing a process still writing it stores each pair once, the first written.

        Raises ValueError (writing nothing) if any outcome is not a success: failed runs and
        their recovered scores must never reach the score storage.
        """
        outcomes = list(outcomes)
        failed = [o for o in outcomes if o.status != "success"]
        if failed:
            first = failed[0]
            raise ValueError(
                f"add_results accepts successful outcomes only; got {len(failed)} with status "
                f"{first.status!r} (first: item {first.item_id!r}, scorer {first.scorer_id!r})"
            )
        return self.add_rows(experiment_id, [_score_row(outcome) for outcome in outcomes])

    def add_rows(self, experiment_id: str, rows: Sequence[ResultRow]) -> int:
        """Bulk-insert successful runs given as pre-encoded rows (`core.run_results.ResultRow`,
        what a running experiment's writer hands over); returns how many were written, as
        `add_results` does (a pair already stored is skipped). Raises NotFoundError, writing
        nothing, for an experiment that does not exist (`result_rows.insert_rows`)."""
        # On PostgreSQL the rows go in key order (result_rows: two writers of one experiment
        # wait for each other's keys in one order, and none deadlocks).
        keyed = [(experiment_id, *row) for row in rows]
        self._db.settled.pop(experiment_id, None)
        with self._db.transaction("store the scorer results") as connection:
            # The experiment is looked up and locked first (insert_rows), the kept totals
            # forgotten after: a deletion locks the experiment before it deletes those totals,
            # so the two transactions take their locks in one order and never deadlock.
            written = result_rows.insert_rows(connection, keyed)
            totals.forget(connection, [experiment_id])  # summed before these rows
            return written

    def detached(self) -> WriterProcess | None:
        """A sink writing to this database from a child process of its own (`add_rows`,
        progress and heartbeats: core/storage/writer_process.py), or None for SQLite in memory,
        which no other process can open."""
        url = self._db.url
        if make_url(url).get_backend_name() == "sqlite" and not is_sqlite_file(url):
            return None
        # Imported here: the child runs that module as its __main__.
        from core.storage.writer_process import WriterProcess

        return WriterProcess(url)

    def stored_pairs(self, experiment_id: str, item_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (item id, scorer id) pairs of these items that have a stored result."""
        table = ScoreRow.__table__
        pairs: set[tuple[str, str]] = set()
        with self._db.engine.connect() as connection:
            for start in range(0, len(item_ids), _KEY_PAGE):
                query = select(table.c.item_id, table.c.scorer_id).where(
                    table.c.experiment_id == experiment_id,
                    table.c.item_id.in_(item_ids[start : start + _KEY_PAGE]),
                )
                pairs.update((item, scorer) for item, scorer in connection.execute(query))
        return pairs

    def experiment_results(
        self,
        experiment_id: str,
        *,
        scorer_id: str | None = None,
        with_result: bool = True,
        item_ids: Sequence[str] | None = None,
        limit: int | None = None,
        judged_only: bool = False,
    ) -> list[ScorerOutcome]:
        """The stored (successful) outcomes of an experiment, in the order they were written.

        `with_result=False` leaves out the full result JSON (a light table for large runs);
        `item_ids` keeps those of these items only (a page of a large experiment); `limit`
        the first that many; `judged_only` those of runs that called the judge (an attempt
        made, or answered from the judge cache: what judge usage sums).
        """
        table = ScoreRow.__table__
        columns: list[Any] = [c for c in table.c if with_result or c.name != "result"]
        if not with_result:
            # A NULL `result` column: a row without the key costs a KeyError per `.get`
            # (2 s over 100,000 rows).
            columns.append(null().label("result"))
        source: Any = table
        if with_result:
            # A result stored without its item's texts (`item_texts`) gets them back from the
            # item: the same result as it was run, whoever reads it (pages, exports, Compare).
            items = DatasetItemRow.__table__
            dataset = (
                select(ExperimentRow.__table__.c.dataset_id)
                .where(ExperimentRow.__table__.c.id == experiment_id)
                .scalar_subquery()
            )
            source = table.outerjoin(
                items,
                (items.c.dataset_id == dataset)
                & (items.c.item_id == table.c.item_id)
                & table.c.item_texts,
            )
            columns += [
                items.c.input.label("item_input"),
                items.c.output.label("item_output"),
                items.c.ground_truth.label("item_ground_truth"),
                items.c.item_metadata.label("item_metadata"),
            ]
        query = select(*columns).select_from(source).where(table.c.experiment_id == experiment_id)
        if scorer_id is not None:
            query = query.where(table.c.scorer_id == scorer_id)
        if item_ids is not None:
            query = query.where(table.c.item_id.in_(list(item_ids)))
        if judged_only:
            query = query.where((table.c.judge_attempts > 0) | (table.c.cached_calls > 0))
        query = query.order_by(table.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self._db.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [_outcome(r._mapping) for r in rows]

    def result_count(self, experiment_id: str) -> int:
        """How many results are stored for an experiment."""
        query = select(func.count()).where(col(ScoreRow.experiment_id) == experiment_id)
        with self._db.engine.connect() as connection:
            return int(connection.execute(query).scalar_one())

    # ---- a large experiment read without loading it (core/storage/reads.py) ----

    def stored_scores(self, experiment_id: str) -> StoredScores:
        """Every stored run's item, scorer, score and reason, as columns (`reads.stored_scores`:
        what Compare pairs, no result JSON)."""
        with self._db.engine.connect() as connection:
            return reads.stored_scores(connection, experiment_id)

    def score_summaries(self, experiment_id: str) -> list[ScoreSummary]:
        """Per scorer: stored runs, numeric scores, mean, min and max (SQL GROUP BY)."""
        return [found.summary() for found in self._experiment_totals(experiment_id)[1]]

    def score_histograms(
        self, experiment_id: str, bins: int = reads.HISTOGRAM_BINS
    ) -> list[ScoreHistogram]:
        """Per scorer with a numeric score: its scores counted in `bins` equal bins over 0..1
        (widened to the lowest and highest score) by the database."""
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
            raise ValueError(f"score_histograms needs 1 bin or more, got {bins!r}")
        summaries = [found.summary() for found in self._experiment_totals(experiment_id)[1]]
        table = ExperimentRow.__table__
        with self._db.engine.connect() as connection:
            row = connection.execute(select(table).where(table.c.id == experiment_id)).first()
            key = None if row is None else _settled_key(row._mapping)
            kept = (
                None
                if key is None
                else totals.kept_histograms(connection, experiment_id, key, bins)
            )
            if kept is not None:
                return kept
            return reads.score_histograms(connection, experiment_id, summaries, bins)

    def judge_usage(self, experiment_id: str) -> list[ScorerUsage]:
        """Per scorer: its stored runs that called the judge, their judge calls, attempts,
        tokens and duration (SQL GROUP BY), and the same per prompt step (`ScorerUsage.steps`,
        core/storage/step_usage.py); the estimated cost is left for the service to fill."""
        model, found = self._experiment_totals(experiment_id)
        usages = [one.scorer_usage(model) for one in found]
        if not any(usage.runs for usage in usages):  # no run called the judge: no step to split
            return usages
        table = ExperimentRow.__table__
        with self._db.engine.connect() as connection:  # each prompt step's, where runs keep it
            row = connection.execute(select(table).where(table.c.id == experiment_id)).first()
            key = None if row is None else _settled_key(row._mapping)
            kept = None if key is None else totals.kept_steps(connection, experiment_id, key)
            if kept is not None:  # summed when the experiment finished
                return step_usage.apply_steps(usages, kept)
            return step_usage.with_steps(connection, experiment_id, usages)

    def _experiment_totals(self, experiment_id: str) -> tuple[str | None, list[reads.ScorerTotals]]:
        """(the judge model, the per-scorer totals) of an experiment (none for an unknown)."""
        table = ExperimentRow.__table__
        with self._db.engine.connect() as connection:
            row = connection.execute(select(table).where(table.c.id == experiment_id)).first()
            if row is None:
                return None, []
            return row.judge_model, self._db.totals(connection, [row._mapping])[experiment_id]

    def result_page(
        self,
        experiment_id: str,
        query: ResultQuery,
        item_ids: Collection[str] | None = None,
    ) -> ResultPage:
        """A page of the experiment's item table, filtered, sorted and counted by the database
        (`query.failed_only` aside: failures are not stored, so the caller passes the items
        to consider as `item_ids`). Raises NotFoundError for an unknown experiment and
        ValueError naming a bad field of `query`; a page past the last gives the last."""
        reads.check_query(query)
        dataset_id, items, scorer_ids = self._experiments.dataset_of(experiment_id)
        if reads.may_use_index(query, item_ids):
            self.search_indexer.for_search(dataset_id, items)
        with self.search_indexer.searching(), self._db.engine.connect() as connection:
            return reads.result_page(
                connection, experiment_id, dataset_id, items, scorer_ids, query, item_ids
            )

    def prepare_search(self, experiment_id: str) -> bool:
        """Start building the text search index of the experiment's dataset in the background
        (SQLite's, or on PostgreSQL a large dataset's partial trigram index; nothing when it is
        built or being built); whether a build runs. Raises NotFoundError for an unknown
        experiment."""
        dataset_id, items, _ = self._experiments.dataset_of(experiment_id)
        return self.search_indexer.start(dataset_id, items)

    def slice_summaries(self, experiment_id: str, column: str) -> list[SliceSummary]:
        """The experiment's stored results grouped by a metadata column's value, by the
        database (core/storage/slices.py); raises NotFoundError, ValueError for a column
        name the database cannot read."""
        dataset_id, _, scorer_ids = self._experiments.dataset_of(experiment_id)
        with self._db.engine.connect() as connection:
            return slices.slice_summaries(connection, experiment_id, dataset_id, scorer_ids, column)

    def metadata_values(
        self, dataset_id: str, column: str, item_ids: Sequence[str]
    ) -> dict[str, str]:
        """The `column` value (text; "" for none) of each given item of a dataset."""
        with self._db.engine.connect() as connection:
            return slices.item_values(connection, dataset_id, column, item_ids)
