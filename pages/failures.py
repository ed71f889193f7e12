"""Failures: failed scorer runs grouped by scorer, failed step and error message, each with its
failed step, completed steps, recovered score/reason and failed judge execution; a "Re-run
failed" button runs them again.

These live in the service's memory only: they are never written to the score storage. The page
reads them and the stored count of failed runs, never the experiment's stored results.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.failures`), it draws nothing. Ids, steps, errors and reasons go through
pages/ui/text.py."""

from __future__ import annotations

import streamlit as st

from core.records import ExperimentInfo, ScorerOutcome
from core.service import ExperimentConfigError, NotFoundError
from core.service.views import failure_groups
from pages.ui import fmt
from pages.ui.failure_titles import distinctive
from pages.ui.judge_key import judge_key_input
from pages.ui.services import service
from pages.ui.text import md_short, md_text, plain_dataframe, show_text
from pages.ui.themes import render_themes
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "failures"
MEMORY_NOTE = (
    "Failed scorer runs are kept **in memory only**: they are never written to the score "
    "storage, and they will not survive a restart of the dashboard. Recovered scores shown here "
    "do not count in any mean."
)

LOST_NOTE = (
    "{count:,} runs of this experiment failed, but their details are not here: they lived only "
    "in the memory of the process that ran it (`scorelab run` on the command line, or a "
    "dashboard since restarted), and went with it. To keep them, run with `scorelab run "
    "--json results.json`: the file holds the failed runs too, and importing it on the "
    "Compare page (*Import an exported experiment*) shows them here."
)


def render_failure(outcome: ScorerOutcome) -> None:
    """One failed run: where it stopped, what it had done, what it recovered, the error."""
    completed = ", ".join(outcome.completed_steps) or "none"
    st.markdown(
        f"**Item {md_short(outcome.item_id, 200)}** · failed step "
        f"{md_text(outcome.failed_step or '—')} · completed steps {md_text(completed)}"
    )
    st.markdown(f"Recovered score {fmt.score(outcome.recovered_score)}")
    if outcome.recovered_reason:
        show_text("Recovered reason", outcome.recovered_reason)
    show_text(None, outcome.error, empty="")
    if outcome.failed_execution is not None:
        st.markdown("Failed judge execution")
        st.json(outcome.failed_execution.model_dump(mode="json", exclude_none=True), expanded=False)


def render_groups(failures: list[ScorerOutcome]) -> None:
    """The failures grouped by scorer, failed step and error: a table, then an expander per
    group with its first 50 runs."""
    groups = failure_groups(failures)
    st.metric("Failed scorer runs", f"{len(failures):,}")
    plain_dataframe(groups.drop(columns=["item_ids"]), hide_index=True)
    by_key: dict[tuple, list[ScorerOutcome]] = {}
    for outcome in failures:
        by_key.setdefault((outcome.scorer_id, outcome.failed_step, outcome.error), []).append(
            outcome
        )
    titles = distinctive([str(error) for error in groups["error"]])
    for row in groups.itertuples():
        members = by_key.get((row.scorer_id, row.failed_step, row.error), [])
        title = (
            f"{md_short(row.scorer_id, 60)} · {md_short(row.failed_step, 40)} · "
            f"{row.count} × {md_short(titles[str(row.error)], 200)}"
        )
        with st.expander(title):
            # The title keeps the telling part of the error only: the whole of it here.
            st.caption(f"Error: {md_short(row.error, 500)}")
            for outcome in members[:50]:
                render_failure(outcome)
                st.divider()
            if len(members) > 50:
                st.caption(f"… and {len(members) - 50} more.")


def render_retry(info: ExperimentInfo, failures: list[ScorerOutcome]) -> bool:
    """The "Re-run failed" button (with a key field for the judge), unless the experiment is
    running here; True when this click started the re-run."""
    shared = service()
    if info.id in shared.running_experiments():
        return False
    typed_key = (
        judge_key_input(f"{KEY}.retry", info.judge_model, info.api_base)
        if info.judge_model
        else None
    )
    clicked = st.button(
        f"Re-run failed ({len(failures):,})",
        key=f"{KEY}.retry",
        icon=":material/replay:",
        help="Runs these scorer runs again: a success is stored and leaves this list, a new "
        "failure replaces the old one.",
    )
    if not clicked:
        return False
    try:
        count = shared.retry_failed(info.id, api_key=typed_key)
    except (ExperimentConfigError, NotFoundError) as error:
        st.error(md_text(error))
        return False
    st.toast(f"Re-running {count:,} failed runs of {md_text(info.name)}")
    return True


def main() -> None:
    """The page."""
    st.title("Failures")
    st.info(MEMORY_NOTE, icon=":material/memory:")
    shared = service()
    running_experiments(shared)
    info = pick_experiment(shared, f"{KEY}.picked")
    if info is None:
        return
    # The failures held in memory and the stored count only: never the stored results.
    counts = shared.failure_counts(info.id)
    failures = shared.failures(info.id) if counts.in_memory else []
    if not failures:
        if counts.total and not counts.details_in_memory:
            st.warning(LOST_NOTE.format(count=counts.total))
        else:
            st.success("No scorer run failed in this experiment.")
        return
    if render_retry(info, failures):
        st.rerun()  # the progress panel takes over
    render_groups(failures)
    render_themes(info, ("failures",))


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
