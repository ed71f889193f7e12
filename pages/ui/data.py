"""Loading an experiment's results once per change, shared by the result pages.

Results are cached as resources (no copy per rerun: a 10,000-item experiment is read from the
database and shaped once) and keyed by the experiment's progress, so a running experiment
refreshes as it goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.experiment_records import ExperimentDetail, ExperimentInfo
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
def _load(experiment_id: str, version: tuple[object, ...]) -> ExperimentView:
    return ExperimentView(service().load_experiment(experiment_id))


def experiment_view(info: ExperimentInfo) -> ExperimentView:
    """The experiment's results, shaped for the pages."""
    # The end time too: a re-run of failed runs can end with the same counts, other failures.
    version = (info.status, info.counts.done, info.counts.failed, info.finished_at)
    return _load(info.id, version)
