"""JSONL and JSON files (an array of objects): one row per object, one column per key."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from core.experiment_records import ImportProblem
from core.experiments._dataset_table import Table
from core.experiments._file_text import decode
from core.experiments._import_problems import Unreadable, capped, problem


def read_jsonl(data: bytes) -> Table:
    """One object per line; blank lines are skipped, and rows are named by their line."""
    text = decode(data)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    problems: list[ImportProblem] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(
                problem(
                    "malformed_row",
                    f"Line {number}: not valid JSON ({error.msg} at column {error.colno})",
                    row=number,
                )
            )
            continue
        if not isinstance(value, dict):
            problems.append(
                problem(
                    "malformed_row",
                    f"Line {number}: expected a JSON object, found {json_kind(value)}",
                    row=number,
                )
            )
            continue
        rows.append(value)
        lines.append(number)
    if not rows and not problems:
        raise Unreadable("empty_file", "The file is empty")
    return _records_table(
        rows,
        lambda i: f"Line {lines[i]}",
        lambda i: lines[i],
        capped(problems, "malformed_row", "more lines are malformed"),
    )


def read_json(data: bytes) -> Table:
    """An array of objects; rows are named "Item <n>"."""
    text = decode(data)
    if not text.strip():
        raise Unreadable("empty_file", "The file is empty")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise Unreadable(
            "malformed_file",
            f"The file is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
        ) from error
    if not isinstance(value, list):
        raise Unreadable(
            "not_an_array",
            f"The JSON file must hold an array of objects, but it holds {json_kind(value)}",
        )
    problems = [
        problem("malformed_row", f"Item {n}: expected an object, found {json_kind(entry)}", row=n)
        for n, entry in enumerate(value, start=1)
        if not isinstance(entry, dict)
    ]
    if problems:
        value = []
    return _records_table(
        value,
        lambda i: f"Item {i + 1}",
        lambda i: i + 1,
        capped(problems, "malformed_row", "more items are not objects"),
    )


def _records_table(
    rows: list[dict[str, Any]],
    label: Callable[[int], str],
    row_number: Callable[[int], int],
    problems: list[ImportProblem],
) -> Table:
    """A table from JSON objects: the columns are every key, in order of first appearance."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    frame = pd.DataFrame(
        {c: pd.Series([row.get(c) for row in rows], dtype=object) for c in columns},
        columns=columns,
    )
    return Table(
        tuple(columns), frame, label, row_number, field_word="key", problems=tuple(problems)
    )


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: "an object", "a string", "null"..."""
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return kinds.get(type(value), type(value).__name__)
