"""Excel workbooks (.xlsx, the first sheet) and Parquet files, through pandas."""

from __future__ import annotations

import io

import pandas as pd

from core.experiments._dataset_table import Table, drop_trailing_blank_rows
from core.experiments._import_problems import Unreadable


def read_xlsx(data: bytes) -> Table:
    """The first sheet; its first row is the header, so data row n is sheet row n + 1."""
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=0, dtype=object, engine="openpyxl")
    except ImportError as error:  # openpyxl is a declared dependency; say so if it is missing
        raise Unreadable(
            "unsupported_format", f"Reading .xlsx files needs openpyxl: {error}"
        ) from error
    except Exception as error:  # openpyxl raises many kinds for a corrupt workbook
        raise Unreadable(
            "unreadable_file", f"The file is not a readable .xlsx workbook ({_error_text(error)})"
        ) from error
    frame = drop_trailing_blank_rows(frame)
    frame.columns = [str(c) for c in frame.columns]
    return Table(
        columns=tuple(frame.columns),
        frame=frame.astype(object),
        label=lambda i: f"Row {i + 1} (sheet row {i + 2})",
        row_number=lambda i: i + 1,
    )


def read_parquet(data: bytes) -> Table:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except ImportError as error:
        raise Unreadable(
            "unsupported_format", f"Reading Parquet files needs pyarrow: {error}"
        ) from error
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
        raise Unreadable(
            "unreadable_file", f"The file is not a readable Parquet file ({_error_text(error)})"
        ) from error
    frame.columns = [str(c) for c in frame.columns]
    return Table(
        columns=tuple(frame.columns),
        frame=frame.astype(object),
        label=lambda i: f"Row {i + 1}",
        row_number=lambda i: i + 1,
    )


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
