"""Text from the data as the terminal may show it."""

from __future__ import annotations

from datetime import datetime

__all__ = ["printable", "when"]


def printable(text: object) -> str:
    """`text` with every control or invisible formatting character shown as an escape (`\\x1b`),
    so what comes from a data file cannot move the cursor, recolour or retitle the terminal."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(c if c.isprintable() else _escape(c) for c in value)


def _escape(character: str) -> str:
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def when(moment: datetime | None) -> str:
    """A stored time (UTC) to the second, `-` when there is none."""
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")
