"""Exports of an experiment: Mastra-format JSON and a spreadsheet-safe CSV.

The engine and the judge mask every secret the process holds when they make a record; every
export's text (these and the HTML report) is masked again by `masked_export`, as a last line,
for whatever an older record may still hold (core.judge.secrets).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from core.judge.secrets import secret_masker
from core.records import ExperimentDetail, Review, ScorerOutcome, ScorerUsage, StepUsage
from core.reporting.agreement import LabelAgreement
from core.reporting.reviews import WHOLE_ITEM
from core.run_results import json_ready

__all__ = [
    "experiment_json",
    "experiment_json_text",
    "failure_entry",
    "finite_values",
    "judge_usage_by_steps",
    "masked_export",
    "neutralise_cell",
    "result_rows",
    "results_csv",
]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# The signs a spreadsheet also reads as a formula's start once it has skipped leading
# whitespace: the ASCII ones, their full-width forms (＝ ＋ － ＠, which spreadsheets with East
# Asian input normalise) and their small forms (﹦ ﹢ ﹣ ﹫).
_FORMULA_SIGNS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b")


def masked_export(text: str) -> str:
    """An export's finished text with every secret the process holds masked, as JSON, HTML or
    CSV write it (the last line: records are masked when they are made)."""
    return secret_masker().written().text(text)


def failure_entry(outcome: ScorerOutcome) -> dict[str, Any]:
    """A failed run as Mastra's dataset experiments show it: `score`/`reason` are the recovered
    ones (None when nothing was recovered), with the error, the failed and completed steps and
    the failed judge execution; `judge` keeps every judge execution of the run (the completed
    steps' too), so an import counts the run's whole usage."""
    entry: dict[str, Any] = {
        "scorerId": outcome.scorer_id,
        "status": "failed",
        "score": outcome.recovered_score,
        "reason": outcome.recovered_reason,
        "error": outcome.error,
        "errorType": outcome.error_type,
        "failedStep": outcome.failed_step,
        "completedSteps": list(outcome.completed_steps),
    }
    if outcome.failed_execution is not None:
        entry["failedJudgeExecution"] = json_ready(outcome.failed_execution)
    judge = (outcome.snapshot or {}).get("judge")
    if judge:
        entry["judge"] = judge
    return entry


def experiment_json(
    detail: ExperimentDetail,
    *,
    thresholds: Sequence[dict[str, Any]] | None = None,
    agreement: LabelAgreement | None = None,
    usage: Sequence[ScorerUsage] | None = None,
) -> dict[str, Any]:
    """`{experimentId, name, scores, summary, items: [{id, input, output, groundTruth, metadata,
    results: {scorerId: result or failure entry}}], reviews: [Review]}` (`reviews`: the human
    reviews of its items' scores, docs/review.md; `read_experiment_json` reads them back).

    With `usage` (the stored runs' judge usage per scorer, `Service.judge_usage`),
    `summary.judgeUsageBySteps` lists it per prompt step (`judge_usage_by_steps`; left out
    when no stored run called the judge).

    With `agreement` (the scorers' agreement with a label column), a top-level
    `labelAgreement: {scorerId: ScorerAgreement.to_json()}` and `summary.labelAgreement` (the
    column, the counts and the bootstrap's settings: `LabelAgreement.method_json`) are added;
    `read_experiment_json` ignores both.
    """
    info = detail.info
    by_item = _outcomes_by_item(detail)
    counts = info.counts
    summary: dict[str, Any] = {
        "totalItems": info.total_items,
        "totalRuns": counts.total,
        "succeededRuns": counts.succeeded,
        "failedRuns": counts.failed,
        "status": info.status,
        "datasetId": info.dataset_id,
        "datasetName": info.dataset_name,
        "datasetFingerprint": info.dataset_fingerprint,
        "scorerIds": list(info.scorer_ids),
        "scorers": [spec.model_dump(mode="json", by_alias=True) for spec in info.scorers],
        "comparisons": dict(info.comparisons),
        "judgeModel": info.judge_model,
        "judgeUsage": json_ready(counts.usage),
        "judgeCalls": counts.judge_calls,
        "judgeAttempts": counts.judge_attempts,
        "startedAt": info.started_at.isoformat() if info.started_at else None,
        "finishedAt": info.finished_at.isoformat() if info.finished_at else None,
        "failuresInMemory": detail.failures_in_memory,
    }
    if thresholds is not None:
        summary["thresholdResults"] = list(thresholds)
    by_steps = judge_usage_by_steps(usage) if usage is not None else []
    if by_steps:  # only an experiment that called the judge has a per-step usage to list
        summary["judgeUsageBySteps"] = by_steps
    if agreement is not None:
        summary["labelAgreement"] = agreement.method_json()
    items = [
        {
            "id": item.id,
            "input": item.input,
            "output": item.output,
            "groundTruth": item.ground_truth,
            "metadata": item.metadata,
            "results": {
                scorer_id: o.result if o.status == "success" else failure_entry(o)
                for scorer_id, o in by_item.get(item.id, {}).items()
            },
        }
        for item in detail.items
    ]
    document = {
        "experimentId": info.id,
        "name": info.name,
        "scores": dict(info.scores),
        "summary": summary,
        "items": items,
        "reviews": [review.model_dump(mode="json") for review in detail.reviews],
    }
    if agreement is not None:
        document["labelAgreement"] = agreement.to_json()
    return document


def judge_usage_by_steps(usages: Sequence[ScorerUsage]) -> list[dict[str, Any]]:
    """The stored runs' judge usage, one entry per (scorer, prompt step, model): `{scorerId,
    step, model, runs, judgeCalls, judgeAttempts, cachedCalls, usage: {inputTokens, ...},
    durationMs}` (no cost: the export has none, the Judge usage page estimates it); `step`
    null for a scorer's runs stored without a per-step split (summed whole, `durationMs` then
    the runs'). Scorers without judge calls are left out."""
    entries: list[dict[str, Any]] = []
    for usage in usages:
        if not (usage.judge_calls or usage.judge_attempts or usage.cached_calls):
            continue
        whole = usage.unsplit if usage.steps else usage
        parts: list[ScorerUsage | StepUsage] = [*usage.steps]
        if whole is not None:
            parts.append(whole)
        for part in parts:
            entry = part.model_dump(
                mode="json", by_alias=True, exclude={"steps", "unsplit", "est_cost_usd"}
            )
            entry.pop("scorerId", None)
            entry.pop("step", None)
            step = part.step if isinstance(part, StepUsage) and part.step else None
            entries.append({"scorerId": usage.scorer_id, "step": step, **entry})
    return entries


def experiment_json_text(
    detail: ExperimentDetail,
    *,
    thresholds: Sequence[dict[str, Any]] | None = None,
    agreement: LabelAgreement | None = None,
    usage: Sequence[ScorerUsage] | None = None,
) -> str:
    """`experiment_json` as indented, strict JSON text (what the dashboard's download gives,
    and what `Service.import_experiment_json` reads back): NaN and infinities, which JSON does
    not have, become null; values JSON cannot hold (dates, ...) become their text."""
    document = experiment_json(detail, thresholds=thresholds, agreement=agreement, usage=usage)
    options: dict[str, Any] = {"ensure_ascii": False, "indent": 2, "default": str}
    try:
        text = json.dumps(document, allow_nan=False, **options)
    except ValueError:  # a NaN somewhere: only then walk the whole document
        text = json.dumps(finite_values(document), **options)
    return masked_export(text)


def finite_values(value: Any) -> Any:
    """`value` with every NaN or infinite float (nested in dicts, lists and tuples) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_values(item) for item in value]
    return value


def result_rows(detail: ExperimentDetail) -> list[dict[str, Any]]:
    """One flat row per (item, scorer), successes and failures, in dataset order; with the
    reviews of the pair (`_review_cells`) and the verdict on the whole item (`itemVerdict`,
    `itemReviewNotes`: the reviews of scorer "*", repeated on each of the item's rows)."""
    by_item = _outcomes_by_item(detail)
    reviews: dict[tuple[str, str], list[Review]] = {}
    for review in detail.reviews:
        reviews.setdefault((review.item_id, review.scorer_id), []).append(review)
    rows = []
    for item in detail.items:
        for scorer_id, o in by_item.get(item.id, {}).items():
            usage = o.usage
            rows.append(
                {
                    "itemId": item.id,
                    "scorerId": scorer_id,
                    "compares": detail.info.comparisons.get(scorer_id),
                    "status": o.status,
                    "score": o.score if o.status == "success" else None,
                    "recoveredScore": o.recovered_score,
                    "reason": o.reason if o.status == "success" else o.recovered_reason,
                    "error": o.error,
                    "failedStep": o.failed_step,
                    "input": item.input,
                    "output": item.output,
                    "groundTruth": item.ground_truth,
                    "durationMs": o.duration_ms,
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "totalTokens": usage.total_tokens,
                    "judgeCalls": o.judge_calls,
                    **_review_cells(reviews.get((item.id, scorer_id), [])),
                    **_item_cells(reviews.get((item.id, WHOLE_ITEM), [])),
                }
            )
    return rows


def _review_cells(reviews: list[Review]) -> dict[str, Any]:
    """The CSV's review columns of one (item, scorer): the latest verdict, the counts of right
    and wrong, the reviewers' own scores and their notes (`reviewer: text`, ` | ` between)."""
    latest = max(reviews, key=lambda r: r.updated_at, default=None)
    return {
        "reviewVerdict": latest.verdict if latest else None,
        "reviewsRight": sum(r.verdict == "right" for r in reviews),
        "reviewsWrong": sum(r.verdict == "wrong" for r in reviews),
        "reviewerScores": " | ".join(
            f"{r.reviewer}: {r.score:g}" for r in reviews if r.score is not None
        )
        or None,
        "reviewNotes": " | ".join(f"{r.reviewer}: {r.note}" for r in reviews if r.note) or None,
    }


def _item_cells(reviews: list[Review]) -> dict[str, Any]:
    """The CSV's columns of the verdict on the whole item: the latest, and the notes."""
    latest = max(reviews, key=lambda r: r.updated_at, default=None)
    return {
        "itemVerdict": latest.verdict if latest else None,
        "itemReviewNotes": " | ".join(f"{r.reviewer}: {r.note}" for r in reviews if r.note) or None,
    }


def results_csv(detail: ExperimentDetail) -> str:
    """`result_rows` as CSV that is safe to open in a spreadsheet: a text cell starting with
    = + - @ tab or CR (or with a formula sign after spaces, or a full-width ＝ ＋ － ＠) is
    prefixed with a single quote, so it is never run as a formula."""
    rows = result_rows(detail)
    header = list(rows[0]) if rows else ["itemId", "scorerId", "status", "score"]
    buffer = io.StringIO()
    # RFC 4180 line ends: the writer then quotes any cell holding a CR or an LF (with "\n" as
    # the terminator, a bare CR in a reason was written unquoted and split the row).
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([neutralise_cell(name) for name in header])
    for row in rows:
        writer.writerow([_cell(row.get(name)) for name in header])
    return masked_export(buffer.getvalue())


def neutralise_cell(value: str) -> str:
    """Prefix a formula-looking text with a single quote (OWASP's CSV-injection advice): one
    starting with = + - @ tab or CR, or with one of those signs (or its full-width or small
    form) after leading whitespace."""
    if value.startswith(_FORMULA_STARTS):
        return "'" + value
    stripped = value.lstrip()
    if stripped and stripped[0] in _FORMULA_SIGNS:
        return "'" + value
    return value


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return value  # numbers are data, not formulas (a negative score stays a number)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return neutralise_cell(text)


def _outcomes_by_item(detail: ExperimentDetail) -> dict[str, dict[str, ScorerOutcome]]:
    order = {scorer_id: n for n, scorer_id in enumerate(detail.info.scorer_ids)}
    by_item: dict[str, dict[str, ScorerOutcome]] = {}
    for outcome in [*detail.results, *detail.failures]:
        by_item.setdefault(outcome.item_id, {})[outcome.scorer_id] = outcome
    return {
        item_id: dict(sorted(runs.items(), key=lambda kv: order.get(kv[0], len(order))))
        for item_id, runs in by_item.items()
    }
