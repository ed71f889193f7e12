"""`DeskContext`: the state the Service's desks share (store, catalog, jobs, samples)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.experiments.jobs import Jobs
from core.scorers.catalog import ScorerCatalog
from core.storage import Store

__all__ = ["SAMPLES_DIR", "DeskContext"]

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "data" / "samples"


@dataclass
class DeskContext:
    """The state of one `Service`, shared by its desks (never copied: a desk reads it when it
    acts, so a catalog swapped on the Service is the one every desk builds from)."""

    store: Store
    """The database."""
    catalog: ScorerCatalog
    """The scorers an experiment can use."""
    jobs: Jobs
    """The experiments this process runs or holds the failures of."""
    samples_dir: Path
    """The folder of the sample datasets."""
