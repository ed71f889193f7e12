"""Datasets: upload a table, check the proposed column mapping and the validation report,
import it; a Mastra project's store opened and imported (pages/ui/mastra.py); the stored
datasets with their fingerprints.

The upload is parsed once and kept in the session: a changed mapping and the import re-map the
parsed table instead of reading the file again.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.datasets`), it draws nothing, so the mapping form can be tested alone. Column
names, file and dataset names, cells and problems go through pages/ui/text.py."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from core.records import ColumnMapping, DatasetInfo, ImportReport
from core.service import DatasetImportError, ParsedUpload
from pages.ui import nav
from pages.ui.manage import render_dataset_manage
from pages.ui.mastra import render_mastra_store
from pages.ui.services import service
from pages.ui.text import md_text, plain_dataframe, plain_text
from pages.ui.widgets import age

UPLOAD_KEY = "datasets.upload"
NAME_KEY = "datasets.name"  # prefix: one name field per upload
USE_KEY = "datasets.use_stored"
COPY_KEY = "datasets.copy"
INSPECT_KEY = "datasets.inspect"
MAPPING_KEY = "datasets.mapping"  # prefix of the mapping selectboxes
PARSED_KEY = "datasets.parsed"  # the upload read once (a HeldUpload)
NONE = "(none)"
ROLES = (("input", True), ("output", True), ("ground_truth", False), ("id", False))
ROLE_LABELS = {"input": "Input", "output": "Output", "ground_truth": "Ground truth", "id": "Id"}


@dataclass(frozen=True)
class HeldUpload:
    """The upload read once, kept in the session while it stays in the uploader."""

    file_id: str
    """The uploader's id of this upload (a rerun with it needs no hashing)."""
    file_name: str
    content_key: str
    """The start of the content's SHA-1: the mapping widgets' key, and the cache key."""
    parsed: ParsedUpload


def parsed_upload(upload: UploadedFile) -> HeldUpload:
    """The upload, parsed on first sight only: every rerun after it (a changed mapping, the
    import click) maps the same parsed table again without reading the file."""
    held: HeldUpload | None = st.session_state.get(PARSED_KEY)
    if held is not None and (held.file_id, held.file_name) == (upload.file_id, upload.name):
        return held
    data = upload.getvalue()
    content_key = hashlib.sha1(data).hexdigest()[:10]
    if held is not None and (held.content_key, held.file_name) == (content_key, upload.name):
        parsed = held.parsed  # the same file uploaded again
    else:
        parsed = service().read_upload(upload.name, data)
    held = HeldUpload(upload.file_id, upload.name, content_key, parsed)
    st.session_state[PARSED_KEY] = held
    return held


def mapping_editor(parsed: ParsedUpload, file_key: str) -> ColumnMapping | None:
    """Selectboxes for each role, starting from the proposed mapping; None until the input
    and the output have a column (option labels are the column names, as they are)."""
    proposed = parsed.proposed_mapping
    columns = parsed.columns
    chosen: dict[str, str | None] = {}
    for (role, required), place in zip(ROLES, st.columns(len(ROLES)), strict=True):
        options = columns if required else [NONE, *columns]
        default = getattr(proposed, role, None) if proposed else None
        # No input or output column found: none is guessed, the report says so until one is
        # chosen (the CLI refuses the same file).
        index = options.index(default) if default in options else (None if required else 0)
        picked = place.selectbox(
            ROLE_LABELS[role] + (" *" if required else ""),
            options,
            index=index,
            format_func=plain_text,
            placeholder="Choose a column",
            key=f"{MAPPING_KEY}.{file_key}.{role}",
        )
        chosen[role] = None if picked == NONE else picked
    if not chosen["input"] or not chosen["output"]:
        return None
    used = {value for value in chosen.values() if value}
    metadata = [c for c in columns if c not in used]
    kept = md_text(", ".join(metadata)) if metadata else "none"
    st.caption(f"Other columns kept as metadata: {kept}")
    return ColumnMapping(
        id=chosen["id"],
        input=chosen["input"],
        output=chosen["output"],
        ground_truth=chosen["ground_truth"],
        metadata=metadata,
    )


def render_problems(report: ImportReport) -> None:
    """Ready to import, or every problem (each names a row or a column of the file)."""
    if report.ok:
        st.success(
            f"{report.row_count:,} rows ready to import · fingerprint `{report.fingerprint[:12]}`"
        )
        return
    st.error(
        f"{len(report.problems)} problem(s) found: nothing will be imported until they are "
        "fixed (in the file, or with another column mapping)."
    )
    shown = report.problems[:200]
    st.markdown("\n".join(f"- {md_text(problem.message)}" for problem in shown))
    if len(report.problems) > len(shown):
        st.caption(f"… and {len(report.problems) - len(shown):,} more.")


def render_upload() -> None:
    """The uploader, the mapping, the validation, the preview and the import button."""
    st.subheader("Import a table")
    upload = st.file_uploader(
        "CSV, TSV, JSONL, JSON (an array of objects), Excel (.xlsx) or Parquet",
        type=["csv", "tsv", "jsonl", "json", "xlsx", "parquet"],
        key=UPLOAD_KEY,
    )
    if upload is None:
        st.session_state.pop(PARSED_KEY, None)  # the parsed table goes with the file
        return
    held = parsed_upload(upload)
    parsed = held.parsed
    mapping = None
    if parsed.columns:
        st.markdown("**Column mapping** (detected from the column names; change it if needed)")
        mapping = mapping_editor(parsed, held.content_key)
    shared = service()
    report = shared.preview(parsed, mapping)
    render_problems(report)
    if report.preview:
        st.markdown("**Preview**")
        plain_dataframe(pd.DataFrame(report.preview), hide_index=True)
    # A key per upload: the name follows each new file instead of keeping the last one's.
    name = st.text_input(
        "Dataset name", value=upload.name.rsplit(".", 1)[0], key=f"{NAME_KEY}.{held.file_id}"
    )
    stored = shared.find_dataset(report.fingerprint or "") if report.ok else None
    if stored is not None:
        copy = offer_stored(stored)
    else:
        copy = st.button("Import dataset", type="primary", disabled=not report.ok)
    if copy:
        try:
            info = shared.import_parsed(parsed, mapping, name=name)
        except DatasetImportError as error:
            st.error(md_text(error))
        else:
            st.success(f"Imported **{md_text(info.name)}**: {info.item_count:,} items.")


def offer_stored(stored: DatasetInfo) -> bool:
    """The same items are stored already: offer that dataset, or a copy; True when a copy is
    asked for (pressing Import twice never stores two copies unasked)."""
    st.info(
        f"These items are stored already as **{md_text(stored.name)}** "
        f"({stored.item_count:,} items, imported {age(stored.created_at)}, same fingerprint).",
        icon=":material/content_copy:",
    )
    use, copy = st.columns(2)
    if use.button("Use the stored dataset", type="primary", key=f"{USE_KEY}.{stored.id}"):
        st.session_state[INSPECT_KEY] = stored.id
        st.success(f"Using **{md_text(stored.name)}**: it is shown below.")
        st.page_link(
            nav.NEW_EXPERIMENT, label="Start an experiment on it", icon=":material/play_arrow:"
        )
    return copy.button("Import a copy anyway", key=f"{COPY_KEY}.{stored.id}")


def render_stored() -> None:
    """The stored datasets, and a look inside one (its first 200 items)."""
    st.subheader("Stored datasets")
    datasets = service().list_datasets()
    if not datasets:
        st.info("No dataset stored yet.")
        return
    plain_dataframe(
        pd.DataFrame(
            {
                "Name": [d.name for d in datasets],
                "File": [d.file_name for d in datasets],
                "Format": [d.format for d in datasets],
                "Items": [d.item_count for d in datasets],
                "Fingerprint": [d.fingerprint[:12] for d in datasets],
                "Imported": [age(d.created_at) for d in datasets],
            }
        ),
        hide_index=True,
    )
    by_id = {d.id: d for d in datasets}
    if st.session_state.get(INSPECT_KEY) not in by_id:
        st.session_state.pop(INSPECT_KEY, None)  # deleted meanwhile
    chosen = st.selectbox(
        "Look inside", list(by_id), format_func=lambda i: plain_text(by_id[i].name), key=INSPECT_KEY
    )
    render_dataset_manage(by_id[chosen])
    items = service().dataset_items(chosen, limit=200)
    plain_dataframe(
        pd.DataFrame(
            {
                "id": [i.id for i in items],
                "input": [str(i.input) for i in items],
                "output": [str(i.output) for i in items],
                "ground truth": [
                    str(i.ground_truth) if i.ground_truth is not None else "" for i in items
                ],
            }
        ),
        hide_index=True,
    )
    if by_id[chosen].item_count > len(items):
        st.caption(f"First {len(items)} of {by_id[chosen].item_count:,} items.")


def main() -> None:
    """The page."""
    st.title("Datasets")
    render_upload()
    st.divider()
    render_mastra_store()
    st.divider()
    render_stored()


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
