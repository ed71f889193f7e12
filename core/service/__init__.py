"""The door of the dashboard and the CLI into the core: `Service` (datasets, the scorer
catalog, experiments in background workers), the process-wide `get_service()`, and the errors
and records the pages handle. Pages import from here and from the record modules only
(docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from core.datasets.library import DatasetImportError
from core.datasets.upload import ParsedUpload
from core.errors import ExperimentConfigError, InvalidInputError, ReviewError
from core.exchange.experiment_file import ExperimentFileError
from core.judge.credentials import (
    ALLOWED_JUDGE_SETTINGS,
    DEFAULT_JUDGE_SETTINGS,
    JUDGE_API_KEY_ENV,
    TRUSTED_API_BASES_ENV,
    JudgeKey,
)
from core.judge.secrets import mask_secrets
from core.records import ScorerCatalogEntry
from core.scorers import PREBUILT, PrebuiltScorer
from core.scorers.catalog import ScorerCatalog
from core.service import views
from core.service.facade import RESUMABLE, SAMPLES_DIR, Service
from core.storage import NotFoundError, StorageError
from core.storage.mastra_store import MastraStoreError

__all__ = [
    "ALLOWED_JUDGE_SETTINGS",
    "DEFAULT_JUDGE_SETTINGS",
    "JUDGE_API_KEY_ENV",
    "RESUMABLE",
    "SAMPLES_DIR",
    "TRUSTED_API_BASES_ENV",
    "DatasetImportError",
    "ExperimentConfigError",
    "ExperimentFileError",
    "InvalidInputError",
    "JudgeKey",
    "MastraStoreError",
    "NotFoundError",
    "ParsedUpload",
    "ReviewError",
    "Service",
    "StorageError",
    "get_service",
    "mask_secrets",
    "scorer_catalog",
    "views",
]


def scorer_catalog(
    catalog: Mapping[str, PrebuiltScorer] | None = None,
) -> list[ScorerCatalogEntry]:
    """The catalog (PREBUILT by default) as records, without opening any database."""
    return list(ScorerCatalog(PREBUILT if catalog is None else catalog).records)


_service: Service | None = None
_service_lock = threading.Lock()


def get_service() -> Service:
    """The process-wide service (database from SCORELAB_DATABASE_URL or the default file)."""
    global _service
    with _service_lock:
        if _service is None:
            _service = Service()
        return _service
