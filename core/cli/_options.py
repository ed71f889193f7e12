"""What several commands share in their options: the help formatter, `--no-progress`, and the
type of the subparsers a command registers itself in (core/cli/_parser.py)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypeAlias

__all__ = ["Commands", "HelpFormatter", "add_progress_option"]

if TYPE_CHECKING:  # typeshed's name for what `add_subparsers` returns (not subscriptable)
    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    """Where a command module's `register` adds its subparser."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help as written (epilogs keep their lines), with `{max_concurrency}` filled in only when
    the help is shown: the engine's cap is the service's, and importing the service for every
    command line would slow down each `scorelab` started."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if text is not None and "{max_concurrency}" in text:
            from core.service.terminal import MAX_CONCURRENCY

            text = text.replace("{max_concurrency}", str(MAX_CONCURRENCY))
        return text


def add_progress_option(command: argparse.ArgumentParser) -> None:
    """`--no-progress`, for a command with long work to show (core/cli/_progress.py)."""
    command.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar on stderr (there is none when stderr is not a terminal)",
    )
