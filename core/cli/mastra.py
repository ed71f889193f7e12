"""`scorelab mastra import STORE [--json]` and `scorelab mastra export EXPERIMENT_ID STORE`: a
Mastra project's own store (a LibSQL file or a PostgreSQL URL) read into the database, and a
stored experiment written back into it (docs/mastra.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.cli._errors import CliError

if TYPE_CHECKING:
    from core.cli._options import Commands
    from core.service.exchange_desk import MastraStoreSummary

__all__ = ["register"]

_STORE_HELP = "the Mastra store: a LibSQL file (PATH or file:PATH) or a PostgreSQL URL"


def register(commands: Commands) -> None:
    """Add `mastra` with its two subcommands."""
    mastra = commands.add_parser(
        "mastra",
        help="import a Mastra project's store, or write an experiment back into one",
        description="Read the datasets, experiments and scores of a Mastra store "
        "(@mastra/libsql or @mastra/pg) into scorelab, or write a scorelab experiment into it.",
    )
    actions = mastra.add_subparsers(
        dest="mastra_command", metavar="ACTION", parser_class=type(mastra)
    )
    actions.required = True
    importing = actions.add_parser(
        "import",
        help="import a Mastra store's datasets, experiments and live scores",
        description="Import every dataset, experiment and live score of a Mastra store (or "
        "the ones chosen). Importing again adds only what is new.",
    )
    importing.add_argument("store", metavar="STORE", help=_STORE_HELP)
    importing.add_argument(
        "--dataset",
        action="append",
        metavar="MASTRA_ID",
        help="import this Mastra dataset only (repeatable)",
    )
    importing.add_argument(
        "--experiment",
        action="append",
        metavar="MASTRA_ID",
        help="import this Mastra experiment only (repeatable)",
    )
    importing.add_argument("--no-live", action="store_true", help="leave the live scores out")
    importing.add_argument(
        "--list", action="store_true", help="only list what the store holds, import nothing"
    )
    importing.add_argument("--json", action="store_true", help="print the outcome as JSON")
    importing.set_defaults(handler=_import)
    exporting = actions.add_parser(
        "export",
        help="write a stored experiment into a Mastra store",
        description="Write an experiment (ids: `scorelab experiments`) into a Mastra store as "
        "Mastra's dataset (made when missing), experiment, results and scores.",
    )
    exporting.add_argument("experiment_id", metavar="EXPERIMENT_ID", help="the experiment's id")
    exporting.add_argument("store", metavar="STORE", help=_STORE_HELP)
    exporting.add_argument("--json", action="store_true", help="print the outcome as JSON")
    exporting.set_defaults(handler=_export)


def _import(arguments: argparse.Namespace) -> int:
    from core.service import MastraStoreError, Service

    chosen = arguments.dataset is not None or arguments.experiment is not None
    try:
        if arguments.list:
            from core.service.exchange_desk import summarize

            summary = summarize(arguments.store)
            print(summary.model_dump_json(indent=2) if arguments.json else _listing(summary))
            return 0
        service = Service(arguments.database_url)
        outcome = service.import_mastra(
            arguments.store,
            datasets=arguments.dataset if chosen else None,
            experiments=arguments.experiment if chosen else None,
            live=not arguments.no_live and not chosen,
        )
    except MastraStoreError as error:
        raise CliError(str(error)) from None
    if arguments.json:
        print(outcome.model_dump_json(indent=2))
        return 0
    print(
        f"{outcome.location}: {outcome.new_datasets} new datasets, {outcome.new_experiments} "
        f"new experiments, {outcome.new_items} new items, {outcome.new_scores} new scores"
    )
    if outcome.skipped_scores:
        print(f"{outcome.skipped_scores} scores left out (no item, no scorer or no number)")
    if outcome.skipped_columns:
        print(f"columns not imported: {', '.join(outcome.skipped_columns)}")
    for experiment_id in outcome.experiment_ids:
        print(f"experiment {experiment_id}")
    return 0


def _listing(summary: MastraStoreSummary) -> str:
    lines = [f"{summary.location}"]
    for dataset in summary.datasets:
        lines.append(
            f"dataset {dataset.id}  {dataset.name!r} v{dataset.version}: {dataset.item_count} items"
        )
    for experiment in summary.experiments:
        lines.append(
            f"experiment {experiment.id}  {experiment.name!r} ({experiment.status}): "
            f"{experiment.result_count} results, {experiment.score_count} scores "
            f"({', '.join(experiment.scorer_ids) or 'no scorer'})"
        )
    for live in summary.live:
        lines.append(f"live {live.entity_type.lower()} {live.entity_id}: {live.score_count} scores")
    return "\n".join(lines)


def _export(arguments: argparse.Namespace) -> int:
    from core.service import MastraStoreError, NotFoundError, Service

    service = Service(arguments.database_url)
    try:
        outcome = service.export_mastra(arguments.experiment_id, arguments.store)
    except NotFoundError:
        raise CliError(
            f"no experiment {arguments.experiment_id!r} in the database (ids: scorelab experiments)"
        ) from None
    except MastraStoreError as error:
        raise CliError(str(error)) from None
    if arguments.json:
        print(outcome.model_dump_json(indent=2))
    else:
        made = " (dataset created)" if outcome.dataset_created else ""
        print(
            f"{outcome.location}: Mastra experiment {outcome.experiment_id} with "
            f"{outcome.results} results and {outcome.scores} scores{made}"
        )
    return 0
