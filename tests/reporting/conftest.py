"""Fixtures: the hand-built experiment of `_records`."""

from __future__ import annotations

import pytest

from core.records import ExperimentDetail, ScorerOutcome

from ._records import build_detail


@pytest.fixture
def detail() -> ExperimentDetail:
    """The hand-built experiment."""
    return build_detail()


@pytest.fixture
def outcomes(detail: ExperimentDetail) -> list[ScorerOutcome]:
    """Its successes then its failures."""
    return [*detail.results, *detail.failures]
