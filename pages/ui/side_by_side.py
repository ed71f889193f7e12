"""Compare's "Side by side" grid (issue 21): every item paired in all the experiments chosen,
with each experiment's score per scorer and each candidate's change from the baseline, sorted by
any column (a sort picked here, or a click on a header), candidate cells coloured green where
they rose and red where they fell (core/reporting/side_by_side.py)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.service.views import CHANGE_SUFFIX, Comparison, side_by_side
from pages.ui.text import md_text, plain_frame, plain_text

KEY = "compare.side"
ROWS = 200
"""Rows drawn (after the sort): the grid stays quick at 10,000 items (each cell is styled:
with 500 rows a rerun of Compare at 10,000 × 5 took 0.39–0.49 s, with 200 0.25–0.26 s)."""
ROSE, FELL = "background-color: #d3f2dc", "background-color: #f8d4d4"
TOLERANCE = 1e-9


def coloured(frame: pd.DataFrame) -> Any:
    """The grid as a pandas Styler: scores with three decimals, changes signed, a candidate's
    score and change green where it rose over the baseline and red where it fell, "—" where
    there is no score."""
    changes = [c for c in frame.columns if c.endswith(CHANGE_SUFFIX)]
    scores = [c for c in frame.columns if c not in ("item_id", "input") and c not in changes]

    def css(column: pd.Series) -> list[str]:
        change = column.name if column.name in changes else f"{column.name}{CHANGE_SUFFIX}"
        if change not in frame.columns:
            return [""] * len(column)
        return [
            ROSE if delta > TOLERANCE else FELL if delta < -TOLERANCE else ""
            for delta in frame[change]
        ]

    styler = frame.style.apply(css, axis=0, subset=[*scores, *changes])
    styler = styler.format("{:.3f}", subset=scores, na_rep="—")
    return styler.format("{:+.3f}", subset=changes, na_rep="—")


def render_side_by_side(comparisons: list[Comparison]) -> pd.DataFrame | None:
    """The grid of the baseline and every candidate; returns the rows drawn (None when there is
    nothing to draw)."""
    st.subheader("Side by side")
    frame = side_by_side(comparisons)
    if frame.empty:
        st.info("No item is paired in every experiment chosen.")
        return None
    numeric = [c for c in frame.columns if c not in ("item_id", "input")]
    if not numeric:
        st.info("No scorer ran in every experiment chosen.")
        return None
    sort = st.selectbox(
        "Sort by",
        numeric,
        index=next((n for n, c in enumerate(numeric) if c.endswith(CHANGE_SUFFIX)), 0),
        key=f"{KEY}.sort",
        format_func=plain_text,
        help="Any score or change column (a click on a header sorts too).",
    )
    ascending = st.toggle("Lowest first", value=True, key=f"{KEY}.ascending")
    ordered = frame.sort_values(sort, ascending=ascending, na_position="last", kind="stable")
    shown = ordered.head(ROWS).reset_index(drop=True)
    shown["input"] = shown["input"].str.slice(0, 120)
    st.dataframe(coloured(plain_frame(shown)), hide_index=True, height=420, key=f"{KEY}.grid")
    more = f"; the first {ROWS:,} by the sort" if len(frame) > ROWS else ""
    st.caption(
        f"{len(frame):,} items paired in all {len(comparisons) + 1} experiments{more}. "
        f"Green: the candidate's score rose over the baseline; red: it fell; "
        f"sorted by {md_text(sort)}."
    )
    return shown
