"""The review widget (docs/review.md): on an item, for one scorer, a person marks the score
right or wrong, may give the score they would have given and a note; their review is saved
(updated when saved again) and every review of that score is listed with who and when.

Who reviews: the dashboard login's user (its e-mail) when there is one, else the name typed in
the "Your name" field (kept for the session), else "anonymous"."""

from __future__ import annotations

import streamlit as st

from core.records import REVIEW_NOTE_MAX, ExperimentInfo, Review
from core.service import NotFoundError, ReviewError
from core.service.views import ANONYMOUS, REVIEWS_SOURCE, scorer_range
from pages.ui.services import service
from pages.ui.text import md_text
from pages.ui.widgets import age

__all__ = [
    "NAME_KEY",
    "REVIEW_COLUMN",
    "grid_marks",
    "label_sources",
    "option_label",
    "render_review",
    "reviewer",
    "reviewer_field",
    "source_label",
    "source_note",
]

NAME_KEY = "review.name"
"""Session key of the name a reviewer typed (kept across pages for the session)."""


def _login() -> str | None:
    """The logged-in user's e-mail (or name), when the dashboard has a login."""
    try:
        user = st.user
        if user.get("is_logged_in"):
            found = user.get("email") or user.get("name")
            return str(found) if found else None
    except Exception:  # no auth configured: st.user has nothing to say
        return None
    return None


def reviewer() -> str:
    """Who is reviewing: the login's user, else the typed name, else "anonymous"."""
    return _login() or str(st.session_state.get(NAME_KEY) or "").strip() or ANONYMOUS


def reviewer_field() -> None:
    """The "Your name" field, unless a login says who it is (then a line saying so)."""
    login = _login()
    if login:
        st.caption(f"Reviewing as {md_text(login)} (the dashboard login).")
        return
    # A widget's value is dropped with the widget when the page changes: keep it apart.
    typed = st.columns([1, 2])[0].text_input(
        "Your name (for your reviews)",
        value=st.session_state.get(NAME_KEY, ""),
        max_chars=200,
        placeholder=ANONYMOUS,
        key=f"{NAME_KEY}.field",
    )
    st.session_state[NAME_KEY] = typed.strip()


def render_review(info: ExperimentInfo, item_id: str, scorer_id: str) -> None:
    """The review form of one scorer's score of one item, and the reviews it has."""
    found = [r for r in _reviews(info.id, item_id) if r.scorer_id == scorer_id]
    who = reviewer()
    mine = next((r for r in found if r.reviewer == who), None)
    low, high = scorer_range(info, scorer_id)
    key = f"review.{info.id}.{item_id}.{scorer_id}"
    st.markdown("**Your review**")
    with st.form(key, border=True):
        score = st.number_input(
            f"The score you would give ({low:g} to {high:g}, optional)",
            min_value=low,
            max_value=high,
            value=mine.score if mine else None,
            step=(high - low) / 20,
            key=f"{key}.score",
        )
        note = st.text_area(
            "Note (optional)",
            value=mine.note if mine else "",
            max_chars=REVIEW_NOTE_MAX,
            key=f"{key}.note",
            height=80,
        )
        right, wrong = st.columns(2)
        marked_right = right.form_submit_button(
            "✓ Score is right",
            width="stretch",
            type="primary" if _is(mine, "right") else "secondary",
        )
        marked_wrong = wrong.form_submit_button(
            "✗ Score is wrong",
            width="stretch",
            type="primary" if _is(mine, "wrong") else "secondary",
        )
    if marked_right or marked_wrong:
        _save(info, item_id, scorer_id, "right" if marked_right else "wrong", score, note, who)
    _listing(found, info, item_id, scorer_id, who)


def _is(review: Review | None, verdict: str) -> bool:
    return review is not None and review.verdict == verdict


def _save(
    info: ExperimentInfo,
    item_id: str,
    scorer_id: str,
    verdict: str,
    score: float | None,
    note: str,
    who: str,
) -> None:
    try:
        service().save_review(
            info.id, item_id, scorer_id, verdict,  # type: ignore[arg-type]
            score=score, note=note, reviewer=who,
        )  # fmt: skip
    except (ReviewError, NotFoundError) as error:
        st.error(md_text(error))
        return
    st.toast(f"Review saved: {md_text(scorer_id)} on {md_text(item_id)} is {verdict}.")
    st.rerun()


def _listing(
    found: list[Review], info: ExperimentInfo, item_id: str, scorer_id: str, who: str
) -> None:
    if not found:
        st.caption("No review of this score yet.")
        return
    st.markdown(f"**Reviews** ({len(found)})")
    for review in found:
        own = f" · would give {review.score:g}" if review.score is not None else ""
        st.markdown(
            f"{'✓' if review.verdict == 'right' else '✗'} **{review.verdict}**{own} · "
            f"{md_text(review.reviewer)} · {age(review.updated_at)}"
        )
        if review.note:
            st.text(review.note)
    if any(r.reviewer == who for r in found) and st.button(
        "Delete my review", key=f"review.{info.id}.{item_id}.{scorer_id}.delete"
    ):
        service().delete_review(info.id, item_id, scorer_id, who)
        st.rerun()


def _reviews(experiment_id: str, item_id: str) -> list[Review]:
    return service().reviews(experiment_id, item_id)


# ---- the grid's review column ----

REVIEW_COLUMN = "reviewed"
"""The grid's column of review marks."""

_MARKS = {"right": "✓", "wrong": "✗"}


def grid_marks(experiment_id: str) -> dict[str, dict[str, str]]:
    """The grid's `reviewed` column: per reviewed item, each reviewed scorer with ✓ (its score
    was marked right) or ✗ (wrong), by the latest review; no column before the first review."""
    marks = service().review_marks(experiment_id)
    if not marks:
        return {}
    return {
        REVIEW_COLUMN: {
            item_id: " · ".join(f"{scorer} {_MARKS[verdict]}" for scorer, verdict in by.items())
            for item_id, by in marks.items()
        }
    }


# ---- reviews as a label source of the agreement panel ----


def label_sources(info: ExperimentInfo) -> list[str]:
    """`[REVIEWS_SOURCE]` when the experiment has a review (the agreement panel offers the
    reviews as labels next to the label columns), else none."""
    return [REVIEWS_SOURCE] if service().review_count([info.id]) else []  # a count, not a read


def option_label(source: str) -> str:
    """A label source as the picker lists it: the column's name as it is, or "reviews (human
    verdicts)"."""
    return "reviews (human verdicts)" if source == REVIEWS_SOURCE else source


def source_label(source: str) -> str:
    """How a label source is named: "the reviews (human verdicts)" or "column <name>"."""
    return "the reviews (human verdicts)" if source == REVIEWS_SOURCE else f"column {source}"


def source_note(source: str) -> None:
    """For the reviews as labels, what a label is (docs/review.md); nothing for a column."""
    if source == REVIEWS_SOURCE:
        st.caption(
            "A review's label says whether the item deserves a high score from that scorer: "
            "the reviewer's own score at or above the scorer's threshold when given, else the "
            "scorer's score thresholded when marked right and its opposite when marked wrong "
            "(the threshold: the middle of the scorer's range). Several reviewers: the mean of "
            "their labels. Each scorer is measured on the items reviewed for it."
        )
