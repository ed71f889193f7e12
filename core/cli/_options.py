"""What several commands share in their options: the help formatter, `--no-progress`, the
options of the end of a run (exports, thresholds, labels), and the type of the subparsers a
command registers itself in (core/cli/_parser.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from core.cli._values import max_cost, per_minute, share

__all__ = [
    "Commands",
    "HelpFormatter",
    "add_judge_key_options",
    "add_max_cost_option",
    "add_progress_option",
    "add_rate_limit_options",
    "add_report_options",
]

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


def add_ray_option(command: argparse.ArgumentParser) -> None:
    """`--ray-address`: run the experiment's scorers on a Ray cluster (docs/scale.md)."""
    command.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="run the scorers on Ray: auto, ray://host:10001, host:port (the head's GCS "
        "port) or local:N (N worker processes started and stopped with the run); default "
        "SCORELAB_RAY_ADDRESS, else in this process; needs pip install 'scorelab[ray]'",
    )


def add_judge_key_options(command: argparse.ArgumentParser) -> None:
    """`--api-key-env NAME` / `--api-key-stdin`: a key typed for this run of the judge, for a
    command that runs one (`core.cli._values.typed_key` reads it)."""
    typed_key = command.add_mutually_exclusive_group()
    typed_key.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the judge's key for this run, read from the environment variable NAME "
        "(never stored, never on the command line)",
    )
    typed_key.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="the judge's key for this run, read from the first line of standard input",
    )


def add_max_cost_option(command: argparse.ArgumentParser, help: str) -> None:
    """`--max-cost USD`, a spend cap on the judge (`ExperimentConfig.max_cost`)."""
    command.add_argument("--max-cost", type=max_cost, metavar="USD", help=help)


def add_rate_limit_options(command: argparse.ArgumentParser) -> None:
    """`--rpm N` / `--tpm N`: the judge rate limit of the run (`ExperimentConfig.rate_limit`)."""
    command.add_argument(
        "--rpm",
        type=per_minute,
        metavar="N",
        help="at most N judge requests per minute to the judge model from this process, "
        "retries included (default: the provider's conservative default, e.g. 500 for "
        "openai, 50 for anthropic; none for a model at another --api-base)",
    )
    command.add_argument(
        "--tpm",
        type=per_minute,
        metavar="N",
        help="at most N judge tokens (prompt and answer) per minute to the judge model "
        "(default: the provider's, e.g. 30000 for openai; none for a model at another "
        "--api-base); a 429 from the provider pauses every judge call of the model",
    )


def add_report_options(command: argparse.ArgumentParser) -> None:
    """What the end of an experiment reports and what decides the exit code: the export files,
    the thresholds, the failures allowed, the label column (core/cli/_finish.py)."""
    command.add_argument("--json", type=Path, metavar="PATH", help="write results as JSON")
    command.add_argument("--html", type=Path, metavar="PATH", help="write an HTML report")
    command.add_argument("--csv", type=Path, metavar="PATH", help="write results as CSV")
    command.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="ID=MIN",
        help="fail (exit 1) when the scorer's mean is below MIN, in [0, 1] (repeatable)",
    )
    command.add_argument(
        "--max-failure-rate",
        type=share,
        default=0.0,
        metavar="SHARE",
        help="share of a scorer's runs allowed to fail, in [0, 1] (default 0: any failed run "
        "exits 1, since means leave failed runs out)",
    )
    command.add_argument(
        "--label-column",
        metavar="COLUMN",
        help="column holding a human verdict per item (true/false, yes/no, 0/1 or a number in "
        "[0, 1]): report how well each scorer's scores agree with it",
    )
