"""Managing datasets and experiments (issue 14): rename, delete with a confirmation that says
what else goes (experiments, results, reviews), an experiment's note and tags (shown on its
page and the home table, filterable there). Names, notes and tags go through
pages/ui/text.py; the checks are the service's (core/service/manage.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from core.records import DatasetInfo, DeletionImpact, ExperimentInfo
from core.service import ExperimentConfigError, InvalidInputError, NotFoundError, StorageError
from pages.ui import nav
from pages.ui.services import service
from pages.ui.text import md_text

KEY = "manage"
EXPERIMENT_EDITOR = f"{KEY}.experiment.open"
"""Session key of the experiment page's "Name, note and tags" expander (open or shut)."""
TAG_FILTER_KEY = "home.tags"
_REFUSED = (InvalidInputError, ExperimentConfigError, NotFoundError, StorageError)


def plural(count: int, word: str) -> str:
    """`1 experiment`, `3 experiments`."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def impact_text(impact: DeletionImpact) -> str:
    """What a deletion takes, in one sentence (Markdown, names escaped)."""
    parts = []
    if impact.kind == "dataset":
        parts.append(plural(impact.items, "item"))
        parts.append(plural(impact.experiments, "experiment"))
    parts.append(plural(impact.results, "stored result"))
    parts.append(plural(impact.reviews, "human review"))
    return (
        f"Deleting the {impact.kind} **{md_text(impact.name)}** also deletes "
        f"{', '.join(parts[:-1])} and {parts[-1]}. This cannot be undone."
    )


# ---- experiments ----


def render_note(info: ExperimentInfo) -> None:
    """The experiment's tags and note under its title (nothing when it has neither)."""
    if info.tags:
        st.markdown(" ".join(f":blue-badge[{md_text(tag)}]" for tag in info.tags))
    if info.note:
        st.caption(md_text(info.note))


def render_experiment_manage(info: ExperimentInfo) -> None:
    """Its note and tags under the title, then an expander to edit them, rename it, or delete
    it (after a confirmation saying what goes with it)."""
    render_note(info)
    # Drawn only when open (a click on it reruns the page): its fields and buttons were
    # redrawn on every view switch of the experiment page while shut.
    editor = st.expander(
        "Name, note and tags",
        icon=":material/edit_note:",
        key=EXPERIMENT_EDITOR,
        on_change="rerun",
    )
    if not editor.open:
        return
    with editor:
        _edit_experiment(info)
        st.divider()
        confirm_delete(
            f"{KEY}.experiment.{info.id}",
            lambda: service().experiment_deletion(info.id),
            lambda: service().delete_experiment(info.id),
            on_done=lambda: st.switch_page(nav.HOME),
        )


def _edit_experiment(info: ExperimentInfo) -> None:
    key = f"{KEY}.experiment.{info.id}"
    with st.form(f"{key}.form", border=False):
        name = st.text_input("Name", value=info.name, key=f"{key}.name")
        note = st.text_area("Note", value=info.note or "", key=f"{key}.note", height=80)
        tags = st.text_input(
            "Tags",
            value=", ".join(info.tags),
            key=f"{key}.tags",
            help="Separated by commas; at most 10, of at most 32 characters each.",
        )
        saved = st.form_submit_button("Save", icon=":material/save:")
    if not saved:
        return
    shared = service()
    try:
        if name.strip() != info.name:
            shared.rename_experiment(info.id, name)
        shared.set_experiment_note(info.id, note, split_tags(tags))
    except _REFUSED as error:
        st.error(md_text(error))
        return
    st.toast("Saved")
    st.rerun()


def split_tags(text: str) -> list[str]:
    """Tags typed on one line, separated by commas."""
    return [piece.strip() for piece in text.split(",") if piece.strip()]


def filter_by_tags(experiments: Sequence[ExperimentInfo]) -> list[ExperimentInfo]:
    """A tag filter over the experiments (shown when any has a tag): those holding every
    chosen tag."""
    tags = sorted({tag for info in experiments for tag in info.tags}, key=str.casefold)
    if not tags:
        return list(experiments)
    chosen = st.multiselect("Filter by tags", tags, key=TAG_FILTER_KEY, placeholder="Any tag")
    return [info for info in experiments if set(chosen) <= set(info.tags)]


def with_notes(frame: pd.DataFrame, experiments: Sequence[ExperimentInfo]) -> pd.DataFrame:
    """The home table with each experiment's tags and note beside its name, when any has one
    (`frame`: one row per experiment, with its `id`)."""
    by_id = {info.id: info for info in experiments}
    if not any(info.tags or info.note for info in experiments):
        return frame
    shown = frame.copy()
    at = list(shown.columns).index("name") + 1 if "name" in shown.columns else 0
    shown.insert(at, "tags", [", ".join(by_id[i].tags) for i in shown["id"]])
    shown.insert(at + 1, "note", [by_id[i].note or "" for i in shown["id"]])
    return shown


# ---- datasets ----


def render_dataset_manage(dataset: DatasetInfo) -> None:
    """Rename a dataset, or delete it after a confirmation saying what goes with it."""
    key = f"{KEY}.dataset.{dataset.id}"
    with st.expander("Rename or delete", icon=":material/edit:"):
        with st.form(f"{key}.form", border=False):
            name = st.text_input("Name", value=dataset.name, key=f"{key}.name")
            renamed = st.form_submit_button("Rename", icon=":material/save:")
        if renamed:
            try:
                service().rename_dataset(dataset.id, name)
            except _REFUSED as error:
                st.error(md_text(error))
            else:
                st.toast("Renamed")
                st.rerun()
        confirm_delete(
            key,
            lambda: service().dataset_deletion(dataset.id),
            lambda: service().delete_dataset(dataset.id),
        )


# ---- the confirmation ----


def confirm_delete(
    key: str,
    impact: Callable[[], DeletionImpact],
    delete: Callable[[], None],
    on_done: Callable[[], None] | None = None,
) -> bool:
    """A Delete button; pressed, the impact and a confirm/cancel pair. True when deleted."""
    asked = f"{key}.asked"
    if not st.session_state.get(asked):
        if st.button("Delete…", key=f"{key}.delete", icon=":material/delete:"):
            st.session_state[asked] = True
            st.rerun()
        return False
    try:
        found = impact()
    except _REFUSED as error:
        st.session_state[asked] = False
        st.error(md_text(error))
        return False
    st.warning(impact_text(found), icon=":material/warning:")
    if found.running:
        st.error(
            f"{plural(found.running, 'experiment')} of it {'is' if found.running == 1 else 'are'}"
            " running: cancel before deleting."
        )
    yes, no = st.columns(2)
    confirmed = yes.button(
        f"Delete the {found.kind}",
        key=f"{key}.confirm",
        type="primary",
        disabled=bool(found.running),
        icon=":material/delete_forever:",
    )
    if no.button("Cancel", key=f"{key}.cancel"):
        st.session_state[asked] = False
        st.rerun()
    if not confirmed:
        return False
    st.session_state[asked] = False
    try:
        delete()
    except _REFUSED as error:
        st.error(md_text(error))
        return False
    st.toast(f"Deleted {md_text(found.name)}")
    if on_done is not None:
        on_done()
    st.rerun()
    return True
