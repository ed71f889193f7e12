"""The review widget (docs/review.md): on an item, for one scorer, a person marks the score
right or wrong, may give the score they would have given and a note; their review is saved
(updated when saved again) and every review of that score is listed with who and when.

Besides each scorer's score, the whole item may be judged (`render_item_review`): right or wrong
with a note, stored as a review whose scorer is "*" (`WHOLE_ITEM`), exported and imported with
the experiment like the others.

Who reviews: the dashboard login's user (its e-mail) when there is one, else the name typed in
the "Your name" field, else "anonymous". The typed name is kept for the browser session: in the
session's state across pages, and in a session cookie (`NAME_COOKIE`, no expiry: gone when the
browser closes) that a reload or a new tab reads back (`st.context.cookies`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import quote, unquote

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.records import REVIEW_NOTE_MAX, ExperimentInfo, Review, ReviewVerdict
from core.service import NotFoundError, ReviewError
from core.service.views import ANONYMOUS, REVIEWS_SOURCE, WHOLE_ITEM, scorer_range
from pages.ui.services import service
from pages.ui.text import md_short, md_text, plain_text
from pages.ui.widgets import age

__all__ = [
    "NAME_COOKIE",
    "NAME_KEY",
    "REVIEW_COLUMN",
    "grid_marks",
    "label_sources",
    "option_label",
    "render_item_review",
    "render_review",
    "reviewer",
    "reviewer_field",
    "reviews_frame",
    "source_label",
    "source_note",
]

NAME_KEY = "review.name"
"""Session key of the name a reviewer typed (kept across pages for the session)."""
NAME_COOKIE = "scorelab_reviewer"
"""The session cookie keeping the typed name across reloads (URL-encoded)."""
_WRITTEN = f"{NAME_KEY}.cookie"


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


def _cookie() -> str | None:
    """The name cookie as the browser sent it when this session connected (None: none)."""
    try:
        raw = st.context.cookies.get(NAME_COOKIE)
    except Exception:  # outside a browser session (a bare script): no cookie
        return None
    return raw if isinstance(raw, str) else None


def _typed_name() -> str:
    """The name typed in this browser session: the session's, else the cookie's (a reload)."""
    if NAME_KEY not in st.session_state:
        raw = _cookie()
        kept = unquote(raw).strip()[:200] if raw else ""
        st.session_state[NAME_KEY] = kept
        st.session_state[_WRITTEN] = kept
    return str(st.session_state.get(NAME_KEY) or "").strip()


def reviewer() -> str:
    """Who is reviewing: the login's user, else the typed name, else "anonymous"."""
    return _login() or _typed_name() or ANONYMOUS


def _keep_in_cookie(name: str) -> None:
    """Write the name to the session cookie (a script in the page; only when it changed)."""
    if st.session_state.get(_WRITTEN) == name:
        return
    value = json.dumps(quote(name, safe="")).replace("<", "\\u003c")
    st.html(
        "<script>document.cookie = "
        f"'{NAME_COOKIE}=' + {value} + '; path=/; SameSite=Strict';</script>",
        unsafe_allow_javascript=True,
    )
    st.session_state[_WRITTEN] = name


def reviewer_field() -> None:
    """The "Your name" field, unless a login says who it is (then a line saying so). With a
    name known (typed earlier, or the cookie's after a reload) the name is drawn as a button's
    label, the field in its popover: Streamlit's text field is drawn empty and filled a moment
    later (its value is set after the first paint), which showed a reviewer "anonymous" first."""
    login = _login()
    if login:
        st.caption(f"Reviewing as {md_text(login)} (the dashboard login).")
        return
    known = _typed_name()
    if not known:
        typed = _name_input()
    else:
        with st.popover(
            f"Reviewing as {md_short(known, 60)}",
            icon=":material/person:",
            help="Change the name your reviews are saved under.",
        ):
            typed = _name_input()
    _keep_in_cookie(typed)  # outside the popover: its content is drawn only when open


def _name_input() -> str:
    """The "Your name" field; returns the name typed (kept in the session)."""
    # A widget's value is dropped with the widget when the page changes: keep it apart.
    typed = st.text_input(
        "Your name (for your reviews)",
        width=320,
        value=_typed_name(),
        max_chars=200,
        placeholder=ANONYMOUS,
        key=f"{NAME_KEY}.field",
    )
    st.session_state[NAME_KEY] = typed.strip()
    return typed.strip()


def render_item_review(
    info: ExperimentInfo,
    item_id: str,
    reviews: Sequence[Review] | None = None,
    *,
    whole_page: bool = False,
    open_key: str | None = None,
) -> None:
    """The verdict on the whole item (is the answer right?), with a note, and the verdicts
    it has; saved as a review of `WHOLE_ITEM`. `reviews`: the item's reviews if already read;
    `whole_page`: a save reruns the page, not only the fragment (see `_rerun_after`).

    With `open_key` (the experiment page's drill-down) the expander starts shut and its form
    is drawn only when open (a click on it reruns the fragment or page it is in); it stays open
    or shut for the next item. Without, it is open until the reviewer has given a verdict."""
    every = _reviews(info.id, item_id) if reviews is None else reviews
    found = [r for r in every if r.scorer_id == WHOLE_ITEM]
    who = reviewer()
    mine = next((r for r in found if r.reviewer == who), None)
    key = f"review.{info.id}.{item_id}.item"
    label = "Verdict on the whole item" + (f" · yours: {mine.verdict}" if mine else "")
    if open_key is None:
        expander = st.expander(label, expanded=mine is None)
    else:
        # Its form, note and buttons were a third of the browser's work on each row click
        # (bench/browser_pages.py), drawn for every item while most are not judged whole.
        # Its label (part of the expander's identity) changes with a verdict given: the
        # open or shut state is kept apart so that it outlives the change.
        opened = _drawn_when_open(label, open_key)
        if opened is None:
            return
        expander = opened
    with expander:
        with st.form(key, border=False):
            note = st.text_area(
                "Note on the item (optional)",
                value=mine.note if mine else "",
                max_chars=REVIEW_NOTE_MAX,
                key=f"{key}.note",
                height=68,
            )
            verdict = _verdict_buttons(mine, "Item")
        if verdict is not None:
            _save(info, item_id, WHOLE_ITEM, verdict, None, note, who, whole_page)
        _listing(found, info, item_id, WHOLE_ITEM, who, whole_page)


def _drawn_when_open(label: str, open_key: str) -> DeltaGenerator | None:
    """An expander that starts shut and whose content is drawn only when open (a click on it
    reruns the fragment or page it is in); None while shut. It stays open or shut for the next
    item: its label (part of its identity) changes with the item's reviews, so the state is
    kept apart, under `open_key` + ".kept"."""
    kept = f"{open_key}.kept"
    expander = st.expander(
        label,
        key=open_key,
        expanded=bool(st.session_state.get(kept, False)),
        on_change="rerun",
    )
    st.session_state[kept] = bool(expander.open)
    return expander if expander.open else None


def _score_review_label(found: Sequence[Review], mine: Review | None) -> str:
    """The shut review expander's label: what it holds, so that the reader need not open it
    ("no review yet", how many reviews, the reader's own verdict)."""
    held = f"{len(found)} review{'s' if len(found) != 1 else ''}" if found else "no review yet"
    return f"Review this score · {held}" + (f" · yours: {mine.verdict}" if mine else "")


def render_review(
    info: ExperimentInfo,
    item_id: str,
    scorer_id: str,
    reviews: Sequence[Review] | None = None,
    *,
    whole_page: bool = False,
    open_key: str | None = None,
) -> None:
    """The review form of one scorer's score of one item, and the reviews it has. `reviews`:
    the item's reviews if already read (one read for every scorer of the item); `whole_page`:
    a save reruns the page, not only the fragment (see `_rerun_after`).

    With `open_key` (the experiment page's drill-down) the form and the reviews are in an
    expander that starts shut, its label saying how many reviews there are and the reader's
    verdict, drawn only when open and kept open or shut for the next item and scorer."""
    every = _reviews(info.id, item_id) if reviews is None else reviews
    found = [r for r in every if r.scorer_id == scorer_id]
    who = reviewer()
    mine = next((r for r in found if r.reviewer == who), None)
    if open_key is None:
        st.markdown("**Your review**")
        _score_form(info, item_id, scorer_id, found, mine, who, whole_page)
        return
    # The form's number field, note and buttons were most of the elements a row click drew
    # (bench/browser_pages.py), for every item while few are reviewed.
    opened = _drawn_when_open(_score_review_label(found, mine), open_key)
    if opened is not None:
        with opened:
            _score_form(info, item_id, scorer_id, found, mine, who, whole_page)


def _score_form(
    info: ExperimentInfo,
    item_id: str,
    scorer_id: str,
    found: list[Review],
    mine: Review | None,
    who: str,
    whole_page: bool,
) -> None:
    """The review form of one score (the reviewer's own score, a note, the two verdict
    buttons), then the reviews it has."""
    low, high = scorer_range(info, scorer_id)
    key = f"review.{info.id}.{item_id}.{scorer_id}"
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
        verdict = _verdict_buttons(mine, "Score")
    if verdict is not None:
        _save(info, item_id, scorer_id, verdict, score, note, who, whole_page)
    _listing(found, info, item_id, scorer_id, who, whole_page)


def _verdict_buttons(mine: Review | None, what: str) -> ReviewVerdict | None:
    """The form's two submit buttons side by side, "✓ {what} is right" and "✗ {what} is
    wrong" (the one of the reviewer's verdict highlighted); the verdict clicked, if any."""
    right, wrong = st.columns(2)
    marked_right = right.form_submit_button(
        f"✓ {what} is right",
        width="stretch",
        type="primary" if _is(mine, "right") else "secondary",
    )
    marked_wrong = wrong.form_submit_button(
        f"✗ {what} is wrong",
        width="stretch",
        type="primary" if _is(mine, "wrong") else "secondary",
    )
    if marked_right:
        return "right"
    return "wrong" if marked_wrong else None


def _rerun_after(whole_page: bool) -> None:
    """After a save or a deletion: rerun the fragment the review widget is in when this is a
    fragment's run, else the page. `whole_page` forces the page: the experiment page's
    drill-down is a fragment nested in the grid's, and the grid's `reviewed` column must show
    the change (a fragment's body cannot name another fragment to rerun)."""
    context = get_script_run_ctx()
    in_fragment = context is not None and bool(context.fragment_ids_this_run)
    st.rerun(scope="fragment" if in_fragment and not whole_page else "app")


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
    whole_page: bool,
) -> None:
    try:
        service().save_review(
            info.id, item_id, scorer_id, verdict,  # type: ignore[arg-type]
            score=score, note=note, reviewer=who,
        )  # fmt: skip
    except (ReviewError, NotFoundError) as error:
        st.error(md_text(error))
        return
    what = "the item" if scorer_id == WHOLE_ITEM else md_text(scorer_id)
    st.toast(f"Review saved: {what} on {md_text(item_id)} is {verdict}.")
    _rerun_after(whole_page)


def _listing(
    found: list[Review],
    info: ExperimentInfo,
    item_id: str,
    scorer_id: str,
    who: str,
    whole_page: bool,
) -> None:
    if not found:
        what = "item" if scorer_id == WHOLE_ITEM else "score"
        st.caption(f"No review of this {what} yet.")
        return
    st.markdown(f"**Reviews** ({len(found)})")
    for review in found:
        own = f" · would give {review.score:g}" if review.score is not None else ""
        st.markdown(
            f"{'✓' if review.verdict == 'right' else '✗'} **{review.verdict}**{own} · "
            f"{md_text(review.reviewer)} · {age(review.updated_at)}"
        )
        if review.note:
            st.text(plain_text(review.note))
    if any(r.reviewer == who for r in found) and st.button(
        "Delete my review", key=f"review.{info.id}.{item_id}.{scorer_id}.delete"
    ):
        service().delete_review(info.id, item_id, scorer_id, who)
        _rerun_after(whole_page)


def _reviews(experiment_id: str, item_id: str) -> list[Review]:
    return service().reviews(experiment_id, item_id)


def reviews_frame(reviews: Sequence[Review]) -> pd.DataFrame:
    """Reviews as a table (the experiment page's Reviews view): item, what was judged (a
    scorer, or "whole item"), verdict, the reviewer's score, reviewer, note, when."""
    return pd.DataFrame(
        {
            "item": [r.item_id for r in reviews],
            "judged": ["whole item" if r.scorer_id == WHOLE_ITEM else r.scorer_id for r in reviews],
            "verdict": [_MARKS[r.verdict] + " " + r.verdict for r in reviews],
            "would give": [r.score for r in reviews],
            "reviewer": [r.reviewer for r in reviews],
            "note": [r.note for r in reviews],
            "updated": [age(r.updated_at) for r in reviews],
        }
    )


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
            item_id: " · ".join(
                f"{'item' if scorer == WHOLE_ITEM else scorer} {_MARKS[verdict]}"
                for scorer, verdict in by.items()
            )
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
