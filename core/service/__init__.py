"""The door of the dashboard and the CLI into the core: `Service` (datasets, the scorer
catalog, experiments in background workers), the process-wide `get_service()`, and the errors
and records the pages handle. Pages import from here and from the record modules only
(docs/architecture.md).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core._lazy import lazy_import

if TYPE_CHECKING:
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
    from core.scorers import PrebuiltScorer
    from core.service import views
    from core.service.facade import SAMPLES_DIR, Service
    from core.service.listing import RESUMABLE
    from core.storage import NotFoundError, StorageError
    from core.storage.mastra_store import MastraStoreError
    from core.visible_text import without_bidi_controls

_HOMES: dict[str, str] = {
    "ALLOWED_JUDGE_SETTINGS": "core.judge.credentials",
    "DEFAULT_JUDGE_SETTINGS": "core.judge.credentials",
    "DatasetImportError": "core.datasets.library",
    "ExperimentConfigError": "core.errors",
    "ExperimentFileError": "core.exchange.experiment_file",
    "InvalidInputError": "core.errors",
    "JUDGE_API_KEY_ENV": "core.judge.credentials",
    "JudgeKey": "core.judge.credentials",
    "MastraStoreError": "core.storage.mastra_store",
    "NotFoundError": "core.storage",
    "ParsedUpload": "core.datasets.upload",
    "PrebuiltScorer": "core.scorers",
    "RESUMABLE": "core.service.listing",
    "ReviewError": "core.errors",
    "SAMPLES_DIR": "core.service.facade",
    "ScorerCatalogEntry": "core.records",
    "Service": "core.service.facade",
    "StorageError": "core.storage",
    "TRUSTED_API_BASES_ENV": "core.judge.credentials",
    "mask_secrets": "core.judge.secrets",
    "without_bidi_controls": "core.visible_text",
}
"""Each public name -> the module it comes from, imported when the name is first asked for
(PEP 562): a `scorelab` command that only lists (core/service/listing.py) starts without the
service, the scorers or the database libraries (bench/cli_startup.py)."""

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
    "without_bidi_controls",
]


def scorer_catalog(
    catalog: Mapping[str, PrebuiltScorer] | None = None,
) -> list[ScorerCatalogEntry]:
    """The catalog (PREBUILT by default) as records, without opening any database."""
    from core.scorers import PREBUILT
    from core.scorers.catalog import ScorerCatalog

    return list(ScorerCatalog(PREBUILT if catalog is None else catalog).records)


_service: Service | None = None
_service_lock = threading.Lock()


def get_service() -> Service:
    """The process-wide service (database from SCORELAB_DATABASE_URL or the default file)."""
    from core.service.facade import Service

    global _service
    with _service_lock:
        if _service is None:
            _service = Service()
        return _service


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept in this module)."""
    return lazy_import(__name__, _HOMES, globals(), name)
