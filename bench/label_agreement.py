"""Each scorer's agreement with a label column on synthetic experiments of growing size (labels
40% positive, scores rounded to 0.01 so there are ties, 1% of runs failed).

    python bench/label_agreement.py [--items 1000,10000,100000] [--scorers 2] [--resamples 1000]

Prints, per size, the time of `label_columns` (the page's detection of label columns) and of
`label_agreement` (AUC, its bootstrap interval, Spearman, the Youden threshold and kappa for
every scorer); the bootstrap is most of it. The first call's SciPy and scikit-learn imports are
timed apart.
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import UTC, datetime

from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.reporting import label_agreement, label_columns


def _detail(items: int, scorers: int, seed: int = 1) -> ExperimentDetail:
    rng = random.Random(seed)
    labels = [rng.random() < 0.4 for _ in range(items)]
    dataset = [
        DatasetItem(id=f"i{n}", metadata={"topic": "t", "is_correct": "yes" if label else "no"})
        for n, label in enumerate(labels)
    ]
    results, failures = [], []
    for k in range(scorers):
        scorer_id = f"scorer-{k}"
        for n, label in enumerate(labels):
            if rng.random() < 0.01:
                failures.append(
                    ScorerOutcome(item_id=f"i{n}", scorer_id=scorer_id, status="failed", error="x")
                )
                continue
            score = round(min(1.0, rng.random() * 0.8 + 0.3 * label), 2)
            results.append(
                ScorerOutcome(item_id=f"i{n}", scorer_id=scorer_id, status="success", score=score)
            )
    info = ExperimentInfo(
        id="bench",
        name="bench",
        dataset_id="d",
        dataset_fingerprint="fp",
        scorer_ids=[f"scorer-{k}" for k in range(scorers)],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return ExperimentDetail(
        info=info, items=dataset, results=results, failures=failures, failures_in_memory=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="1000,10000,100000")
    parser.add_argument("--scorers", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=1000)
    arguments = parser.parse_args()

    started = time.perf_counter()
    label_agreement(_detail(20, 1), "is_correct", resamples=10)
    print(f"first call (imports SciPy and scikit-learn): {time.perf_counter() - started:.2f} s")
    for size in (int(text) for text in arguments.items.split(",")):
        detail = _detail(size, arguments.scorers)
        started = time.perf_counter()
        columns = label_columns(detail.items)
        detect = time.perf_counter() - started
        started = time.perf_counter()
        agreement = label_agreement(detail, "is_correct", resamples=arguments.resamples)
        measure = time.perf_counter() - started
        auc = agreement.scorers[0].auc
        print(
            f"{size:>7,} items x {arguments.scorers} scorers: label_columns {detect * 1000:.0f} ms "
            f"({columns}), label_agreement {measure:.2f} s "
            f"({measure / arguments.scorers:.2f} s per scorer, {arguments.resamples} resamples;"
            f" AUC {auc:.3f})"
        )


if __name__ == "__main__":
    main()
