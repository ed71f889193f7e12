"""Widgets several pages share: the experiment picker and the live progress of running
experiments."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from core.records import ExperimentInfo
from core.service import Service
from pages.ui import fmt, nav
from pages.ui.text import md_text, plain_text


def experiment_label(info: ExperimentInfo) -> str:
    """How an experiment is named in pickers (option labels: plain text, never Markdown)."""
    when = info.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    return plain_text(f"{info.name} · {info.status} · {when}")


def pick_experiment(service: Service, key: str) -> ExperimentInfo | None:
    """A picker over the stored experiments, following and updating `?experiment=` in the URL."""
    experiments = service.list_experiments()
    if not experiments:
        st.info("No experiment yet. Start one on the *New experiment* page.")
        st.page_link(nav.NEW_EXPERIMENT, label="New experiment", icon=":material/play_arrow:")
        return None
    ids = [info.id for info in experiments]
    wanted = st.query_params.get(nav.EXPERIMENT_PARAM)
    written = f"{key}.written"
    # The URL wins only when it names another experiment than the one this picker last wrote
    # there (a link was followed); otherwise the user's own choice stands.
    if key not in st.session_state or st.session_state[key] not in ids:
        st.session_state[key] = wanted if wanted in ids else ids[0]
    elif wanted in ids and wanted != st.session_state.get(written):
        st.session_state[key] = wanted
    else:
        # Set by the script, so the browser is sent the label again: it keeps the label it
        # was last sent (" · running") when only the label changed, the choice being the same.
        st.session_state[key] = st.session_state[key]
    by_id = {info.id: info for info in experiments}
    chosen = st.selectbox(
        "Experiment", ids, key=key, format_func=lambda i: experiment_label(by_id[i])
    )
    st.query_params[nav.EXPERIMENT_PARAM] = chosen
    st.session_state[written] = chosen
    return by_id[chosen]


def running_experiments(service: Service) -> None:
    """Progress bars of the experiments running in this process, refreshed every second.

    They are read from the service, not from this browser session, so a page switch or a
    reload shows the same runs, never new ones.
    """
    if service.running_experiments():
        st.fragment(_progress_panel, run_every=1.0)(service)


def _progress_panel(service: Service) -> None:
    running = service.running_experiments()
    if not running:
        st.rerun(scope="app")  # the last one just finished: show its results
    st.subheader("Running")
    for experiment_id in running:
        info = service.get_experiment(experiment_id)
        progress = service.progress(info.id)
        counts = progress.counts
        eta = fmt.duration(progress.eta_s) if progress.eta_s is not None else "…"
        st.progress(
            counts.fraction,
            text=(
                f"**{md_text(info.name)}** — {counts.done:,}/{counts.total:,} scorer runs · "
                f"{counts.failed:,} failed · {fmt.tokens(counts.usage.total_tokens or 0)} "
                f"judge tokens · elapsed {fmt.duration(progress.elapsed_s)} · ETA {eta}"
            ),
        )
        if st.button("Cancel", key=f"cancel-{info.id}", help="Stop starting new runs"):
            service.cancel(info.id)
            st.toast(f"Cancelling {md_text(info.name)}: finished results are kept.")


def age(moment: datetime | None) -> str:
    """`5 min ago` style, for timestamps."""
    if moment is None:
        return "—"
    seconds = (datetime.now(UTC) - moment.astimezone(UTC)).total_seconds()
    return f"{fmt.duration(max(seconds, 0))} ago"
