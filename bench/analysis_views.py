"""Issue 21's analysis views on a synthetic experiment (`reporting_tables.synthetic_detail`,
each item given one of 38 categories), at 817 × 5 and 10,000 × 5 by default: the slice pivot
and one scorer's chart, Compare's paired change per slice (baseline and a candidate), the N = 3
side-by-side grid (baseline and two candidates), and the HTML report's size at 12, 817 and
10,000 items. The computation only (core/reporting), not the browser: the page adds its
rendering (bench/browser_pages.py drives the browser).

    python bench/analysis_views.py [--sizes 817 10000] [--scorers 5] [--repeat 3]

Targets (issue 21): a slice < 0.5 s / < 1 s, Compare (N = 3) < 1 s / < 2 s at 817 / 10,000
items; a small experiment's report under 1 MB. Quote the figures with `uptime`'s load.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reporting_tables import best_of, synthetic_detail

from core.exchange.html import experiment_html
from core.records import ExperimentDetail, SliceScorer, SliceSummary
from core.reporting.compare import compare_experiments
from core.reporting.side_by_side import side_by_side
from core.reporting.slice_views import paired_slice_changes, scorer_slice_chart, slice_pivot
from core.reporting.slices import t_interval

CATEGORIES = 38
MB = 1024 * 1024


def categorised(detail: ExperimentDetail, seed: int) -> ExperimentDetail:
    """The experiment with a `category` per item and its scores shifted at random (another
    run of the same dataset)."""
    rng = random.Random(seed)
    items = [
        item.model_copy(update={"metadata": {"category": f"cat-{n % CATEGORIES:02d}"}})
        for n, item in enumerate(detail.items)
    ]
    results = [
        o.model_copy(update={"score": min(1.0, max(0.0, (o.score or 0) + rng.gauss(0, 0.1)))})
        for o in detail.results
    ]
    info = detail.info.model_copy(update={"id": f"bench-{seed}", "name": f"run {seed}"})
    return detail.model_copy(update={"items": items, "results": results, "info": info})


def summaries(detail: ExperimentDetail) -> list[SliceSummary]:
    """The slices the database would give (`Store.slice_summaries`), computed here."""
    category = {item.id: item.metadata["category"] for item in detail.items}
    scores: dict[tuple[str, str], list[float]] = {}
    for o in detail.results:
        if o.score is not None:
            scores.setdefault((category[o.item_id], o.scorer_id), []).append(o.score)
    found = []
    for value in sorted(set(category.values())):
        scorers = []
        for scorer_id in detail.info.scorer_ids:
            values = scores.get((value, scorer_id), [])
            n = len(values)
            mean = sum(values) / n if n else None
            sd = (
                (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
                if n > 1 and mean is not None
                else None
            )
            interval = t_interval(mean, sd, n)
            scorers.append(
                SliceScorer(
                    scorer_id=scorer_id,
                    runs=n,
                    scored=n,
                    mean=mean,
                    sd=sd,
                    low=interval[0] if interval else None,
                    high=interval[1] if interval else None,
                )
            )
        items = sum(1 for c in category.values() if c == value)
        found.append(SliceSummary(column="category", value=value, items=items, scorers=scorers))
    return found


def main() -> None:
    """Time each view at each size, then the report sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[817, 10_000])
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (shared machine)")
    for size in args.sizes:
        base = categorised(synthetic_detail(size, args.scorers), 1)
        one = categorised(synthetic_detail(size, args.scorers), 2)
        two = categorised(synthetic_detail(size, args.scorers), 3)
        found = summaries(base)
        ranges = {s: (0.0, 1.0) for s in base.info.scorer_ids}
        print(f"{size:,} items × {args.scorers} scorers, {CATEGORIES} categories")
        seconds, _ = best_of(
            args.repeat,
            lambda f=found, r=ranges: (slice_pivot(f, r), scorer_slice_chart(f, "scorer-0")),
        )
        print(f"  slice pivot + one scorer's chart:  {seconds * 1000:8.1f} ms")
        seconds, comparisons = best_of(
            args.repeat, lambda b=base, c=[one, two]: compare_experiments(b, c)
        )
        print(f"  compare (N = 3: pairing, stats):   {seconds * 1000:8.1f} ms")
        seconds, changes = best_of(
            args.repeat, lambda c=comparisons[0]: paired_slice_changes(c, "category")
        )
        print(
            f"  paired change per slice (+ Holm):  {seconds * 1000:8.1f} ms ({len(changes)} rows)"
        )
        seconds, grid = best_of(args.repeat, lambda c=comparisons: side_by_side(c))
        print(f"  side-by-side grid (N = 3):         {seconds * 1000:8.1f} ms ({len(grid)} rows)")
    experiment_html(synthetic_detail(2, 1))  # warm-up: the price table
    for size in (12, 817, 10_000):
        text = experiment_html(synthetic_detail(size, args.scorers))
        print(f"HTML report, {size:>6,} items × {args.scorers}: {len(text.encode()) / MB:7.3f} MB")


if __name__ == "__main__":
    main()
