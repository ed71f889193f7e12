"""The records of dataset import and experiments.

They are defined in `core.records` (below both the engine and the store, which must not import
each other) and re-exported here, next to the code that produces them.
"""

from core.records import (
    ColumnMapping,
    DatasetFormat,
    DatasetInfo,
    DatasetItem,
    ExperimentConfig,
    ExperimentDetail,
    ExperimentInfo,
    ExperimentProgress,
    ExperimentStatus,
    ExperimentSummary,
    ImportProblem,
    ImportReport,
    ScorerCatalogEntry,
    ScorerOptionInfo,
    ScorerOutcome,
    ScorerSpec,
    ScorerStepInfo,
)

__all__ = [
    "ColumnMapping",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetItem",
    "ExperimentConfig",
    "ExperimentDetail",
    "ExperimentInfo",
    "ExperimentProgress",
    "ExperimentStatus",
    "ExperimentSummary",
    "ImportProblem",
    "ImportReport",
    "ScorerCatalogEntry",
    "ScorerOptionInfo",
    "ScorerOutcome",
    "ScorerSpec",
    "ScorerStepInfo",
]
