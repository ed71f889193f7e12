"""What `scorelab run` prints at the end and what decides its exit code: the means, the
failed runs, the thresholds (`Gate`) and the agreement with a label column."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.cli._errors import CliError
from core.cli._text import printable
from core.records import ExperimentInfo, ScorerOutcome

if TYPE_CHECKING:
    from core.service import Service
    from core.service.terminal import LabelAgreement, ThresholdResult

__all__ = [
    "Gate",
    "agreement",
    "check_threshold_ids",
    "gate",
    "print_agreement",
    "print_budget_reached",
    "print_summary",
]


def check_threshold_ids(thresholds: list[tuple[str, float]], scorer_ids: list[str]) -> None:
    """Refuse a --threshold naming a scorer this run does not have."""
    for scorer_id, _ in thresholds:
        if scorer_id not in scorer_ids:
            raise CliError(
                f"--threshold {scorer_id}: no such scorer in this run "
                f"(scorers: {', '.join(scorer_ids)})"
            )


@dataclass(frozen=True, slots=True)
class Gate:
    """What decides the exit code: the thresholds, and the failed runs per scorer."""

    thresholds: list[ThresholdResult]
    failed_by_scorer: dict[str, int]
    runs_per_scorer: int
    max_failure_rate: float

    @property
    def too_many_failures(self) -> list[str]:
        """The scorers with more failed runs than the allowed share."""
        from core.service.terminal import failures_within

        return [
            scorer_id
            for scorer_id, failed in self.failed_by_scorer.items()
            if not failures_within(failed, self.runs_per_scorer, self.max_failure_rate)
        ]

    @property
    def passed(self) -> bool:
        """True when every threshold passed and no scorer failed too often."""
        return not self.too_many_failures and all(t.passed for t in self.thresholds)


def gate(
    info: ExperimentInfo,
    failures: list[ScorerOutcome],
    thresholds: list[tuple[str, float]],
    max_failure_rate: float,
) -> Gate:
    """Thresholds checked by the same rule as `run_evals`: a mean leaves failed runs out, so a
    scorer passes only when its failed runs are within the allowed share too."""
    from core.service.terminal import Threshold, check_threshold

    failed = Counter(outcome.scorer_id for outcome in failures)
    by_scorer = {scorer_id: failed[scorer_id] for scorer_id in info.scorer_ids}
    return Gate(
        thresholds=[
            check_threshold(
                scorer_id,
                Threshold(min=minimum),
                info.scores.get(scorer_id),
                failed_runs=by_scorer.get(scorer_id, 0),
                total_runs=info.total_items,
                max_failure_rate=max_failure_rate,
            )
            for scorer_id, minimum in thresholds
        ],
        failed_by_scorer=by_scorer,
        runs_per_scorer=info.total_items,
        max_failure_rate=max_failure_rate,
    )


def print_summary(info: ExperimentInfo, failures: list[ScorerOutcome], gate: Gate) -> None:
    """The experiment's status, counts, means, judge use and verdicts on stdout; a warning
    naming the first failed run on stderr."""
    counts = info.counts
    print(f"Experiment {info.id} ({printable(info.name)}): {info.status}")
    print(f"  {info.total_items} items, {counts.succeeded} runs succeeded, {counts.failed} failed")
    for scorer_id in info.scorer_ids:
        mean = info.scores.get(scorer_id)
        failed = gate.failed_by_scorer.get(scorer_id, 0)
        note = f" ({failed} of {info.total_items} runs failed, not in the mean)" if failed else ""
        shown = "no score" if mean is None else f"{mean:.4f}"
        print(f"  {printable(scorer_id)}: {shown}{note}")
    if counts.judge_calls or counts.cached_calls:
        usage = counts.usage
        cached = (
            f" ({counts.cached_calls} more answered from the cache)" if counts.cached_calls else ""
        )
        print(
            f"  judge: {counts.judge_calls} calls, {usage.input_tokens or 0} input and "
            f"{usage.output_tokens or 0} output tokens{cached}"
        )
    for result in gate.thresholds:
        _print_threshold(result)
    if info.status == "failed":
        print("  FAILED: every scorer run failed, so nothing was measured")
    allowed = f"{gate.max_failure_rate:.0%}"
    for scorer_id in gate.too_many_failures:
        failed = gate.failed_by_scorer[scorer_id]
        print(
            f"  FAILED: {failed} of {info.total_items} runs of {printable(scorer_id)} failed "
            f"(allowed: {allowed}; see --max-failure-rate)"
        )
    if failures:
        _warn_failures(failures)


def print_budget_reached(info: ExperimentInfo, cap: float | None) -> None:
    """What a run stopped by its spend cap spent, what it left, and how to go on."""
    from core.service.terminal import experiment_cost

    spent = experiment_cost(info)
    of_cap = "" if cap is None else f" of the ${cap:,.4f} cap"
    print(
        f"  STOPPED: the spend cap was reached: about ${spent or 0:,.4f} spent{of_cap} "
        f"(litellm's prices), {info.counts.skipped} runs not started"
    )
    print(f"  resume them with a higher cap: scorelab resume {info.id} --max-cost HIGHER")


def _print_threshold(result: ThresholdResult) -> None:
    verdict = "passed" if result.passed else "FAILED"
    mean = result.average_score
    shown = "no score" if mean is None else f"{mean:.4f}"
    more = f", {result.failed_runs} failed runs" if result.failed_runs else ""
    limit = f">= {result.threshold.min}"
    print(f"  threshold {printable(result.id)} {limit}: {verdict} ({shown}{more})")


def _warn_failures(failures: list[ScorerOutcome]) -> None:
    from core.service import mask_secrets

    first = failures[0]
    error = " ".join(mask_secrets(str(first.error)).split())
    print(
        f"scorelab: warning: {len(failures)} scorer run(s) failed (first: item "
        f"{printable(first.item_id)}, {printable(first.scorer_id)}: {printable(error)})",
        file=sys.stderr,
    )


def agreement(service: Service, experiment_id: str, column: str | None) -> LabelAgreement | None:
    """The scorers' agreement with the label column (None without --label-column), from the
    items and the stored scores (`Service.label_agreement`), not the whole experiment."""
    if column is None:
        return None
    from core.service.terminal import LabelError

    try:
        return service.label_agreement(experiment_id, column)
    except LabelError as error:  # checked before the run; only a changed dataset gets here
        raise CliError(f"--label-column {column!r}: {error}") from None


def print_agreement(agreement: LabelAgreement) -> None:
    """Per scorer, how well its scores agree with the labels and its verdict (separates the
    labels, no better than chance, inverted: core/reporting/agreement.py), then the verdict in
    a sentence."""
    from core.service.terminal import agreement_line, agreement_verdict, scorer_verdict

    print(
        f"  labels from column {printable(repr(agreement.label_column))}: "
        f"{agreement.labelled_items} items labelled, {agreement.unlabelled_items} without a "
        "label (left out)"
    )
    for entry in agreement.scorers:
        line = f"{agreement_line(entry)} · verdict: {scorer_verdict(entry)}"
        print(f"  {printable(entry.scorer_id)}: {printable(line)}")
    print(f"  verdict: {printable(agreement_verdict(agreement))}")
