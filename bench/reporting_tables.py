"""Building and filtering the experiment page's per-item table on a synthetic experiment:
10,000 items × 5 scorers (each result with a judge record; 1% of runs failed).

    python bench/reporting_tables.py [--items 10000] [--scorers 5] [--repeat 5]

Target: `item_frame` well under a second, `filter_items` a few milliseconds. Also times
`judge_usage_frame` (whose cost column imports litellm once: excluded by a warm-up call).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)
from core.reporting import filter_items, item_frame, judge_usage_frame
from core.run_results import ErrorSummary, JudgeExecutionFailure, JudgeUsage

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _execution(n: int, score: float) -> dict[str, Any]:
    return {
        "status": "success",
        "prompt": f"Score the answer to question {n}. Answer with JSON.",
        "judgeModelId": "gpt-4o-mini-2024-07-18",
        "judgeProvider": "openai",
        "attemptCount": 1,
        "modelCallCount": 1,
        "durationMs": 700 + n % 300,
        "output": score,
        "usage": {"inputTokens": 300 + n % 50, "outputTokens": 12, "totalTokens": 312 + n % 50},
    }


def _success(item: DatasetItem, scorer_id: str, n: int, rng: random.Random) -> ScorerOutcome:
    score = round(rng.random(), 3)
    execution = _execution(n, score)
    reason = f"The answer to {item.id} covers {int(score * 10)} of 10 points."
    result = {
        "runId": f"run-{n}",
        "input": item.input,
        "output": item.output,
        "groundTruth": item.ground_truth,
        "score": score,
        "reason": reason,
        "generateScorePrompt": execution["prompt"],
        "judge": {"generateScore": {"executions": [execution]}},
    }
    usage = execution["usage"]
    return ScorerOutcome(
        item_id=item.id,
        scorer_id=scorer_id,
        status="success",
        score=score,
        reason=reason,
        result=result,
        duration_ms=execution["durationMs"],
        usage=JudgeUsage(
            input_tokens=usage["inputTokens"],
            output_tokens=usage["outputTokens"],
            total_tokens=usage["totalTokens"],
        ),
        judge_calls=1,
        judge_attempts=1,
    )


def _failure(item: DatasetItem, scorer_id: str) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item.id,
        scorer_id=scorer_id,
        status="failed",
        error="Scorer Run Failed: rate limited",
        error_type="ScorerRunError",
        failed_step="generateScore",
        failed_execution=JudgeExecutionFailure(
            prompt="Score the answer.",
            judge_model_id="gpt-4o-mini-2024-07-18",
            attempt_count=3,
            model_call_count=0,
            duration_ms=2_000,
            error=ErrorSummary(name="RateLimitError", message="rate limited", code="429"),
            finish_reason="error",
        ),
    )


def synthetic_detail(items: int, scorers: int, seed: int = 7) -> ExperimentDetail:
    """An experiment of `items` × `scorers` runs, 1% of them failed."""
    rng = random.Random(seed)
    scorer_ids = [f"scorer-{k}" for k in range(scorers)]
    dataset = [
        DatasetItem(
            id=f"item-{n:06d}",
            input=f"How do I configure option {n} of the service?",
            output=f"Set option {n} in the settings file, then restart the service.",
            ground_truth=f"Set option {n} and restart.",
        )
        for n in range(items)
    ]
    results, failures = [], []
    for n, item in enumerate(dataset):
        for k, scorer_id in enumerate(scorer_ids):
            if rng.random() < 0.01:
                failures.append(_failure(item, scorer_id))
            else:
                results.append(_success(item, scorer_id, n * scorers + k, rng))
    info = ExperimentInfo(
        id="bench",
        name="bench",
        dataset_id="d",
        dataset_fingerprint="f",
        scorer_ids=scorer_ids,
        status="completed",
        total_items=items,
        counts=RunCounts(total=items * scorers),
        created_at=NOW,
    )
    return ExperimentDetail(
        info=info, items=dataset, results=results, failures=failures, failures_in_memory=True
    )


def best_of(repeat: int, action: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of `repeat` runs, in seconds, and the last value."""
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = action()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    """Build the experiment once, then time the table and its filters."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    detail = synthetic_detail(args.items, args.scorers)
    runs = len(detail.results) + len(detail.failures)
    print(f"{args.items} items × {args.scorers} scorers ({runs} runs)")
    seconds, frame = best_of(args.repeat, lambda: item_frame(detail))
    print(f"item_frame:               {seconds * 1000:8.1f} ms  ({len(frame)} rows)")
    filters: dict[str, dict[str, Any]] = {
        "score_range (all)": {"score_range": (0.2, 0.4)},
        "score_range (one scorer)": {"scorer_ids": ["scorer-1"], "score_range": (0.9, 1.0)},
        "failed_only": {"failed_only": True},
        "failed_only (one scorer)": {"scorer_ids": ["scorer-2"], "failed_only": True},
        "search": {"search": "OPTION 12"},
        "all combined": {"score_range": (0.0, 0.5), "failed_only": True, "search": "restart"},
    }
    for label, kwargs in filters.items():
        seconds, kept = best_of(args.repeat, lambda kwargs=kwargs: filter_items(frame, **kwargs))
        print(f"filter_items {label + ':':26} {seconds * 1000:6.1f} ms  ({len(kept)} rows)")
    outcomes = [*detail.results, *detail.failures]
    judge_usage_frame(outcomes[:1])  # imports litellm and caches the price once
    seconds, usage = best_of(args.repeat, lambda: judge_usage_frame(outcomes))
    print(f"judge_usage_frame:        {seconds * 1000:8.1f} ms  ({len(usage)} executions)")


if __name__ == "__main__":
    main()
