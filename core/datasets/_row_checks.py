"""The per-row checks of a mapped table: empty inputs, outputs and ids, repeated ids, and NUL
characters (which PostgreSQL's text and jsonb types cannot store: docs/datasets.md)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from core.datasets._cell_values import arrow_text, empty_mask, text_chunks
from core.datasets._dataset_table import Table
from core.datasets._import_problems import capped, join, problem
from core.datasets._mapped_columns import Column, MappedColumns
from core.datasets._value_checks import NUL, holds_nul
from core.records import ColumnMapping, ImportProblem


def check_rows(table: Table, mapping: ColumnMapping, columns: MappedColumns) -> list[ImportProblem]:
    """The per-row problems: NUL characters, empty input/output/id, duplicate ids, in the
    mapped `columns`."""
    problems = _nul_problems(table, mapping, columns) if table.may_hold_nul else []
    return problems + _empty_and_duplicate(table, mapping, columns.ids)


def _labelled(what: str, label: str) -> str:
    """A row's problem message: the row's label, then what is wrong (bound per column, as a
    lambda's default argument could not be typed)."""
    return f"{label}: {what}"


def _empty_and_duplicate(table: Table, mapping: ColumnMapping, ids: Column) -> list[ImportProblem]:
    frame, word = table.frame, table.field_word
    problems: list[ImportProblem] = []
    for role in ("input", "output"):
        column = getattr(mapping, role)
        what = f"the {role} ({word} {column!r}) is empty"
        problems += table.row_problems(
            np.flatnonzero(empty_mask(frame[column])),
            f"empty_{role}",
            partial(_labelled, what),
            f"where {what}",
            column,
        )
    if mapping.id is None:
        return problems
    ids = ids if isinstance(ids, pd.Series) else pd.Series(ids, dtype=object)
    empty = np.flatnonzero(empty_mask(ids))
    what = f"the id ({word} {mapping.id!r}) is empty"
    problems += table.row_problems(
        empty, "empty_id", lambda label: f"{label}: {what}", f"where {what}", mapping.id
    )
    problems += _duplicate_ids(table, ids, empty, mapping.id)
    return problems


def _nul_problems(
    table: Table, mapping: ColumnMapping, columns: MappedColumns
) -> list[ImportProblem]:
    word = table.field_word
    problems = [
        problem(
            "nul_character",
            f"The {word} name {name!r} holds a NUL character (\\x00), which the database "
            "cannot store",
            column=name,
        )
        for name in table.columns
        if NUL in name
    ]
    named: list[tuple[str, str | None, Column]] = [
        ("id", mapping.id, columns.ids),
        ("input", mapping.input, columns.inputs),
        ("output", mapping.output, columns.outputs),
        ("ground truth", mapping.ground_truth, columns.truths),
        *(("metadata", name, column) for name, column in columns.metadata.items()),
    ]
    for role, name, column in named:
        if name is None:
            continue
        what = f"the {role} ({word} {name!r}) holds a NUL character (\\x00)"
        problems += table.row_problems(
            _nul_rows(column),
            "nul_character",
            partial(_labelled, f"{what}, which the database cannot store"),
            f"where {what}",
            name,
        )
    return problems


def _nul_rows(column: Column) -> np.ndarray:
    """The 0-based rows whose value holds a NUL character anywhere."""
    chunked = text_chunks(column) if isinstance(column, pd.Series) else None
    if chunked is not None:
        import pyarrow.compute as pc

        found = pc.fill_null(pc.match_substring(chunked, NUL), False)
        return np.flatnonzero(found.to_numpy(zero_copy_only=False))
    return np.array([n for n, value in enumerate(column) if holds_nul(value)], dtype=np.int64)


_SORT_FROM_ROWS = 500_000
"""Above this many ids, distinctness is checked by sorting (8 bytes per id, a little slower)
rather than hashing (about 65 bytes per id, and the distinct ids again)."""


def _all_distinct(ids: pd.Series) -> bool:
    """A quick pyarrow check before the slower search for the repeated ids."""
    chunked = arrow_text(ids)
    if chunked is None:
        return False
    import pyarrow.compute as pc

    if len(chunked) <= _SORT_FROM_ROWS:
        return len(pc.unique(chunked)) == len(ids)
    order = pc.sort_indices(chunked)
    step = 65_536
    for start in range(0, len(order) - 1, step):  # neighbours in order, a slice at a time
        ordered = chunked.take(order[start : start + step + 1])
        if pc.any(pc.equal(ordered[1:], ordered[:-1])).as_py():
            return False
    return True


def _duplicate_ids(
    table: Table, ids: pd.Series, empty: np.ndarray, column: str
) -> list[ImportProblem]:
    if _all_distinct(ids):
        return []
    duplicated = ids.duplicated(keep=False).to_numpy(dtype=bool, copy=True)
    duplicated[empty] = False
    if not duplicated.any():
        return []
    groups = pd.Series(np.flatnonzero(duplicated)).groupby(ids[duplicated].to_numpy(), sort=False)
    problems = []
    for value, rows in groups:
        places = join([table.label(int(r)).lower() for r in rows.tolist()[:10]], len(rows))
        problems.append(
            problem(
                "duplicate_id",
                f"Duplicate id {value!r} ({table.field_word} {column!r}) in {places}",
                row=table.row_number(int(rows.iloc[0])),
                column=column,
            )
        )
    return capped(problems, "duplicate_id", "more ids appear more than once")
