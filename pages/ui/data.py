"""Loading an experiment's results once per change, shared by the result pages.

The experiment, Failures and Judge usage pages read the database's aggregates and a page of the
item table (`experiment_aggregates`, the service's `result_page`): never the whole experiment.
The Compare page still loads whole experiments (`experiment_view`). Everything is cached as a
resource (no copy per rerun) and keyed by the experiment's progress, so a running experiment
refreshes as it goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.experiment_records import (
    ExperimentDetail,
    ExperimentInfo,
    ScoreHistogram,
    ScorerUsage,
    ScoreSummary,
)
from core.service.views import (
    LabelAgreement,
    item_frame,
    judge_usage_frame,
    label_agreement,
    label_columns,
    score_histograms,
    usage_totals,
)
from pages.ui.services import service
from pages.ui.text import chart_text

LABEL_SAMPLE = 1_000
"""Items read to find a dataset's label columns."""


@dataclass
class ExperimentView:
    """An experiment's detail and the tables the pages show, each built once."""

    detail: ExperimentDetail
    _agreements: dict[str, LabelAgreement] = field(default_factory=dict, repr=False)

    @cached_property
    def items(self) -> pd.DataFrame:
        """One row per item, one score column per scorer."""
        return item_frame(self.detail)

    @cached_property
    def usage(self) -> pd.DataFrame:
        """One row per judge execution, failed runs included."""
        return judge_usage_frame([*self.detail.results, *self.detail.failures])

    @cached_property
    def chart_usage(self) -> pd.DataFrame:
        """`usage` with its scorer, step and model names entity-escaped, for the plotly charts
        (plotly reads a few tags in labels; a scorer id can come from an imported file)."""
        usage = self.usage
        return usage.assign(
            scorer_id=usage["scorer_id"].map(chart_text),
            step=usage["step"].map(chart_text),
            model=usage["model"].map(lambda model: None if pd.isna(model) else chart_text(model)),
        )

    def score_chart(self) -> go.Figure:
        """The score histograms, titled with entity-escaped scorer ids."""
        scorer_ids = self.detail.info.scorer_ids
        labels = {scorer_id: chart_text(scorer_id) for scorer_id in scorer_ids}
        return score_histograms(self.items.rename(columns=labels), list(labels.values()))

    @cached_property
    def usage_totals(self) -> dict[str, float]:
        """Sums over `usage`."""
        return usage_totals(self.usage)

    @cached_property
    def label_columns(self) -> list[str]:
        """The metadata columns whose every non-empty value is a label."""
        return label_columns(self.detail.items)

    def agreement(self, column: str) -> LabelAgreement:
        """Each scorer's agreement with the labels in `column`, computed once per column (the
        bootstrap takes a moment on large experiments)."""
        if column not in self._agreements:
            self._agreements[column] = label_agreement(self.detail, column)
        return self._agreements[column]


@st.cache_resource(max_entries=4, show_spinner="Loading results…")
def _load(experiment_id: str, version: tuple[str, int, int]) -> ExperimentView:
    return ExperimentView(service().load_experiment(experiment_id))


def experiment_view(info: ExperimentInfo) -> ExperimentView:
    """The experiment's results, shaped for the pages."""
    return _load(info.id, (info.status, info.counts.done, info.counts.failed))


# ---- a large experiment: the database's aggregates and pages, never the whole experiment ----


@dataclass(frozen=True)
class Aggregates:
    """What the database summed up of an experiment's stored results."""

    summaries: list[ScoreSummary]
    histograms: list[ScoreHistogram]
    usage: list[ScorerUsage]


@st.cache_resource(max_entries=8, show_spinner=False)
def _aggregates(experiment_id: str, version: tuple[str, int, int]) -> Aggregates:
    shared = service()
    return Aggregates(
        summaries=shared.score_summaries(experiment_id),
        histograms=shared.score_histograms(experiment_id),
        usage=shared.judge_usage(experiment_id),
    )


def experiment_aggregates(info: ExperimentInfo) -> Aggregates:
    """The experiment's per-scorer summaries, histograms and judge usage (computed by the
    database once per change of the experiment)."""
    return _aggregates(info.id, (info.status, info.counts.done, info.counts.failed))


@st.cache_resource(max_entries=8, show_spinner=False)
def _label_columns(dataset_id: str) -> list[str]:
    return label_columns(service().sample_items(dataset_id, LABEL_SAMPLE))


def sampled_label_columns(info: ExperimentInfo) -> list[str]:
    """The metadata columns holding labels in the dataset's first `LABEL_SAMPLE` items."""
    return _label_columns(info.dataset_id)


@st.cache_resource(max_entries=4, show_spinner="Computing AUC intervals…")
def _agreement(experiment_id: str, version: tuple[str, int, int], column: str) -> LabelAgreement:
    return label_agreement(service().scores_detail(experiment_id), column)


def agreement(info: ExperimentInfo, column: str) -> LabelAgreement:
    """Each scorer's agreement with the labels in `column`, over every item (its scores read
    without the results' JSON), computed once per column and change of the experiment."""
    return _agreement(info.id, (info.status, info.counts.done, info.counts.failed), column)
