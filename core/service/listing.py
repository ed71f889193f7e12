"""The experiments as `scorelab experiments` lists them, and what a refused `scorelab resume`
needs of one, without starting the `Service` when the database can be read directly
(`core.storage.listing`: no SQLAlchemy, no scorers, no engine); else from the `Service`, the
same figures (docs/architecture.md, the CLI)."""

from __future__ import annotations

from core.records import ExperimentListing, ExperimentStatus
from core.storage.listing import listed_experiments

__all__ = ["RESUMABLE", "experiment_listing", "listed_experiment", "masked_listing"]

RESUMABLE: tuple[ExperimentStatus, ...] = ("interrupted", "cancelled", "budget_reached")
"""The statuses of an experiment stopped part-way, which `Service.resume_experiment` takes."""


def experiment_listing(database_url: str | None) -> list[ExperimentListing]:
    """Every experiment, newest first (raises StorageError when the database cannot be
    opened, as `Service.list_experiments`)."""
    quick = listed_experiments(database_url)
    if quick is not None:
        return quick
    from core.service.facade import Service

    return [ExperimentListing.of(info) for info in Service(database_url).list_experiments()]


def listed_experiment(database_url: str | None, experiment_id: str) -> ExperimentListing | None:
    """One experiment read directly, when the database can be (None: not answered here, or
    no such experiment; the caller asks the `Service`)."""
    quick = listed_experiments(database_url, experiment_id)
    return quick[0] if quick else None


def masked_listing(text: str) -> str:
    """The listing's text with every secret the process holds masked, as an export's is
    (`core.exchange.exports.masked_export`, without importing the exports)."""
    from core.judge.secrets import secret_masker

    return secret_masker().written().text(text)
