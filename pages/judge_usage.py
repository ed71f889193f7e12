"""Judge usage: tokens by scorer and step (input/output/reasoning/cached), by model, calls and
attempts, durations, and the estimated cost. Totals are sums."""

from __future__ import annotations

import streamlit as st

from core.reporting import (
    calls_and_attempts,
    cost_by_scorer,
    duration_distribution,
    tokens_by_model,
    tokens_by_scorer_step,
)
from pages.ui import fmt
from pages.ui.data import experiment_view
from pages.ui.services import service
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "judge_usage"


def main() -> None:
    st.title("Judge usage")
    shared = service()
    running_experiments(shared)
    info = pick_experiment(shared, f"{KEY}.picked")
    if info is None:
        return
    view = experiment_view(info)
    if view.usage.empty:
        st.info("This experiment made no judge call (its scorers are code-only).")
        return
    totals = view.usage_totals
    first, second = st.columns(4), st.columns(4)
    first[0].metric("Judge executions", f"{int(totals.get('executions', 0)):,}")
    first[1].metric("Failed executions", f"{int(totals.get('failed', 0)):,}")
    first[2].metric("Model calls", f"{int(totals.get('model_calls', 0)):,}")
    first[3].metric("Attempts", f"{int(totals.get('attempts', 0)):,}")
    second[0].metric("Input tokens", fmt.tokens(totals.get("input_tokens")))
    second[1].metric("Output tokens", fmt.tokens(totals.get("output_tokens")))
    second[2].metric("Reasoning tokens", fmt.tokens(totals.get("reasoning_tokens")))
    second[3].metric(
        "Estimated cost",
        fmt.money(totals.get("est_cost_usd")),
        help="An estimate from litellm's price table, not a bill.",
    )
    st.caption("All totals are sums over every judge execution, failed ones included.")
    left, right = st.columns(2)
    left.plotly_chart(tokens_by_scorer_step(view.usage), width="stretch")
    right.plotly_chart(tokens_by_model(view.usage), width="stretch")
    left.plotly_chart(calls_and_attempts(view.usage), width="stretch")
    right.plotly_chart(duration_distribution(view.usage), width="stretch")
    st.plotly_chart(cost_by_scorer(view.usage), width="stretch")
    with st.expander("Every judge execution"):
        st.dataframe(view.usage, hide_index=True)


main()
