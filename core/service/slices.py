"""Slices of an experiment by a metadata column, for `Service.slices`, `Service.compare_slices`
and `Service.metadata_columns`: the database groups the stored results
(`Store.slice_summaries`), the failed runs held in memory are counted per slice here, and
`core.reporting.slices` adds the 95% t-intervals and the per-slice changes.

What a slice says of failed runs: `SliceScorer.missing` (items of the slice without a stored
run of the scorer: failed, or never run) comes from the database for any experiment;
`SliceScorer.failed` only for an experiment whose failures this process holds (run or imported
here); for one run by the CLI or by another process it is None and `missing` is what is known.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.records import ScorerOutcome, SliceChange, SliceSummary
from core.reporting.slices import slice_changes, with_intervals
from core.storage import Store

__all__ = ["compare_slices", "metadata_columns", "slices"]


def metadata_columns(store: Store, experiment_id: str) -> list[str]:
    """The metadata columns of the experiment's dataset (in the file's order); raises
    NotFoundError."""
    info = store.get_experiment(experiment_id)
    return list(store.get_dataset(info.dataset_id).mapping.metadata)


def slices(
    store: Store,
    experiment_id: str,
    column: str,
    failures: Sequence[ScorerOutcome] | None,
) -> list[SliceSummary]:
    """Per value of `column`: items, and per scorer runs, mean with its 95% t-interval,
    missing runs and (when `failures` is not None: held in memory) failed runs. Raises
    NotFoundError, and ValueError naming a column the dataset does not have."""
    known = metadata_columns(store, experiment_id)
    if column not in known:
        raise ValueError(
            f"Experiment {experiment_id!r}: no metadata column {column!r} "
            f"(its dataset has {', '.join(map(repr, known)) or 'none'})"
        )
    found = store.slice_summaries(experiment_id, column)
    per_slice: dict[str, dict[str, int]] | None = None
    if failures is not None:
        dataset_id = store.get_experiment(experiment_id).dataset_id
        values = store.metadata_values(dataset_id, column, [f.item_id for f in failures])
        per_slice = {}
        for failure in failures:
            counts = per_slice.setdefault(values.get(failure.item_id, ""), {})
            counts[failure.scorer_id] = counts.get(failure.scorer_id, 0) + 1
    return with_intervals(found, per_slice)


def compare_slices(
    baseline: Sequence[SliceSummary], candidate: Sequence[SliceSummary]
) -> list[SliceChange]:
    """The per-slice change of each shared scorer's mean, worst first."""
    return slice_changes(baseline, candidate)
