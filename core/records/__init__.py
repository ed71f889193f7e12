"""The records shared by dataset import, the experiment engine, storage, reporting and the service,
one module per subject; they live below all of those rooms (docs/architecture.md)."""

from core.records.catalog import ScorerCatalogEntry, ScorerOptionInfo, ScorerSpec, ScorerStepInfo
from core.records.datasets import (
    ColumnMapping,
    DatasetFormat,
    DatasetInfo,
    DatasetItem,
    ImportProblem,
    ImportReport,
)
from core.records.experiments import (
    CostEstimate,
    DeletionImpact,
    ExperimentConfig,
    ExperimentDetail,
    ExperimentInfo,
    ExperimentProgress,
    ExperimentStatus,
    ExperimentSummary,
    RateLimit,
    RunCounts,
)
from core.records.outcomes import ScorerOutcome
from core.records.results import (
    FailureCounts,
    ItemRow,
    ItemSort,
    ResultPage,
    ResultQuery,
    ScoreHistogram,
    ScorerUsage,
    ScoreSummary,
)
from core.records.reviews import (
    CONFIDENCE_STEPS,
    REVIEW_NOTE_MAX,
    Review,
    ReviewInput,
    ReviewVerdict,
    ScoredRun,
)
from core.records.slices import SliceChange, SliceScorer, SliceSummary
from core.records.themes import Theme, ThemeKind, ThemeReport

__all__ = [
    "CONFIDENCE_STEPS",
    "REVIEW_NOTE_MAX",
    "ColumnMapping",
    "CostEstimate",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetItem",
    "DeletionImpact",
    "ExperimentConfig",
    "ExperimentDetail",
    "ExperimentInfo",
    "ExperimentProgress",
    "ExperimentStatus",
    "ExperimentSummary",
    "FailureCounts",
    "ImportProblem",
    "ImportReport",
    "ItemRow",
    "ItemSort",
    "RateLimit",
    "ResultPage",
    "ResultQuery",
    "Review",
    "ReviewInput",
    "ReviewVerdict",
    "RunCounts",
    "ScoreHistogram",
    "ScoreSummary",
    "ScoredRun",
    "ScorerCatalogEntry",
    "ScorerOptionInfo",
    "ScorerOutcome",
    "ScorerSpec",
    "ScorerStepInfo",
    "ScorerUsage",
    "SliceChange",
    "SliceScorer",
    "SliceSummary",
    "Theme",
    "ThemeKind",
    "ThemeReport",
]
