"""The experiment page's drill-down (pages/experiment.py, beside the grid): one item's input,
output and ground truth, previous/next buttons over the grid page's items (keys K and J), the
verdict on the whole item, and a tab per scorer with its score, reason, steps, judge executions
and the review of its score (pages/ui/review.py). Only that item's results are read. Text from
the dataset, the scorers and the judge goes through pages/ui/text.py."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.records import ExperimentInfo, ScorerOutcome
from core.service import NotFoundError
from core.service.views import item_outcomes, scored_label, step_views
from pages.ui import fmt, review
from pages.ui.services import service
from pages.ui.text import md_short, md_text, show_item_texts, show_text

KEY = "experiment"
ITEM_PARAM = "item"
"""The URL parameter of the item open (the grid's, pages/ui/grid.py)."""


def render_outcome(outcome: ScorerOutcome) -> None:
    """One scorer's run on one item: score and reason (or the failure), then each step."""
    if outcome.status == "failed":
        st.error(f"Failed at {md_text(outcome.failed_step)}: {md_text(outcome.error)}")
        st.caption(
            f"Completed steps: {md_text(', '.join(outcome.completed_steps) or 'none')} · "
            f"recovered score {fmt.score(outcome.recovered_score)} (kept in memory only)"
        )
    else:
        st.markdown(f"**Score** {fmt.score(outcome.score)}")
        show_text("Reason", outcome.reason)
    for step in step_views(outcome):
        label = f"{'❌ ' if step.failed else ''}{md_short(step.name)} · {md_text(step.kind)}"
        with st.expander(label, expanded=step.failed):
            if step.result is not None:
                show_text("Result", step.result, language="json")
            if step.prompt:
                show_text("Prompt", step.prompt)
            for execution in step.executions:
                render_execution(execution)


def render_execution(execution: dict) -> None:
    """One judge execution: who answered, what it cost, and its error or raw output."""
    usage = execution.get("usage") or {}
    st.markdown(
        f"Judge execution · **{md_text(execution.get('status'))}** · model "
        f"{md_text(execution.get('judgeModelId'))} "
        f"({md_text(execution.get('judgeProvider') or '?')}) · "
        f"attempts {md_text(execution.get('attemptCount'))} · "
        f"model calls {md_text(execution.get('modelCallCount'))} · "
        f"{md_text(execution.get('durationMs'))} ms · "
        f"tokens in {md_text(usage.get('inputTokens', '—'))} / "
        f"out {md_text(usage.get('outputTokens', '—'))} / "
        f"reasoning {md_text(usage.get('reasoningTokens', '—'))} / "
        f"cached {md_text(usage.get('cachedInputTokens', '—'))}"
    )
    error = execution.get("error")
    if error:
        st.error(f"{md_text(error.get('name'))}: {md_text(error.get('message'))}")
    if execution.get("rawOutput"):
        show_text("Raw output", execution["rawOutput"])


def neighbours(item_id: str | None, ids: Sequence[str]) -> tuple[str | None, str | None]:
    """The items before and after `item_id` among the grid page's `ids` (None at an end, or
    when the item is not on the page)."""
    if item_id not in ids:
        return None, None
    at = list(ids).index(item_id)
    return (ids[at - 1] if at > 0 else None), (ids[at + 1] if at + 1 < len(ids) else None)


def _open_item(item_id: str) -> None:
    st.query_params[ITEM_PARAM] = item_id


def render_item_steps(info: ExperimentInfo, item_id: str | None, ids: Sequence[str]) -> None:
    """Previous / next item buttons (keys K / J) over the grid page's items: a click opens that
    item (the URL's `item`) and reruns only the fragment they are in."""
    before, after = neighbours(item_id, ids)
    left, right = st.columns(2)
    left.button(
        "Previous item",
        key=f"{KEY}.previous",
        icon=":material/arrow_upward:",
        disabled=before is None,
        on_click=_open_item,
        args=(before,),
        shortcut="K",
        width="stretch",
    )
    right.button(
        "Next item",
        key=f"{KEY}.next",
        icon=":material/arrow_downward:",
        disabled=after is None,
        on_click=_open_item,
        args=(after,),
        shortcut="J",
        width="stretch",
    )


def render_drilldown(info: ExperimentInfo, item_id: str | None, ids: Sequence[str] = ()) -> None:
    """One item (the grid's row clicked, kept in the URL as `item`): previous/next buttons over
    the grid page's `ids`, its input, output and ground truth, the verdict on the whole item,
    and a tab per scorer; only that item's results are read."""
    st.subheader("Item drill-down")
    if item_id is None:
        st.info("Click a row of the grid to open its item here.")
        return
    render_item_steps(info, item_id, ids)
    try:
        detail = service().item_detail(info.id, item_id)
    except NotFoundError:
        st.warning(f"No item {md_text(item_id)} in this experiment's dataset.")
        return
    st.caption(f"Item {md_short(item_id, 120)}")
    item = detail.items[0]
    show_item_texts(item)
    outcomes = item_outcomes(detail, item_id)
    review.reviewer_field()
    review.render_item_review(info, item_id)
    if not outcomes:
        st.info("No scorer result for this item yet.")
        return
    labels = [md_short(scored_label(info, scorer_id)) for scorer_id in outcomes]
    for tab, outcome in zip(st.tabs(labels), outcomes.values(), strict=True):
        with tab:
            render_outcome(outcome)
            review.render_review(info, item_id, outcome.scorer_id)
