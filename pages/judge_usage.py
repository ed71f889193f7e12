"""Judge usage: tokens by scorer and step (input/output/reasoning/cached), by model, calls and
attempts, answers from the judge cache (apart), durations, and the estimated cost. Totals are
sums.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.judge_usage`), it draws nothing. The totals per scorer are summed by the
database (never by loading the experiment); only a sample of executions is read one by one.
The charts get entity-escaped scorer, step and model names (pages/ui/text.py `chart_text`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.records import ExperimentInfo
from core.service.views import (
    ALL_STEPS,
    calls_and_attempts,
    cost_by_scorer,
    duration_distribution,
    experiment_cost,
    judge_usage_frame,
    tokens_by_model,
    tokens_by_scorer_step,
    usage_summary_frame,
    usage_summary_totals,
)
from pages.ui import fmt
from pages.ui.data import experiment_aggregates
from pages.ui.services import service
from pages.ui.text import chart_text, md_text, plain_dataframe
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "judge_usage"
SAMPLE = 500
"""Stored results whose judge executions are listed one by one (and their durations drawn)."""


def render_totals(info: ExperimentInfo, totals: dict[str, float]) -> None:
    """Nine cards: runs with judge calls, failed runs, calls, answers from the judge cache,
    attempts, tokens by kind (over every finished run: the experiment's counts), estimated
    cost."""
    counts, usage = info.counts, info.counts.usage
    first, second = st.columns(5), st.columns(4)
    first[0].metric("Scorer runs calling the judge", f"{int(totals.get('runs', 0)):,}")
    first[1].metric("Failed runs", f"{counts.failed:,}")
    first[2].metric("Model calls", f"{counts.judge_calls:,}")
    first[3].metric(
        "From the judge cache",
        f"{counts.cached_calls:,}",
        help="Judge executions answered from the judge cache: no request sent, nothing spent; "
        "not counted in model calls or attempts.",
    )
    first[4].metric("Attempts", f"{counts.judge_attempts:,}")
    second[0].metric("Input tokens", fmt.tokens(usage.input_tokens or 0))
    second[1].metric("Output tokens", fmt.tokens(usage.output_tokens or 0))
    second[2].metric("Reasoning tokens", fmt.tokens(usage.reasoning_tokens or 0))
    second[3].metric(
        "Estimated cost",
        fmt.money(experiment_cost(info)),
        help="An estimate from litellm's price table, not a bill: the experiment's judge "
        "tokens priced on its judge model (the same figure as the experiment page's).",
    )
    st.caption(
        "All totals are sums over every finished run, failed ones included; the stored runs "
        "are summed by the database, per scorer; answers from the judge cache are counted "
        "apart and cost nothing."
    )


def _escaped(usage: pd.DataFrame) -> pd.DataFrame:
    """Scorer, step and model names entity-escaped for the plotly charts (plotly reads a few
    tags in labels; a scorer id can come from an imported file)."""
    return usage.assign(
        scorer_id=usage["scorer_id"].map(chart_text),
        step=usage["step"].map(chart_text),
        model=usage["model"].map(lambda model: None if pd.isna(model) else chart_text(model)),
    )


def render_charts(summary: pd.DataFrame, sample: pd.DataFrame) -> None:
    """Tokens by scorer and by model, calls and attempts, cost (summed by the database over
    every stored run, per prompt step, or `all steps` for runs stored without it; failed runs
    held in memory step by step), and the durations of a sample of executions."""
    note = unpriced_note(summary) if summary["est_cost_usd"].isna().all() else None
    summary, sample = _escaped(summary), _escaped(sample)
    left, right = st.columns(2)
    left.plotly_chart(tokens_by_scorer_step(summary), width="stretch")
    right.plotly_chart(tokens_by_model(summary), width="stretch")
    left.plotly_chart(calls_and_attempts(summary), width="stretch")
    right.plotly_chart(duration_distribution(sample), width="stretch")
    if note is not None:
        # An empty chart framing a note said less than one sentence naming the model.
        st.info(note, icon=":material/money_off:")
    else:
        st.plotly_chart(cost_by_scorer(summary), width="stretch")


def unpriced_note(summary: pd.DataFrame) -> str:
    """What the cost chart would have shown when no execution has a known price."""
    models = sorted({str(model) for model in summary["model"].dropna()}) or ["the judge model"]
    named = ", ".join(md_text(model) for model in models)
    return (
        f"No price known for model {named}: litellm's price table does not list it, so "
        "the judge cost cannot be estimated."
    )


def main() -> None:
    """The page."""
    st.title("Judge usage")
    shared = service()
    running_experiments(shared)
    info = pick_experiment(shared, f"{KEY}.picked")
    if info is None:
        return
    failures = shared.failures(info.id)
    usages = experiment_aggregates(info).usage
    summary = usage_summary_frame(usages, failures)
    counts = info.counts
    if summary.empty and not (counts.judge_calls or counts.judge_attempts or counts.cached_calls):
        st.info("This experiment made no judge call (its scorers are code-only).")
        return
    render_totals(info, usage_summary_totals(usages, failures))
    sample = judge_usage_frame([*shared.sample_results(info.id, SAMPLE), *failures[:SAMPLE]])
    render_charts(summary, sample)
    st.caption(
        f"The stored runs are summed per prompt step (those stored before per-step usage was "
        f"kept as “{ALL_STEPS}”); the durations are those of the judge executions of the "
        f"first {SAMPLE:,} stored runs and failed runs."
    )
    with st.expander(f"Judge executions of the first {SAMPLE:,} stored runs and failed runs"):
        plain_dataframe(sample, hide_index=True)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
