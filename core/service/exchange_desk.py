"""The exchange desk: experiment files imported; Mastra stores summarised, imported, written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.exchange.experiment_import import import_experiment
from core.exchange.mastra_export import export_to_mastra
from core.exchange.mastra_import import import_mastra_store, summarize_mastra_store
from core.exchange.mastra_records import MastraExport, MastraImport, MastraStoreSummary
from core.service.context import DeskContext
from core.service.pass_fail import PassFailDesk
from core.service.scorers_desk import ScorersDesk

__all__ = ["ExchangeDesk", "MastraExport", "MastraImport", "MastraStoreSummary", "summarize"]

summarize = summarize_mastra_store
"""What a Mastra store holds, without opening scorelab's database (`scorelab mastra import
--list`)."""


class ExchangeDesk:
    """`service.exchange`: experiment files and Mastra stores in and out."""

    def __init__(self, context: DeskContext, scorers: ScorersDesk, grading: PassFailDesk) -> None:
        self._ctx = context
        self._scorers = scorers
        self._grading = grading

    def mastra_summary(self, location: str) -> MastraStoreSummary:
        """The datasets, experiments (with counts) and live scores of the Mastra store at
        `location` (a LibSQL file or a PostgreSQL URL); raises MastraStoreError."""
        return summarize_mastra_store(location)

    def import_mastra(
        self,
        location: str,
        *,
        datasets: Sequence[str] | None = None,
        experiments: Sequence[str] | None = None,
        live: bool = True,
    ) -> MastraImport:
        """Import the chosen datasets and experiments (by Mastra id; None: all) and the live
        scores of a Mastra store; again, only what is new. Raises MastraStoreError."""
        return import_mastra_store(
            self._ctx.store, location, datasets=datasets, experiments=experiments, live=live
        )

    def export_mastra(self, experiment_id: str, location: str) -> MastraExport:
        """Write a stored experiment into a Mastra store as Mastra's dataset (made when
        missing), experiment, results and scores. Raises NotFoundError, MastraStoreError."""
        catalog = {entry.id: entry for entry in self._scorers.scorer_catalog()}
        return export_to_mastra(self._ctx.store, experiment_id, location, catalog)

    def import_experiment_json(self, data: bytes, *, name: str | None = None) -> str:
        """Import an exported experiment (whole or nothing; `core.exchange.experiment_import`): its
        results stored, its failures in this process's memory only; returns its new id."""
        experiment_id = self._ctx.jobs.add(
            import_experiment(self._ctx.store, data, name)
        ).experiment_id
        kept = _exported_thresholds(data)
        if kept:
            self._grading.set_thresholds(experiment_id, kept)
        return experiment_id


def _exported_thresholds(data: bytes) -> dict[str, Any]:
    """Scorer id -> threshold bounds from an export's `summary.thresholdResults` (the pass/fail
    thresholds kept with the experiment it came from); empty when it has none."""
    try:
        document = json.loads(data)
    except ValueError:  # the import read it already: not reached for a file it took
        return {}
    results = (
        (document.get("summary") or {}).get("thresholdResults")
        if isinstance(document, dict)
        else None
    )
    kept: dict[str, Any] = {}
    for result in results if isinstance(results, list) else []:
        if isinstance(result, dict) and isinstance(result.get("id"), str):
            bounds = result.get("threshold")
            if isinstance(bounds, dict):
                kept[result["id"]] = {k: v for k, v in bounds.items() if v is not None}
    return kept
