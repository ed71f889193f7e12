"""Progress bars on stderr for the command's long work (reading and storing a file, the runs,
the exports): what is done of how much, the rate, the time spent and the time left.

Drawn by `rich` (docs/architecture.md, the CLI), only when stderr is a terminal and
`--no-progress` is not given: a log or a pipe gets none. The bar never shows text from the data
(only counts and the command's own words), and a note is shown as given (no markup).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["Bar", "bars_wanted"]


def bars_wanted(no_progress: bool) -> bool:
    """True when a bar may be drawn: not turned off, and stderr is a terminal."""
    return not no_progress and sys.stderr.isatty()


class Bar:
    """One piece of work on one line of stderr, redrawn in place; nothing at all when `show`
    is false. `unit` "bytes" shows sizes and a transfer rate, any other word a count of those
    units and their rate, both with the time left; no `unit` (work whose size is not known, such
    as parsing a file) a moving bar and the time spent."""

    def __init__(
        self, description: str, *, total: float | None = None, unit: str | None, show: bool
    ) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if not show:
            return
        from core.cli._rich_bar import progress  # rich only when a bar is drawn

        self._progress = progress(unit)
        self._task = self._progress.add_task(description, total=total, note="")
        self._progress.start()

    def update(self, completed: float, *, total: float | None = None, note: str = "") -> None:
        """Show `completed` (of `total`, when it changed) and the note after the bar."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=completed, total=total, note=note)

    def close(self) -> None:
        """Leave the bar as it is on its line; what is printed next goes under it."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> Bar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
