"""Pass/fail on the experiment page (issue 21): a minimum (and optional maximum) per scorer,
kept with the experiment (`Service.set_thresholds`), the verdict per scorer and overall, and the
share of items whose thresholded scores all pass. The rule is `check_threshold`'s, the CLI's
(core/service/pass_fail.py)."""

from __future__ import annotations

import streamlit as st

from core.records import ExperimentInfo
from core.service import InvalidInputError
from core.service.pass_fail import PassFail
from pages.ui.services import service
from pages.ui.text import md_short, md_text

KEY = "experiment.pass"


def render_pass_fail(info: ExperimentInfo) -> PassFail:
    """The verdict line and the thresholds' editor; returns what the thresholds say."""
    shared = service()
    found = shared.pass_fail(info.id)
    if found.passed is not None:
        failing = [r.id for r in found.results if not r.passed]
        rates = ", ".join(
            f"{md_short(r.id)} {_rate(r.average_score)} "
            f"({'✓' if r.passed else '✗'} {_bounds(r.threshold.min, r.threshold.max)})"
            for r in found.results
        )
        rate = found.pass_rate
        items = "" if rate is None else f" · pass rate {rate:.1%} of items"
        if found.passed:
            st.success(
                f"**Passed** every threshold: {rates}{items}", icon=":material/check_circle:"
            )
        else:
            st.error(
                f"**Failed** on {', '.join(md_short(s) for s in failing)}: {rates}{items}",
                icon=":material/cancel:",
            )
    # Drawn only when open (a click on it reruns the page): its two number fields per scorer
    # were redrawn on every view switch while shut.
    editor = st.expander("Pass/fail thresholds", key=f"{KEY}.open", on_change="rerun")
    if not editor.open:
        return found
    with editor:
        st.caption(
            "A scorer passes when its mean is within its bounds (inclusive) and none of its "
            "runs failed — the rule of `scorelab run --threshold`. Empty: no threshold."
        )
        with st.form(f"{KEY}.form", border=False):
            given: dict[str, dict[str, float]] = {}
            for scorer_id in info.scorer_ids:
                kept = found.thresholds.get(scorer_id)
                low, high = st.columns(2)
                minimum = low.number_input(
                    f"{md_short(scorer_id)} · min",
                    min_value=0.0,
                    max_value=1.0,
                    value=kept.min if kept is not None else None,
                    step=0.05,
                    key=f"{KEY}.min.{scorer_id}",
                )
                maximum = high.number_input(
                    f"{md_short(scorer_id)} · max",
                    min_value=0.0,
                    max_value=1.0,
                    value=kept.max if kept is not None else None,
                    step=0.05,
                    key=f"{KEY}.max.{scorer_id}",
                )
                bounds = {"min": minimum, "max": maximum}
                given[scorer_id] = {k: v for k, v in bounds.items() if v is not None}
            if st.form_submit_button("Save thresholds"):
                try:
                    shared.set_thresholds(info.id, given)
                except InvalidInputError as error:
                    st.error(md_text(error))
                else:
                    st.rerun()
    return found


def pass_column(found: PassFail) -> dict[str, dict[str, str]]:
    """The grid's `pass` column (item id -> ✓ or ✗), none without a threshold."""
    if not found.items:
        return {}
    return {"pass": {item_id: found.mark(item_id) for item_id in found.items}}


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g}–{high:g}"
    return f"≥ {low:g}" if low is not None else f"≤ {high:g}"
