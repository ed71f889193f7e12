"""Review queue: an experiment's items, those most worth a person's look first (scorers that
disagree, scores near the decision threshold, low judge confidence; items nobody reviewed
before the others), one at a time, with the reason for its place, the item, each scorer's
score and reason, and the review form of each score (pages/ui/review.py).

Previous / Next are the page's first buttons (Streamlit has no key bindings: Tab reaches them
first) and the position is kept in the URL (`?pos=`, from 1), so a link reopens the same item.
The order is computed once per experiment and session (core/reporting/review_queue.py); saving
a review does not reshuffle the walk, "Recompute the order" does.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`."""

from __future__ import annotations

import streamlit as st

from core.records import ExperimentInfo
from core.service.views import QueueEntry, item_outcomes, scored_label
from pages.ui import fmt, nav, review
from pages.ui.services import service
from pages.ui.text import md_short, md_text, show_item_texts, show_text
from pages.ui.widgets import pick_experiment

KEY = "review"
POS = "pos"  # query parameter: the position in the queue, from 1
_SIGNAL_WORDS = {
    "disagreement": "disagreement",
    "near_threshold": "near threshold",
    "low_confidence": "low confidence",
}


def queue(info: ExperimentInfo, *, fresh: bool = False) -> list[QueueEntry]:
    """The experiment's queue, computed once per session (again when `fresh`, or when the
    experiment's results changed)."""
    key = f"{KEY}.queue.{info.id}"
    version = (info.status, info.counts.done, info.finished_at)
    kept = st.session_state.get(key)
    if fresh or kept is None or kept[0] != version:
        with st.spinner("Ordering the items…"):
            kept = (version, service().review_queue(info.id))
        st.session_state[key] = kept
    entries: list[QueueEntry] = kept[1]
    return entries


def position(count: int) -> int:
    """The position from the URL's `pos` (from 1), clamped to the queue, written back."""
    try:
        wanted = int(st.query_params.get(POS, "1"))
    except ValueError:
        wanted = 1
    chosen = min(max(wanted, 1), max(count, 1))
    st.query_params[POS] = str(chosen)
    return chosen


def _go(to: int) -> None:
    st.query_params[POS] = str(to)


def render_navigation(where: st.delta_generator.DeltaGenerator, pos: int, count: int) -> None:
    """Previous / Next (the page's first buttons) and where the walk is."""
    back, ahead, place = where.columns([1, 1, 4], vertical_alignment="center")
    back.button(
        "← Previous", key=f"{KEY}.previous", disabled=pos <= 1, on_click=_go, args=(pos - 1,),
        width="stretch",
    )  # fmt: skip
    ahead.button(
        "Next →", key=f"{KEY}.next", disabled=pos >= count, on_click=_go, args=(pos + 1,),
        type="primary", width="stretch",
    )  # fmt: skip
    place.markdown(f"Item **{pos:,}** of **{count:,}** in the review queue")


def render_entry(info: ExperimentInfo, entry: QueueEntry) -> None:
    """Why this item is here, the item, and each scorer's score with its review form."""
    signals = " · ".join(
        f"{_SIGNAL_WORDS[name]} {value:.2f}" for name, value in entry.signals.items()
    )
    st.markdown(f"**Why here:** {md_text(entry.reason)}")
    if signals:
        st.caption(f"Signals (0 to 1): {md_text(signals)}")
    detail = service().item_detail(info.id, entry.item_id)
    item = detail.items[0]
    st.markdown(f"**Item {md_short(entry.item_id)}**")
    show_item_texts(item)
    outcomes = item_outcomes(detail, entry.item_id)
    if not outcomes:
        st.info("No scorer result for this item.")
        return
    review.reviewer_field()
    labels = [md_short(scored_label(info, scorer_id)) for scorer_id in outcomes]
    for tab, outcome in zip(st.tabs(labels), outcomes.values(), strict=True):
        with tab:
            if outcome.status == "failed":
                st.error(f"Failed at {md_text(outcome.failed_step)}: {md_text(outcome.error)}")
                continue
            st.markdown(f"**Score** {fmt.score(outcome.score)}")
            show_text("Reason", outcome.reason)
            review.render_review(info, entry.item_id, outcome.scorer_id)
    st.page_link(
        nav.EXPERIMENT,
        label="Open in the experiment's drill-down",
        icon=":material/search:",
        query_params={nav.EXPERIMENT_PARAM: info.id, "item": entry.item_id},
    )


def main() -> None:
    """The page."""
    st.title("Review queue")
    top = st.container()  # drawn first: Previous / Next are the first buttons of the page
    info = pick_experiment(service(), f"{KEY}.picked")
    if info is None:
        return
    if info.total_items == 0:
        st.info("This experiment has no item.")
        return
    fresh = st.button(
        "Recompute the order",
        key=f"{KEY}.refresh",
        help="The order is kept while you review; recompute it to put the items you reviewed last.",
    )
    entries = queue(info, fresh=fresh)
    pos = position(len(entries))
    render_navigation(top, pos, len(entries))
    render_entry(info, entries[pos - 1])


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
