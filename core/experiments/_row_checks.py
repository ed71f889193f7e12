"""The per-row checks of a mapped table: empty inputs, outputs and ids, and repeated ids."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.experiment_records import ColumnMapping, ImportProblem
from core.experiments._dataset_table import _capped, _join, _listed, _problem, _Table
from core.experiments._dataset_values import Column, _arrow_text, _empty_mask


def _check_rows(table: _Table, mapping: ColumnMapping, ids: Column) -> list[ImportProblem]:
    """The per-row problems: empty input/output/id, duplicate ids."""
    frame, word = table.frame, table.field_word
    problems: list[ImportProblem] = []
    for role in ("input", "output"):
        column = getattr(mapping, role)
        rows = np.flatnonzero(_empty_mask(frame[column]))
        problems += _listed(
            table,
            rows,
            f"empty_{role}",
            lambda label, r=role, c=column: f"{label}: the {r} ({word} {c!r}) is empty",
            lambda n, r=role, c=column: f"the {r} ({word} {c!r}) is empty",
            column,
        )
    if mapping.id is None:
        return problems
    ids = ids if isinstance(ids, pd.Series) else pd.Series(ids, dtype=object)
    empty = np.flatnonzero(_empty_mask(ids))
    problems += _listed(
        table,
        empty,
        "empty_id",
        lambda label: f"{label}: the id ({word} {mapping.id!r}) is empty",
        lambda n: f"the id ({word} {mapping.id!r}) is empty",
        mapping.id,
    )
    problems += _duplicate_ids(table, ids, empty, mapping.id)
    return problems


def _all_distinct(ids: pd.Series) -> bool:
    """A quick hash-based check (pyarrow) before the slower search for the repeated ids."""
    chunked = _arrow_text(ids)
    if chunked is None:
        return False
    import pyarrow.compute as pc

    return len(pc.unique(chunked)) == len(ids)


def _duplicate_ids(
    table: _Table, ids: pd.Series, empty: np.ndarray, column: str
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
        places = _join([table.label(int(r)).lower() for r in rows.tolist()[:10]], len(rows))
        problems.append(
            _problem(
                "duplicate_id",
                f"Duplicate id {value!r} ({table.field_word} {column!r}) in {places}",
                row=table.row_number(int(rows.iloc[0])),
                column=column,
            )
        )
    return _capped(problems, "duplicate_id", "more ids appear more than once")
