"""The drawing of a progress bar by `rich` (core/cli/_progress.py), imported only when a bar is
shown: a command whose stderr is not a terminal, or run with `--no-progress`, never loads rich
(it is a tenth of the start-up of `scorelab experiments`; bench/cli_startup.py)."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

__all__ = ["progress"]


class _Rate(ProgressColumn):
    """Units done per second, e.g. `12.5 runs/s` (`? runs/s` until something is done)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        shown = "?" if speed is None else f"{speed:,.1f}"
        return Text(f"{shown} {self.unit}/s", style="progress.data.speed")


def _columns(unit: str | None) -> list[ProgressColumn]:
    if unit is None:
        return [TimeElapsedColumn()]
    amount: list[ProgressColumn] = (
        [DownloadColumn(), TransferSpeedColumn()]
        if unit == "bytes"
        else [MofNCompleteColumn(), _Rate(unit)]
    )
    return [
        *amount,
        TimeElapsedColumn(),
        TextColumn("ETA", style="progress.remaining"),
        TimeRemainingColumn(),
    ]


def progress(unit: str | None) -> Progress:
    """A `rich` progress display on stderr with the columns for `unit` (see `Bar`)."""
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        *_columns(unit),
        TextColumn("{task.fields[note]}", markup=False),
        console=Console(file=sys.stderr),
        redirect_stdout=False,
        redirect_stderr=False,
    )
