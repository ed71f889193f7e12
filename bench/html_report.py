"""The self-contained HTML report of a synthetic experiment: 10,000 items × 5 scorers (each
result with a judge record; 1% of runs failed), its size and build time, and the JSON and CSV
exports next to it.

    python bench/html_report.py [--items 10000] [--scorers 5] [--repeat 3] [--out PATH]
                                [--plain] [--varied]

The report stays usable at that size: its data is embedded once (gzip-compressed past 2 MB, so
the file fits in an email), the browser parses it once and renders the item table 50 rows at a
time; the charts are inline SVG (no plotly.js, which was 4.6 MB). `--plain` shows the
uncompressed size too.
The synthetic texts repeat a template and compress unusually well; `--varied` gives every
input, output, ground truth and reason 20-60 random words (a 5,000-word vocabulary), closer to
real answers and judge reasons.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the synthetic experiment's builder

from reporting_tables import best_of, synthetic_detail

from core.exchange.exports import experiment_json, results_csv
from core.exchange.html import experiment_html
from core.records import ExperimentDetail

MB = 1024 * 1024


def varied(detail: ExperimentDetail, seed: int = 11) -> ExperimentDetail:
    """The same experiment with random-word texts instead of the repeated templates."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10)))
                  for _ in range(5_000)]  # fmt: skip

    def text() -> str:
        return " ".join(rng.choices(vocabulary, k=rng.randint(20, 60)))

    items = [
        item.model_copy(update={"input": text(), "output": text(), "ground_truth": text()})
        for item in detail.items
    ]
    results = [o.model_copy(update={"reason": text()}) for o in detail.results]
    return detail.model_copy(update={"items": items, "results": results})


def main() -> None:
    """Build the experiment once, then time each export."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the report there")
    parser.add_argument("--plain", action="store_true", help="also time it uncompressed")
    parser.add_argument("--varied", action="store_true", help="random-word texts")
    args = parser.parse_args()
    detail = synthetic_detail(args.items, args.scorers)
    if args.varied:
        detail = varied(detail)
    runs = len(detail.results) + len(detail.failures)
    failed = len(detail.failures)
    print(f"{args.items} items × {args.scorers} scorers ({runs} runs, {failed} failed)")
    experiment_html(synthetic_detail(2, 1))  # warm-up: imports litellm for the cost estimate
    html = ""
    variants = [("HTML report", {})]
    if args.plain:
        variants.append(("uncompressed", {"compress_over": 1 << 62}))
    for label, options in variants:
        seconds, text = best_of(args.repeat, lambda o=options: experiment_html(detail, **o))
        size = len(text.encode("utf-8"))
        print(f"{label + ':':13} {seconds:6.2f} s  {size / MB:6.2f} MB (charts: inline SVG)")
        html = html or text  # the default (compressed) report is the one written
    seconds, text = best_of(
        args.repeat,
        lambda: json.dumps(experiment_json(detail), ensure_ascii=False, default=str),
    )
    print(f"JSON export:  {seconds:6.2f} s  {len(text.encode('utf-8')) / MB:6.1f} MB")
    seconds, text = best_of(args.repeat, lambda: results_csv(detail))
    print(f"CSV export:   {seconds:6.2f} s  {len(text.encode('utf-8')) / MB:6.1f} MB")
    if args.out:
        args.out.write_text(html, encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
