"""Loading an experiment's results once per change, shared by the result pages.

The experiment, Failures and Judge usage pages read the database's aggregates and a page of the
item table (`experiment_aggregates`, the service's `result_page`): never the whole experiment.
The Compare page reads light sides (`Service.compare_sides`). Everything is cached as a
resource (no copy per rerun) and keyed by the experiment's progress, so a running experiment
refreshes as it goes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from core.records import (
    ExperimentDetail,
    ExperimentInfo,
    ScoreHistogram,
    ScorerUsage,
    ScoreSummary,
)
from core.service.views import (
    REVIEWS_SOURCE,
    LabelAgreement,
    collector_paused,
    label_columns,
)
from pages.ui.services import service

LABEL_SAMPLE = 1_000
"""Items read to find a dataset's label columns."""


@dataclass(frozen=True)
class ExperimentView:
    """A whole experiment, loaded once per change (the Compare page pairs every item)."""

    detail: ExperimentDetail


@contextmanager
def bulk_load() -> Iterator[None]:
    """No cyclic garbage collection while a large experiment is read, and what was read is
    left out of later collections (`gc.freeze`). Python collects every generation each time
    enough new objects survive: reading 2 × 50,000 results ran 9 full collections over the
    growing heap, half of the Compare page's 8 s at 10,000 items × 5 scorers. The records
    read hold no reference cycles: reference counting frees them when the cache drops them.
    (The pause is `collector_paused`, which two sessions' reads at once share.)"""
    try:
        with collector_paused():
            yield
    finally:
        gc.freeze()


@st.cache_resource(max_entries=4, show_spinner="Loading results…")
def _load(experiment_id: str, version: tuple[object, ...]) -> ExperimentView:
    with bulk_load():
        return ExperimentView(service().load_experiment(experiment_id))


Version = tuple[str, int, int, object]
"""What changes when an experiment's results do: status, runs done, failed, end time (a re-run
of failed runs can end with the same counts and other failures)."""


def _version(info: ExperimentInfo) -> Version:
    return (info.status, info.counts.done, info.counts.failed, info.finished_at)


def experiment_view(info: ExperimentInfo) -> ExperimentView:
    """The experiment's results, shaped for the pages."""
    return _load(info.id, _version(info))


# ---- a large experiment: the database's aggregates and pages, never the whole experiment ----


@dataclass(frozen=True)
class Aggregates:
    """What the database summed up of an experiment's stored results."""

    summaries: list[ScoreSummary]
    histograms: list[ScoreHistogram]
    usage: list[ScorerUsage]


@st.cache_resource(max_entries=8, show_spinner=False)
def _aggregates(experiment_id: str, version: Version) -> Aggregates:
    shared = service()
    return Aggregates(
        summaries=shared.score_summaries(experiment_id),
        histograms=shared.score_histograms(experiment_id),
        usage=shared.judge_usage(experiment_id),
    )


def experiment_aggregates(info: ExperimentInfo) -> Aggregates:
    """The experiment's per-scorer summaries, histograms and judge usage (computed by the
    database once per change of the experiment)."""
    return _aggregates(info.id, _version(info))


@st.cache_resource(max_entries=8, show_spinner=False)
def _label_columns(dataset_id: str) -> list[str]:
    return label_columns(service().sample_items(dataset_id, LABEL_SAMPLE))


def sampled_label_columns(info: ExperimentInfo) -> list[str]:
    """The metadata columns holding labels in the dataset's first `LABEL_SAMPLE` items."""
    return _label_columns(info.dataset_id)


@st.cache_resource(max_entries=4, show_spinner="Computing AUC intervals…")
def _agreement(experiment_id: str, version: Version, column: str) -> LabelAgreement:
    with bulk_load():
        return service().label_agreement(experiment_id, column)


def agreement(info: ExperimentInfo, column: str) -> LabelAgreement:
    """Each scorer's agreement with the labels in `column`, over every item (its scores read
    as columns, never the results), computed once per column and change of the experiment;
    `REVIEWS_SOURCE`: with the reviews as labels, once per change of the reviews too."""
    if column == REVIEWS_SOURCE:
        reviews = service().reviews(info.id)
        changed = (len(reviews), max((r.updated_at for r in reviews), default=None))
        return _review_agreement(info.id, _version(info), changed)
    return _agreement(info.id, _version(info), column)


@st.cache_resource(max_entries=4, show_spinner="Computing AUC intervals…")
def _review_agreement(experiment_id: str, version: Version, reviews: object) -> LabelAgreement:
    return service().review_agreement(experiment_id)
