"""`scorelab experiments [--json]`: every experiment in the database, newest first, as an
aligned table (text from the data with its control characters escaped) or as JSON (a list of
camelCase objects, like the exports)."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import TYPE_CHECKING

from core.cli._text import printable, when
from core.records import ExperimentListing

if TYPE_CHECKING:
    from core.cli._options import Commands

__all__ = ["COLUMNS", "register", "row_json"]

COLUMNS = ("id", "name", "dataset", "status", "items", "succeeded", "failed", "started", "finished")
"""The table's columns, in order."""

_NUMBERS = {"items", "succeeded", "failed"}
"""Columns aligned to the right."""


def register(commands: Commands) -> None:
    """Add `experiments`."""
    experiments = commands.add_parser(
        "experiments",
        help="list the experiments (id, name, dataset, status, counts, times)",
        description="Every experiment in the database, newest first. Its id is what "
        "`scorelab export` takes.",
    )
    experiments.add_argument(
        "--json", action="store_true", help="print them as a JSON list (camelCase keys)"
    )
    experiments.set_defaults(handler=_experiments)


def _experiments(arguments: argparse.Namespace) -> int:
    from core.service.listing import experiment_listing, masked_listing

    infos = experiment_listing(arguments.database_url)  # read directly when it can be
    if arguments.json:
        text = json.dumps([row_json(info) for info in infos], ensure_ascii=False, indent=2)
        print(masked_listing(text))
        return 0
    if not infos:
        print("No experiments yet (`scorelab run` makes one).")
        return 0
    _print_table([_row(info) for info in infos])
    return 0


def row_json(info: ExperimentListing) -> dict[str, object]:
    """One experiment as the JSON list shows it."""
    return {
        "id": info.id,
        "name": info.name,
        "datasetId": info.dataset_id,
        "datasetName": info.dataset_name,
        "status": info.status,
        "items": info.total_items,
        "succeeded": info.succeeded,
        "failed": info.failed,
        "createdAt": _iso(info.created_at),
        "startedAt": _iso(info.started_at),
        "finishedAt": _iso(info.finished_at),
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _row(info: ExperimentListing) -> dict[str, str]:
    return {
        "id": info.id,
        "name": printable(info.name),
        "dataset": printable(info.dataset_name or info.dataset_id),
        "status": info.status,
        "items": f"{info.total_items:,}",
        "succeeded": f"{info.succeeded:,}",
        "failed": f"{info.failed:,}",
        "started": when(info.started_at),
        "finished": when(info.finished_at),
    }


def _print_table(rows: list[dict[str, str]]) -> None:
    widths = {c: max(len(c), *(len(row[c]) for row in rows)) for c in COLUMNS}

    def line(cells: dict[str, str]) -> str:
        return "  ".join(
            cells[c].rjust(widths[c]) if c in _NUMBERS else cells[c].ljust(widths[c])
            for c in COLUMNS
        ).rstrip()

    print(line({c: c for c in COLUMNS}))
    for row in rows:
        print(line(row))
