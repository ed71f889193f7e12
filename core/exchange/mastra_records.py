"""The records of a Mastra store's import and export (docs/mastra.md)."""

from __future__ import annotations

from pydantic import Field

from core.record_base import Record

__all__ = [
    "MastraDatasetEntry",
    "MastraExperimentEntry",
    "MastraExport",
    "MastraImport",
    "MastraLiveEntry",
    "MastraStoreSummary",
]


class MastraDatasetEntry(Record):
    """A dataset of a Mastra store."""

    id: str
    """Mastra's dataset id."""
    name: str
    """Its name."""
    version: int
    """Its current version (Mastra versions a dataset's items)."""
    item_count: int
    """Its items at that version."""


class MastraExperimentEntry(Record):
    """An experiment of a Mastra store."""

    id: str
    """Mastra's experiment id (its scores' `runId`)."""
    name: str
    """Its name (its id when it has none)."""
    status: str
    """Mastra's status: pending, running, completed or failed."""
    dataset_id: str | None = None
    """The Mastra dataset it ran over, if any."""
    result_count: int = 0
    """Item results stored."""
    score_count: int = 0
    """Scores stored."""
    scorer_ids: list[str] = Field(default_factory=list)
    """The scorers that scored it."""


class MastraLiveEntry(Record):
    """Live scores (sampled from a running agent or workflow) of one entity."""

    entity_type: str
    """AGENT or WORKFLOW (as Mastra writes it)."""
    entity_id: str
    """The agent's or workflow's id."""
    score_count: int
    """Its live scores."""


class MastraStoreSummary(Record):
    """What a Mastra store holds, as the import offers it."""

    location: str
    """The store (a PostgreSQL URL with its password hidden)."""
    datasets: list[MastraDatasetEntry] = Field(default_factory=list)
    """Its datasets."""
    experiments: list[MastraExperimentEntry] = Field(default_factory=list)
    """Its experiments."""
    live: list[MastraLiveEntry] = Field(default_factory=list)
    """Its live scores, by entity."""
    skipped_columns: list[str] = Field(default_factory=list)
    """`table.column` of the columns of Mastra's tables that are not imported."""


class MastraImport(Record):
    """What one import added to scorelab's store (zero everywhere: it was all there)."""

    location: str
    """The Mastra store read."""
    dataset_ids: list[str] = Field(default_factory=list)
    """scorelab datasets made or topped up, in order."""
    experiment_ids: list[str] = Field(default_factory=list)
    """scorelab experiments made or topped up, in order."""
    new_datasets: int = 0
    """Datasets created by this import."""
    new_experiments: int = 0
    """Experiments created by this import."""
    new_items: int = 0
    """Dataset items added."""
    new_scores: int = 0
    """Scorer results added."""
    skipped_scores: int = 0
    """Scores left out: no item, no scorer id, or a score that is not a number."""
    skipped_columns: list[str] = Field(default_factory=list)
    """Columns of Mastra's tables not imported."""


class MastraExport(Record):
    """What an export wrote into a Mastra store."""

    location: str
    """The Mastra store written."""
    dataset_id: str
    """Mastra's dataset id (made when missing)."""
    dataset_created: bool
    """Whether the dataset was created by this export."""
    experiment_id: str
    """Mastra's new experiment id."""
    results: int
    """Item results written."""
    scores: int
    """Scores written (failed scorer runs are never stored, so never written)."""
