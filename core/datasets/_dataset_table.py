"""A dataset file once parsed (`Table`): its columns, how its rows are named in problems, the
problems found while parsing, the preview, and blank rows (shared by the readers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.datasets._cell_values import arrow_text, chunkwise, plain
from core.datasets._import_problems import MAX_LISTED_PER_KIND, problem
from core.records import ImportProblem

PREVIEW_ROWS = 20


@dataclass(frozen=True, eq=False)
class Table:
    """A parsed file: one Series of values per column, and how to name each row.

    Never changed once made: a mapping reads it (`core.datasets._mapped_columns`), so one
    parse serves the preview of any mapping and the import.
    """

    columns: tuple[str, ...]
    """Column names in file order (for JSON, the objects' keys in order of first appearance)."""
    frame: pd.DataFrame
    """The values, one column per name. CSV text stays in pyarrow: no Python object per cell."""
    label: Callable[[int], str]
    """0-based row index -> "Row 3", "Line 5", "Item 2"..."""
    row_number: Callable[[int], int]
    """0-based row index -> the `row` of an ImportProblem."""
    field_word: str = "column"
    """What the file calls a column in messages: "column", or "key" for JSON."""
    problems: tuple[ImportProblem, ...] = ()
    """Parse problems (malformed rows): they stop the import before any mapping is checked."""
    may_hold_nul: bool = True
    """False when the reader knows no value holds a NUL character (the file has none), so the
    row checks need not look for one."""

    @property
    def row_count(self) -> int:
        return len(self.frame)

    def row_problems(
        self,
        rows: np.ndarray,
        code: str,
        message: Callable[[str], str],
        rest: str,
        column: str | None = None,
    ) -> list[ImportProblem]:
        """One problem per row (`message(label)`) for the first few of `rows` (0-based), then
        one saying "<n> more rows <rest>"."""
        problems = [
            problem(code, message(self.label(int(r))), row=self.row_number(int(r)), column=column)
            for r in rows[:MAX_LISTED_PER_KIND]
        ]
        if len(rows) > MAX_LISTED_PER_KIND:
            more = len(rows) - MAX_LISTED_PER_KIND
            problems.append(problem(code, f"{more:,} more rows {rest}", column=column))
        return problems

    def preview(self) -> list[dict[str, Any]]:
        """The first rows as plain values (column name -> value)."""
        head = self.frame.head(PREVIEW_ROWS)
        names = [str(c) for c in head.columns]
        return [
            dict(zip(names, (plain(v) for v in row), strict=True))
            for row in head.itertuples(index=False, name=None)
        ]


def blank_rows(frame: pd.DataFrame) -> np.ndarray:
    """True for rows whose every field is missing or empty text (a blank line reads as either,
    depending on the number of columns)."""
    if frame.empty:
        return np.zeros(len(frame), dtype=bool)
    texts = [arrow_text(frame.iloc[:, n]) for n in range(frame.shape[1])]
    if all(t is not None for t in texts):
        # Text without nulls (every CSV): a field is blank when it has no bytes.
        import pyarrow.compute as pc

        blank = np.ones(len(frame), dtype=bool)
        for chunked in texts:
            # pyarrow compares with a Python int; its stubs want a pyarrow Scalar (the ignore).
            blank &= chunkwise(
                chunked,
                lambda chunk: pc.equal(pc.binary_length(chunk), 0),  # type: ignore[call-overload]
            )
            if not blank.any():  # the usual case: decided by the first column
                break
        return blank
    return (frame.isna() | (frame == "")).all(axis=1).to_numpy(dtype=bool)


def drop_trailing_blank_rows(frame: pd.DataFrame, blank: np.ndarray | None = None) -> pd.DataFrame:
    """Blank lines at the end of a file are not data. `blank`: `blank_rows(frame)`, when
    already known."""
    blank = blank_rows(frame) if blank is None else blank
    if not len(blank) or not blank[-1]:
        return frame
    keep = len(blank) - int(np.argmin(blank[::-1])) if not blank.all() else 0
    return frame.iloc[:keep]
