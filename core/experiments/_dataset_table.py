"""A dataset file once parsed (`_Table`), and its problems named with their place: one per row
for the first few rows, then one that counts the rest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.experiment_records import ImportProblem

MAX_LISTED_PER_KIND = 20
"""Problems of one kind listed one by one; the rest are summed up in one more problem."""


class _Unreadable(Exception):
    """The file cannot be read at all; carries the one problem to report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.problem = ImportProblem(code=code, message=message)


@dataclass
class _Table:
    """A parsed file: one list or Series of values per column, and how to name each row."""

    columns: list[str]
    frame: pd.DataFrame
    label: Callable[[int], str]
    """0-based row index -> "Row 3", "Line 5", "Item 2"..."""
    row_number: Callable[[int], int]
    """0-based row index -> the `row` of an ImportProblem."""
    field_word: str = "column"
    problems: list[ImportProblem] = field(default_factory=list)
    """Parse problems (malformed rows): they stop the import before per-row checks."""


def _listed(
    table: _Table,
    rows: np.ndarray,
    code: str,
    one: Callable[[str], str],
    rest: Callable[[int], str],
    column: str,
) -> list[ImportProblem]:
    """One problem per row for the first few rows, then one that counts the others."""
    problems = [
        _problem(code, one(table.label(int(r))), row=table.row_number(int(r)), column=column)
        for r in rows[:MAX_LISTED_PER_KIND]
    ]
    if len(rows) > MAX_LISTED_PER_KIND:
        more = len(rows) - MAX_LISTED_PER_KIND
        problems.append(_problem(code, f"{more:,} more rows where {rest(more)}", column=column))
    return problems


def _capped(problems: list[ImportProblem], code: str, rest: str) -> list[ImportProblem]:
    if len(problems) <= MAX_LISTED_PER_KIND:
        return problems
    more = len(problems) - MAX_LISTED_PER_KIND
    return [*problems[:MAX_LISTED_PER_KIND], _problem(code, f"{more:,} {rest}")]


def _listed_rows(
    table: _Table, rows: np.ndarray, code: str, template: str, rest: str
) -> list[ImportProblem]:
    problems = [
        _problem(code, template.format(label=table.label(int(r))), row=table.row_number(int(r)))
        for r in rows[:MAX_LISTED_PER_KIND]
    ]
    if len(rows) > MAX_LISTED_PER_KIND:
        more = len(rows) - MAX_LISTED_PER_KIND
        problems.append(_problem(code, f"{more:,} more rows {rest}"))
    return problems


def _problem(
    code: str, message: str, *, row: int | None = None, column: str | None = None
) -> ImportProblem:
    return ImportProblem(code=code, message=message, row=row, column=column)


def _join(parts: list[str], total: int) -> str:
    if total > len(parts):
        return f"{', '.join(parts)} and {total - len(parts)} more"
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
