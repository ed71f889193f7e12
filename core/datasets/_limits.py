"""The limits of a dataset import, in one place (docs/datasets.md, "Limits"), and how sizes are
worded in the problems that name them.

Each limit is checked while the file is read, before the work it guards: the size on the bytes
given; the rows and the decompressed size of a Parquet file from its metadata, then row group
by row group; those of a workbook from its zip directory, then row by row; those of a text file
as it is parsed.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportLimits:
    """What a file may hold. The defaults are `DEFAULT_LIMITS`; tests pass smaller ones."""

    file_bytes: int = 200 * MB
    """The file as given (compressed, for a workbook or a Parquet file)."""
    rows: int = 2_000_000
    """Data rows (lines of a JSON Lines file, objects of a JSON array)."""
    decompressed_bytes: int = 1024 * MB
    """What a workbook unzips to, or the values of a Parquet file once decoded."""
    cell_bytes: int = 10 * MB
    """One value, as UTF-8 text (a nested JSON value: its JSON text)."""
    nesting: int = 100
    """Levels of lists and objects inside one JSON value."""


DEFAULT_LIMITS = ImportLimits()

INT_DIGITS = 4300
"""Python's own limit on the digits of an integer read from text (`sys.int_info`): a longer
number in a JSON file is refused, naming its line."""


def size_text(n: int) -> str:
    """A byte count in words: `512 bytes`, `2.4 KB`, `10 MB`, `1 GB`."""
    if n < 1024:
        return f"{n} bytes"
    for unit, power in (("GB", 3), ("MB", 2), ("KB", 1)):
        if n >= 1024**power:
            return f"{n / 1024**power:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"
