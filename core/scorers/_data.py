"""Reading the data files shipped in `core/scorers/data/` (see data/NOTICE.md for origins)."""

from __future__ import annotations

from importlib import resources

__all__ = ["data_lines"]


def data_lines(name: str) -> list[str]:
    """The non-empty, non-comment lines of a shipped data file, without their line ends.

    Only a `#` in the first column starts a comment, so a data line may hold a `#`
    (for example the emoji `#️⃣`), and leading spaces are kept.
    """
    text = (
        resources.files("core.scorers").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    )
    return [line for line in text.splitlines() if line and not line.startswith("#")]
