"""`scorelab export EXPERIMENT_ID --json PATH --csv PATH --html PATH`: the files of a stored
experiment, written as `scorelab run` writes them (whole or not at all, every key masked, with
a progress bar); `-` writes one of them to stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli._errors import CliError
from core.cli._options import add_progress_option
from core.cli._progress import bars_wanted
from core.cli.outputs import (
    STDOUT,
    Export,
    ReportSource,
    csv_export,
    html_pages_export,
    json_export,
    write_export,
)

if TYPE_CHECKING:
    from core.cli._options import Commands
    from core.records import ExperimentInfo

__all__ = ["register"]


def register(commands: Commands) -> None:
    """Add `export`."""
    export = commands.add_parser(
        "export",
        help="write a stored experiment's results as JSON, CSV or an HTML report",
        description="Write the files `scorelab run --json/--csv/--html` writes, for an "
        "experiment already in the database (ids: `scorelab experiments`). Failed runs are "
        "only in the files of the process that ran the experiment.",
    )
    export.add_argument("experiment_id", metavar="EXPERIMENT_ID", help="the experiment's id")
    for option, what in (
        ("json", "results as JSON"),
        ("csv", "results as CSV"),
        ("html", "an HTML report"),
    ):
        export.add_argument(
            f"--{option}", type=Path, metavar="PATH", help=f"write {what} (- for stdout)"
        )
    add_progress_option(export)
    export.set_defaults(handler=_export)


def _export(arguments: argparse.Namespace) -> int:
    paths: dict[str, Path | None] = {
        "json": arguments.json,
        "csv": arguments.csv,
        "html": arguments.html,
    }
    chosen = {kind: path for kind, path in paths.items() if path is not None}
    if not chosen:
        raise CliError("nothing to write: give --json PATH, --csv PATH or --html PATH")
    to_stdout = [f"--{kind}" for kind, path in chosen.items() if path == STDOUT]
    if len(to_stdout) > 1:
        raise CliError(f"{' and '.join(to_stdout)} -: only one file can go to stdout")
    experiment_id: str = arguments.experiment_id
    show = bars_wanted(arguments.no_progress)
    from core.service.export_source import quick_export_source

    quick = quick_export_source(arguments.database_url, experiment_id)  # through the driver
    if quick is not None:
        try:
            info = quick.get_experiment(experiment_id)
            _warn_unfinished(info)
            exports = _exports(quick, info, None)
            for kind, path in chosen.items():
                write_export(path, exports[kind](), show=show)
        finally:
            quick.close()
        return 0
    from core.service import NotFoundError, Service

    service = Service(arguments.database_url)
    try:
        info = service.get_experiment(experiment_id)
    except NotFoundError:
        raise CliError(
            f"no experiment {experiment_id!r} in the database (ids: scorelab experiments)"
        ) from None
    _warn_unfinished(info)
    thresholds = service.pass_fail(experiment_id).json() or None
    exports = _exports(service, info, thresholds)
    for kind, path in chosen.items():
        write_export(path, exports[kind](), show=show)
    return 0


def _warn_unfinished(info: ExperimentInfo) -> None:
    if info.status not in ("completed", "failed"):
        print(
            f"scorelab: warning: experiment {info.id} is {info.status}: the files hold "
            "the results stored so far",
            file=sys.stderr,
        )


def _exports(
    source: ReportSource, info: ExperimentInfo, thresholds: list[dict[str, object]] | None
) -> dict[str, Callable[[], Export]]:
    """The exports, each read a page of items at a time (thresholds: the results of those
    kept with the experiment)."""
    return {
        "json": lambda: json_export(
            source, info.id, total_items=info.total_items, thresholds=thresholds
        ),
        "csv": lambda: csv_export(source, info.id, total_items=info.total_items),
        "html": lambda: html_pages_export(source, info, thresholds=thresholds),
    }
