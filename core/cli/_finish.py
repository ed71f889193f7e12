"""The end of an experiment followed from the terminal (`scorelab run`, and any command that
runs one): the exports of an experiment that ran to its end, the summary, the exit code. Its
options are `core.cli._options.add_report_options`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli._errors import CliError
from core.cli._follow import Interrupts
from core.cli._progress import bars_wanted
from core.cli._summary import (
    agreement,
    gate,
    print_agreement,
    print_budget_reached,
    print_summary,
)
from core.cli.outputs import (
    STDOUT,
    Export,
    csv_export,
    html_pages_export,
    json_export,
    write_export,
)
from core.records import ExperimentInfo, ExperimentProgress

if TYPE_CHECKING:
    from core.service import Service
    from core.service.terminal import LabelAgreement, ThresholdResult

__all__ = ["ENDED", "check_output_paths", "finish"]

ENDED = ("completed", "failed", "budget_reached")
"""The statuses of a run that went as far as it could: every run attempted, or every run its
spend cap allowed. Its exports are written (a capped one's hold the results it reached)."""


def check_output_paths(arguments: argparse.Namespace) -> None:
    """The summary goes to stdout: an export there would be mixed with it."""
    for option in ("json", "csv", "html"):
        if getattr(arguments, option) == STDOUT:
            raise CliError(
                f"--{option} -: `scorelab {arguments.command}` prints its summary on stdout; "
                f"name a file, or write it with `scorelab export EXPERIMENT_ID --{option} -`"
            )


def finish(
    arguments: argparse.Namespace,
    service: Service,
    experiment_id: str,
    progress: ExperimentProgress,
    thresholds: list[tuple[str, float]],
    interrupts: Interrupts,
    *,
    cap: float | None = None,
) -> int:
    """The exports (of an experiment that ran to its end only, or to its spend cap), the
    summary, the exit code. The summary needs no result: the database gives the means and
    counts. `arguments` holds the options of `add_report_options` and `add_progress_option`;
    `cap`: the spend cap the run had (USD), if any."""
    info = service.get_experiment(experiment_id)
    failures = service.failures(experiment_id)
    verdict = gate(info, failures, thresholds, arguments.max_failure_rate)
    agreed = agreement(service, experiment_id, arguments.label_column)
    ran_to_the_end = progress.status in ENDED and not interrupts.count
    unwritten = _write_outputs(
        arguments,
        service,
        info,
        verdict.thresholds,
        agreed,
        stop=lambda: not ran_to_the_end or bool(interrupts.count),
    )
    print_summary(info, failures, verdict)
    if progress.status == "budget_reached":
        print_budget_reached(info, cap)
    if agreed is not None:
        print_agreement(agreed)
    if unwritten:
        why = (
            "interrupted"
            if interrupts.count
            else "the experiment was cancelled"
            if progress.status == "cancelled"
            else "the experiment stopped on an error"
        )
        print(
            f"scorelab: {why}, so {', '.join(map(str, unwritten))} "
            f"{'was' if len(unwritten) == 1 else 'were'} not written; its "
            f"{info.counts.succeeded} finished results are in the database "
            f"(experiment {experiment_id})",
            file=sys.stderr,
        )
    return _exit_code(progress, interrupts, passed=verdict.passed)


def _exit_code(progress: ExperimentProgress, interrupts: Interrupts, *, passed: bool) -> int:
    if progress.status == "error" or (progress.status == "interrupted" and progress.error):
        raise CliError(f"the experiment stopped: {progress.error}")
    if interrupts.count:
        return 128 + interrupts.signal_number
    if progress.status == "cancelled":  # by another hand than ours: not a finished run
        return 130
    if progress.status in ("failed", "budget_reached"):  # nothing, or not all, was measured
        return 1
    return 0 if passed else 1


def _write_outputs(
    arguments: argparse.Namespace,
    service: Service,
    info: ExperimentInfo,
    thresholds: list[ThresholdResult],
    agreed: LabelAgreement | None,
    *,
    stop: Callable[[], bool],
) -> list[Path]:
    """The --json, --csv and --html files, each written whole or not at all; none once
    `stop()` holds (the run did not reach its end, or an interrupt came). Returns the paths
    left unwritten."""
    from core.run_results import json_ready

    experiment_id, total = info.id, info.total_items
    checks = [json_ready(t) for t in thresholds] or None
    wanted: list[tuple[Path | None, Callable[[], Export]]] = [
        (
            arguments.json,
            lambda: json_export(
                service, experiment_id, total_items=total, thresholds=checks, agreement=agreed
            ),
        ),
        (arguments.csv, lambda: csv_export(service, experiment_id, total_items=total)),
        # A page of items at a time, as `scorelab export --html` writes it (same bytes).
        (arguments.html, lambda: html_pages_export(service, info, agreement=agreed)),
    ]
    show = bars_wanted(arguments.no_progress)
    unwritten = []
    for path, export in wanted:
        if path is None:
            continue
        if stop():
            unwritten.append(path)
            continue
        write_export(path, export(), show=show)
    return unwritten
