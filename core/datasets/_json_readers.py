"""JSONL and JSON files (an array of objects): one row per object, one column per key.

Both are read one object at a time, into compact columns (`ColumnsBuilder`): the rows, a value's
size and nesting are checked as they are read, so neither a long file nor a deep value is ever
parsed whole into Python objects (docs/datasets.md, "Limits").
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable
from typing import Any

import pandas as pd

from core.datasets._dataset_table import Table
from core.datasets._file_text import decode, utf8_bytes
from core.datasets._import_problems import MAX_LISTED_PER_KIND, Unreadable, problem
from core.datasets._limits import DEFAULT_LIMITS, INT_DIGITS, ImportLimits, size_text
from core.datasets._row_columns import ColumnsBuilder
from core.datasets._value_checks import might_exceed, nested_deeper_than, text_bytes
from core.records import ImportProblem

_NUL_ESCAPE = b"\\u0000"
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _NonFinite:
    """What `NaN`, `Infinity` or `-Infinity` parse to (standard JSON has none of them): a
    marker the object hook finds and reports, then replaces by None."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def read_jsonl(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Table:
    """One object per line; blank lines are skipped, and rows are named by their line."""
    raw = utf8_bytes(data)
    shift = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # positions count the byte-order mark
    rows = _Rows(limits, "line", "more lines are malformed")
    start, number = 0, 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        number += 1
        line = raw[start:end]
        text = _line_text(line, start + shift, number)
        start = end + 1
        if not text.strip():
            continue
        rows.add(text, number, len(line))
    if not rows.count and not rows.problems:
        raise Unreadable("empty_file", "The file is empty")
    lines = rows.numbers
    return rows.table(lambda i: f"Line {lines[i]}", lambda i: lines[i], _NUL_ESCAPE in raw)


def read_json(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Table:
    """An array of objects; rows are named "Item <n>"."""
    text = decode(data)
    index = _skip(text, 0)
    if index == len(text):
        raise Unreadable("empty_file", "The file is empty")
    if text[index] != "[":
        raise _not_an_array(text)
    rows = _Rows(limits, "item", "more items are not objects")
    index = _skip(text, index + 1)
    if index < len(text) and text[index] == "]":
        index += 1
    else:
        while True:
            start = index
            index = rows.add_from(text, start, rows.count + 1)
            index = _skip(text, index)
            if index < len(text) and text[index] == ",":
                index = _skip(text, index + 1)
                continue
            if index < len(text) and text[index] == "]":
                index += 1
                break
            raise _malformed(json.JSONDecodeError("Expecting ',' delimiter", text, index))
    index = _skip(text, index)
    if index != len(text):
        raise _malformed(json.JSONDecodeError("Extra data", text, index))
    if rows.problems:
        rows.discard()  # an array with a non-object is not read at all
    return rows.table(lambda i: f"Item {i + 1}", lambda i: i + 1, _NUL_ESCAPE in data)


class _Rows:
    """The objects read so far (as columns), their line numbers and the problems found."""

    def __init__(self, limits: ImportLimits, word: str, rest: str) -> None:
        self.limits = limits
        self.word = word
        self.rest = rest
        self.count = 0
        self.numbers = array("q")
        self._columns = ColumnsBuilder[str]()
        self._problems: list[ImportProblem] = []
        self._more = 0
        # What the decoder's hooks found in the object being read: (code, key, constant).
        self._found: list[tuple[str, str, str]] = []
        self._constants = 0  # NaN/Infinity markers made and not yet found by an object hook
        self._decoder = json.JSONDecoder(
            object_pairs_hook=self._object, parse_constant=self._constant
        )

    def _constant(self, name: str) -> _NonFinite:
        self._constants += 1
        return _NonFinite(name)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An object as json builds it, noting a key that appears twice and a NaN/Infinity
        value (in the object or in an array it holds) for the row's problems."""
        value = dict(pairs)
        if len(value) != len(pairs):
            seen: set[str] = set()
            reported: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in reported:
                    count = sum(1 for k, _ in pairs if k == key)
                    self._found.append(("duplicate_key", key, str(count)))
                    reported.add(key)
                seen.add(key)
        if self._constants:
            for key, cell in pairs:
                if type(cell) is _NonFinite:
                    self._found.append(("non_finite_number", key, cell.name))
                    self._constants -= 1
                    value[key] = None
                elif type(cell) is list:
                    self._find_in_list(key, cell)
        return value

    def _find_in_list(self, key: str, cells: list[Any]) -> None:
        for index, cell in enumerate(cells):
            if type(cell) is _NonFinite:
                self._found.append(("non_finite_number", key, cell.name))
                self._constants -= 1
                cells[index] = None
            elif type(cell) is list:
                self._find_in_list(key, cell)

    def _report_found(self, where: Callable[[], str], number: int) -> None:
        """The problems the hooks found in the row just read."""
        for code, key, detail in self._found:
            if code == "duplicate_key":
                message = (
                    f"{where()}: key {key!r} appears {detail} times in one object "
                    "(only one value can be kept)"
                )
            else:
                message = (
                    f"{where()}: the value of key {key!r} is {detail}, which is not a JSON number"
                )
            self._problem(code, message, number)
        self._found.clear()
        self._constants = 0

    @property
    def problems(self) -> list[ImportProblem]:
        if not self._more:
            return list(self._problems)
        return [*self._problems, problem("malformed_row", f"{self._more:,} {self.rest}")]

    def add(self, text: str, number: int, size: int) -> None:
        """Line `number` of JSON Lines (`size` bytes): its object, or the problem it has."""
        label = f"Line {number}"
        self._count_row(label)
        try:
            value = self._decoder.decode(text)
        except json.JSONDecodeError as error:
            message = f"{label}: not valid JSON ({error.msg} at column {error.colno})"
            self._problem("malformed_row", message, number)
            return
        except RecursionError:
            self._problem("too_deeply_nested", self._too_deep(label), number)
            return
        except ValueError as error:  # an integer longer than Python reads
            self._problem("number_too_long", _long_number(label, error), number)
            return
        if self._found or self._constants:
            self._report_found(lambda: label, number)
        self._take(value, lambda: label, number, size)

    def add_from(self, text: str, start: int, item: int) -> int:
        """The array's next element, which starts at `start`; returns where it ends."""
        label = f"Item {item}"
        self._count_row(label)
        try:
            value, end = self._decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            raise _malformed(error) from None
        except RecursionError:
            # Where the element ends is unknown: the file cannot be read further.
            raise Unreadable("too_deeply_nested", self._too_deep(_at(label, text, start))) from None
        except ValueError as error:
            raise Unreadable(
                "number_too_long", _long_number(_at(label, text, start), error)
            ) from None
        if self._found or self._constants:
            self._report_found(lambda: _at(label, text, start), item)
        # Each character of JSON text stands for at most 4 bytes of the values it holds.
        self._take(value, lambda: _at(label, text, start), item, 4 * (end - start))
        return end

    def _count_row(self, label: str) -> None:
        self.count += 1
        if self.count > self.limits.rows:
            raise Unreadable(
                "too_many_rows",
                f"The file has more than {self.limits.rows:,} rows, over the row limit "
                f"({label.lower()} is row {self.count:,}); split it into smaller files",
            )

    def _take(self, value: Any, where: Callable[[], str], number: int, most_bytes: int) -> None:
        """Keep an object read (`where()`: its label, worked out only for a problem;
        `most_bytes`: a bound on the UTF-8 bytes of its values)."""
        if not isinstance(value, dict):
            found = json_kind(value)
            expected = "a JSON object" if self.word == "line" else "an object"
            message = f"{where()}: expected {expected}, found {found}"
            self._problem("malformed_row", message, number)
            return
        for key, cell in value.items():
            if nested_deeper_than(cell, self.limits.nesting):
                self._problem("too_deeply_nested", self._too_deep(where(), key), number)
                value[key] = None
            # No value can be over the cell limit when the whole object is not.
            elif most_bytes > self.limits.cell_bytes and might_exceed(cell, self.limits.cell_bytes):
                size = text_bytes(cell)
                if size > self.limits.cell_bytes:
                    message = (
                        f"{where()}: the value of key {key!r} is {size_text(size)}, over the cell "
                        f"limit of {size_text(self.limits.cell_bytes)}"
                    )
                    self._problem("cell_too_large", message, number)
                    value[key] = None
        self._columns.add(value)
        self.numbers.append(number)

    def _too_deep(self, label: str, key: str | None = None) -> str:
        what = f"the value of key {key!r}" if key is not None else "the object"
        return f"{label}: {what} is nested deeper than the limit of {self.limits.nesting} levels"

    def _problem(self, code: str, message: str, row: int) -> None:
        if len(self._problems) < MAX_LISTED_PER_KIND:
            self._problems.append(problem(code, message, row=row))
        else:
            self._more += 1

    def discard(self) -> None:
        self._columns = ColumnsBuilder[str]()
        self.numbers = array("q")

    def table(
        self, label: Callable[[int], str], row_number: Callable[[int], int], nul: bool
    ) -> Table:
        """The table of every object read (the keys in order of first appearance)."""
        keys, series = self._columns.finish()
        names = [str(key) for key in keys]
        frame = pd.DataFrame({str(k): series[k] for k in keys}, columns=names)
        return Table(
            tuple(names),
            frame,
            label,
            row_number,
            field_word="key",
            problems=tuple(self.problems),
            may_hold_nul=nul,
        )


def _line_text(line: bytes, position: int, number: int) -> str:
    """A line's text; `position`: where it starts in the file, for the message."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = line[error.start : error.start + 1].hex().upper()
        raise Unreadable(
            "bad_encoding",
            f"The file is not valid UTF-8: byte 0x{byte} at position {position + error.start:,} "
            f"(line {number}) cannot be decoded; save the file as UTF-8",
        ) from error


def _skip(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


def _at(label: str, text: str, position: int) -> str:
    """`Item 3 (line 12)`: an element of a JSON array and the line it starts on."""
    return f"{label} (line {text.count(chr(10), 0, position) + 1})"


def _malformed(error: json.JSONDecodeError) -> Unreadable:
    return Unreadable(
        "malformed_file",
        f"The file is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
    )


def _not_an_array(text: str) -> Unreadable:
    """What a JSON file that is no array holds (or why it is no JSON at all)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return _malformed(error)
    except RecursionError:
        return Unreadable(
            "not_an_array",
            "The JSON file must hold an array of objects, but it holds a value nested too deeply "
            "to read",
        )
    except ValueError as error:
        return Unreadable("number_too_long", _long_number("The file", error))
    return Unreadable(
        "not_an_array",
        f"The JSON file must hold an array of objects, but it holds {json_kind(value)}",
    )


def _long_number(label: str, error: ValueError) -> str:
    digits = re.search(r"value has (\d+) digits", str(error))
    found = f"{int(digits.group(1)):,} digits" if digits else "too many digits"
    return f"{label}: a number has {found}, over the limit of {INT_DIGITS:,} that can be read"


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: "an object", "a string", "null"..."""
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, _NonFinite):
        return value.name
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return kinds.get(type(value), type(value).__name__)
