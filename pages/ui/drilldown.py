"""The experiment page's drill-down (pages/experiment.py, beside the grid): one item's input,
output and ground truth, previous/next buttons (keys K and J), the verdict on the whole item,
and a tab per scorer with its score, reason, steps, judge executions and the review of its
score (pages/ui/review.py), only the open tab drawn. Only that item's results and reviews are
read (one service call, before anything is drawn).

`drilldown_view` is a fragment of its own (key `FRAGMENT`), nested in the results view's: a row
click reruns only it (from the grid's selection callback, `st.rerun(FRAGMENT)`), as do the
previous/next buttons within the grid's page; the grid is not redrawn (docs/dashboard.md). At
the last row of the grid's page "next" turns the grid to the next page and opens its first
item, at the first row "previous" opens the previous page's last item: that reruns the results
view's fragment (its key is given), which reads the new page. Text from the dataset, the
scorers and the judge goes through pages/ui/text.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import streamlit as st

from core.records import ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.service import NotFoundError
from core.service.views import item_outcomes, scored_label, step_views
from pages.ui import fmt, review
from pages.ui.grid_filters import turn_to
from pages.ui.services import service
from pages.ui.text import md_short, md_text, show_item_texts, show_text, texts_block

KEY = "experiment"
ITEM_PARAM = "item"
"""The URL parameter of the item open (the grid's, pages/ui/grid.py)."""
FRAGMENT = f"{KEY}.drilldown"
"""The drill-down fragment's key (`st.rerun(FRAGMENT)` from a callback reruns only it)."""
OPEN_KEY = f"{KEY}.open"
"""Session key: which item of the grid's page to open when it is next read ("first" or
"last"), set when previous/next turns the page."""
Opening = Literal["first", "last"]
SCORE_REVIEW_KEY = f"{KEY}.score_review"
"""The key of the open scorer's review expander (one for every scorer: one tab is drawn)."""


@dataclass(frozen=True)
class GridPage:
    """What the drill-down knows of the grid beside it: the page's item ids, in grid order, and
    the pages before and after it (None at an end), with the key of the fragment that reads
    a page (the results view's)."""

    ids: tuple[str, ...] = ()
    """The page's item ids, as the grid shows them."""
    previous_page: int | None = None
    """The page before this one, None on the first."""
    next_page: int | None = None
    """The page after this one, None on the last."""
    results_fragment: str | None = None
    """The key of the fragment drawing the grid, rerun to turn its page."""


def opening_item(ids: Sequence[str]) -> str | None:
    """The item to open on a page just turned to by previous/next (its first or last), taken
    from the session once; None when no turn is pending (or the page is empty)."""
    opening: Opening | None = st.session_state.pop(OPEN_KEY, None)
    if opening is None or not ids:
        return None
    return ids[0] if opening == "first" else ids[-1]


def render_outcome(outcome: ScorerOutcome) -> None:
    """One scorer's run on one item: score and reason (or the failure), then each step."""
    if outcome.status == "failed":
        st.error(f"Failed at {md_text(outcome.failed_step)}: {md_text(outcome.error)}")
        st.caption(
            f"Completed steps: {md_text(', '.join(outcome.completed_steps) or 'none')} · "
            f"recovered score {fmt.score(outcome.recovered_score)} (kept in memory only)"
        )
    else:
        texts_block([("Reason", outcome.reason)], heading=f"Score {fmt.score(outcome.score)}")
    for number, step in enumerate(step_views(outcome)):
        label = f"{'❌ ' if step.failed else ''}{md_short(step.name)} · {md_text(step.kind)}"
        # Drawn only when open (a click on it reruns this fragment), and kept open or shut
        # for the next item: each step's highlighted JSON made a share of a row click's
        # drawing while nobody looked at it.
        expander = st.expander(
            label,
            expanded=step.failed,
            key=f"{KEY}.step.{outcome.scorer_id}.{number}.{step.failed}",
            on_change="rerun",
        )
        if expander.open is False:
            continue
        with expander:
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


def _turn_page(page: int, opening: Opening, results_fragment: str | None) -> None:
    """Previous/next past the grid's page: the grid turned to `page` (pages/ui/grid.py), its
    first or last item to open once read, and the results view rerun."""
    turn_to(page)
    st.session_state[OPEN_KEY] = opening
    if results_fragment is not None:
        st.rerun(results_fragment)  # from a callback: only that fragment reruns


def render_item_steps(
    info: ExperimentInfo, item_id: str | None, grid: GridPage | Sequence[str]
) -> None:
    """Previous / next item buttons (keys K / J) over the grid page's items: a click opens that
    item (the URL's `item`) and reruns only the fragment they are in. At the page's last item
    "next" opens the next page's first, at its first "previous" the previous page's last."""
    page = grid if isinstance(grid, GridPage) else GridPage(ids=tuple(grid))
    before, after = neighbours(item_id, page.ids)
    on_page = item_id in page.ids
    # One horizontal container, not two columns: three elements for the browser, not five.
    buttons = st.container(horizontal=True, wrap=False, gap="small")
    turn_back = on_page and before is None and page.previous_page is not None
    turn_on = on_page and after is None and page.next_page is not None
    buttons.button(
        "Previous item",
        key=f"{KEY}.previous",
        icon=":material/arrow_upward:",
        disabled=before is None and not turn_back,
        on_click=_turn_page if turn_back else _open_item,
        args=(page.previous_page, "last", page.results_fragment) if turn_back else (before,),
        help=f"The last item of page {page.previous_page:,}" if turn_back else None,
        shortcut="K",
        width="stretch",
    )
    buttons.button(
        "Next item",
        key=f"{KEY}.next",
        icon=":material/arrow_downward:",
        disabled=after is None and not turn_on,
        on_click=_turn_page if turn_on else _open_item,
        args=(page.next_page, "first", page.results_fragment) if turn_on else (after,),
        help=f"The first item of page {page.next_page:,}" if turn_on else None,
        shortcut="J",
        width="stretch",
    )


@st.fragment(key=FRAGMENT)
def drilldown_view(info: ExperimentInfo, grid: GridPage) -> None:
    """The drill-down of the URL's `item` as a fragment of its own: a row click (the grid's
    callback) or previous/next within the page reruns only this."""
    render_drilldown(info, st.query_params.get(ITEM_PARAM) or None, grid)


def render_drilldown(
    info: ExperimentInfo, item_id: str | None, grid: GridPage | Sequence[str] = ()
) -> None:
    """One item (the grid's row clicked, kept in the URL as `item`): previous/next buttons over
    the grid's page (`grid`: a GridPage, or the page's item ids), its input, output and ground
    truth, the verdict on the whole item, and a tab per scorer; only that item's results and
    reviews are read, in one read, before anything is drawn."""
    # Read before drawing, so that the run's elements leave together: the read sat between the
    # buttons and the texts. (No change in a click's time could be measured on this machine:
    # the server's part of a click is some 15 ms, docs/dashboard.md.)
    detail = _item_detail(info, item_id) if item_id is not None else None
    st.subheader("Item drill-down")
    if item_id is None:
        st.info("Click a row of the grid to open its item here.")
        return
    render_item_steps(info, item_id, grid)
    if detail is None:
        st.warning(f"No item {md_text(item_id)} in this experiment's dataset.")
        return
    st.caption(f"Item {md_short(item_id, 120)}")
    show_item_texts(detail.items[0], metadata_key=f"{KEY}.metadata")
    review.reviewer_field()
    reviews = detail.reviews  # the item's, every scorer's: read with its results
    review.render_item_review(
        info, item_id, reviews, whole_page=True, open_key=f"{KEY}.item_verdict"
    )
    outcomes = item_outcomes(detail, item_id)
    if not outcomes:
        st.info("No scorer result for this item yet.")
        return
    labels = [md_short(scored_label(info, scorer_id)) for scorer_id in outcomes]
    # Tabs that track which one is open (kept for the experiment, so the next item opens on
    # the same scorer): only the open tab is drawn, a switch reruns this fragment. Drawing
    # every scorer's steps and review form made the browser's share of a row click.
    tabs = st.tabs(labels, key=f"{KEY}.scorer_tab.{info.id}", on_change="rerun")
    for tab, outcome in zip(tabs, outcomes.values(), strict=True):
        if tab.open is False:
            continue
        with tab:
            render_outcome(outcome)
            review.render_review(
                info,
                item_id,
                outcome.scorer_id,
                reviews,
                whole_page=True,
                open_key=SCORE_REVIEW_KEY,
            )


def _item_detail(info: ExperimentInfo, item_id: str) -> ExperimentDetail | None:
    """The item's results, failures and reviews (one service call); None when the
    experiment's dataset has no such item."""
    try:
        return service().item_detail(info.id, item_id)
    except NotFoundError:
        return None
