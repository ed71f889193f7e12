"""What `scorelab export` reads of a stored experiment, without starting the
`Service` when the database can be read directly (`core.storage.export_reads`: no
SQLAlchemy, no sqlmodel, no Alembic); else the `Service` itself, the same records
(docs/architecture.md, the CLI).

`quick_export_source` gives an object with the `Service` methods the exports call
(`get_experiment`, `experiment_pages`, `judge_usage`, `reviews`), answering them as the
`Service` of a fresh process does: no failure in memory, every secret in the record's error
masked, each scorer's comparison from the catalog's table (`core.scorers.metadata`, which
imports no scorer). An experiment with pass/fail thresholds
kept is left to the `Service` (`Service.pass_fail` weighs them)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from core.records import ExperimentDetail, ExperimentInfo, Review, ScorerUsage
from core.storage.export_reads import ExportReader, open_experiment

__all__ = ["QuickExportSource", "quick_export_source"]


class QuickExportSource:
    """One experiment read through the driver, answering as the `Service` would."""

    def __init__(self, reader: ExportReader, experiment_id: str) -> None:
        self._reader = reader
        self._id = experiment_id

    def close(self) -> None:
        """Close the reader's connection."""
        self._reader.close()

    @cached_property
    def _info(self) -> ExperimentInfo:
        from core.judge.secrets import secret_masker
        from core.scorers.metadata import comparisons  # the scorers' words, not the scorers

        info = self._reader.info()
        update: dict[str, object] = {"comparisons": comparisons(info)}
        if info.error:
            update["error"] = secret_masker().text(info.error)
        return info.model_copy(update=update)

    def _check(self, experiment_id: str) -> None:
        if experiment_id != self._id:
            raise ValueError(f"this source reads experiment {self._id!r}, not {experiment_id!r}")

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """`Service.get_experiment`."""
        self._check(experiment_id)
        return self._info

    def experiment_pages(
        self, experiment_id: str, page_size: int = 2_000
    ) -> Iterator[ExperimentDetail]:
        """`Service.experiment_pages` (no failure in memory: another process ran it)."""
        self._check(experiment_id)
        info = self._info
        for page in self._reader.pages(page_size):
            yield ExperimentDetail(
                info=info,
                items=page.items,
                results=page.results,
                failures=[],
                failures_in_memory=False,
                reviews=page.reviews,
            )

    def reviews(self, experiment_id: str) -> list[Review]:
        """`Service.reviews`: every review of the experiment, oldest first."""
        self._check(experiment_id)
        return self._reader.reviews()

    def judge_usage(self, experiment_id: str, *, priced: bool = True) -> list[ScorerUsage]:
        """`Service.judge_usage(..., priced=False)` (the exports' own: no price table)."""
        self._check(experiment_id)
        if priced:
            raise ValueError("the quick export source gives unpriced judge usage only")
        return self._reader.judge_usage()


def quick_export_source(database_url: str | None, experiment_id: str) -> QuickExportSource | None:
    """The experiment read directly, or None when the `Service` must answer (the database
    cannot be read so, no such experiment, thresholds kept with it)."""
    reader = open_experiment(database_url, experiment_id)
    if reader is None:
        return None
    try:
        if reader.has_thresholds:
            reader.close()
            return None
    except Exception:
        reader.close()
        return None
    return QuickExportSource(reader, experiment_id)
