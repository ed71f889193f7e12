"""`scorelab scorers [--json]`: the scorer catalog, with the options each takes."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

__all__ = ["register"]

if TYPE_CHECKING:
    from core.cli._options import Commands


def register(commands: Commands) -> None:
    """Add `scorers`."""
    scorers = commands.add_parser("scorers", help="list the scorers")
    scorers.add_argument("--json", action="store_true", help="print the catalog as JSON")
    scorers.set_defaults(handler=_scorers)


def _scorers(arguments: argparse.Namespace) -> int:
    from core.service import scorer_catalog

    catalog = scorer_catalog()
    if arguments.json:
        print(json.dumps([entry.model_dump(mode="json") for entry in catalog], indent=2))
        return 0
    width = max(len(entry.id) for entry in catalog)
    for entry in catalog:
        judge = "judge" if entry.calls_judge else "code "
        print(f"{entry.id:<{width}}  {judge}  {entry.description}")
        for option in entry.options:
            if option.code_only:  # a Python function cannot be given as JSON
                continue
            need = "required" if option.required else f"default {option.default!r}"
            print(f"{'':<{width}}         --scorer option {option.name} ({option.type}, {need})")
    return 0
