"""A Mastra project's own store for the `Service` (docs/mastra.md): what it holds, its import,
and a scorelab experiment written back into it. Mixed into `Service`
(core/service/facade.py); the work is in core/exchange/mastra_import.py and mastra_export.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.exchange.mastra_export import export_to_mastra
from core.exchange.mastra_import import import_mastra_store, summarize_mastra_store
from core.exchange.mastra_records import MastraExport, MastraImport, MastraStoreSummary

if TYPE_CHECKING:
    from core.records import ScorerCatalogEntry
    from core.storage import Store

__all__ = ["MastraExport", "MastraImport", "MastraMixin", "MastraStoreSummary", "summarize"]

summarize = summarize_mastra_store
"""What a Mastra store holds, without opening scorelab's database (`scorelab mastra import
--list`)."""


class MastraMixin:
    """The Mastra methods of `Service`."""

    if TYPE_CHECKING:  # provided by Service
        store: Store

        def scorer_catalog(self) -> list[ScorerCatalogEntry]: ...

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
            self.store, location, datasets=datasets, experiments=experiments, live=live
        )

    def export_mastra(self, experiment_id: str, location: str) -> MastraExport:
        """Write a stored experiment into a Mastra store as Mastra's dataset (made when
        missing), experiment, results and scores. Raises NotFoundError, MastraStoreError."""
        catalog = {entry.id: entry for entry in self.scorer_catalog()}
        return export_to_mastra(self.store, experiment_id, location, catalog)
