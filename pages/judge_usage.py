"""Judge usage: tokens by scorer and step (input/output/reasoning/cached), by model, calls and
attempts, answers from the judge cache (apart), durations, and the estimated cost. Totals are
sums.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.judge_usage`), it draws nothing. The charts get entity-escaped scorer, step and
model names (pages/ui/text.py `chart_text`)."""

from __future__ import annotations

import streamlit as st

from core.service.views import (
    calls_and_attempts,
    cost_by_scorer,
    duration_distribution,
    tokens_by_model,
    tokens_by_scorer_step,
)
from pages.ui import fmt
from pages.ui.data import ExperimentView, experiment_view
from pages.ui.services import service
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "judge_usage"


def render_totals(totals: dict[str, float]) -> None:
    """Nine cards: executions, failures, calls, answers from the judge cache, attempts, tokens
    by kind, estimated cost."""
    first, second = st.columns(5), st.columns(4)
    first[0].metric("Judge executions", f"{int(totals.get('executions', 0)):,}")
    first[1].metric("Failed executions", f"{int(totals.get('failed', 0)):,}")
    first[2].metric("Model calls", f"{int(totals.get('model_calls', 0)):,}")
    first[3].metric(
        "From the judge cache",
        f"{int(totals.get('cached', 0)):,}",
        help="Executions answered from the judge cache: no request sent, nothing spent; "
        "not counted in model calls or attempts.",
    )
    first[4].metric("Attempts", f"{int(totals.get('attempts', 0)):,}")
    second[0].metric("Input tokens", fmt.tokens(totals.get("input_tokens")))
    second[1].metric("Output tokens", fmt.tokens(totals.get("output_tokens")))
    second[2].metric("Reasoning tokens", fmt.tokens(totals.get("reasoning_tokens")))
    second[3].metric(
        "Estimated cost",
        fmt.money(totals.get("est_cost_usd")),
        help="An estimate from litellm's price table, not a bill.",
    )
    st.caption(
        "All totals are sums over every judge execution, failed ones included; answers from "
        "the judge cache are counted apart and cost nothing."
    )


def render_charts(view: ExperimentView) -> None:
    """Tokens by scorer × step and by model, calls and attempts, durations, cost."""
    usage = view.chart_usage
    left, right = st.columns(2)
    left.plotly_chart(tokens_by_scorer_step(usage), width="stretch")
    right.plotly_chart(tokens_by_model(usage), width="stretch")
    left.plotly_chart(calls_and_attempts(usage), width="stretch")
    right.plotly_chart(duration_distribution(usage), width="stretch")
    st.plotly_chart(cost_by_scorer(usage), width="stretch")


def main() -> None:
    """The page."""
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
    render_totals(view.usage_totals)
    render_charts(view)
    with st.expander("Every judge execution"):
        st.dataframe(view.usage, hide_index=True)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
