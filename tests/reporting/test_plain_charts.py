"""The HTML report's figures in plain Python (core/exchange/svg_charts.py): the histogram bins
and the means are NumPy's to the last bit, so the report reads as it did when NumPy computed
them, and the report's modules import neither pandas nor NumPy."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from core.exchange.svg_charts import histogram_counts, histograms_of, score_mean
from core.reporting.table_rows import grouped_sums


def _samples() -> list[list[float]]:
    rnd = random.Random(21)
    edges = [k / 10 for k in range(11)] + [0.3, 0.7, 0.6, 1 / 3, 2 / 3, 0.1 + 0.2]
    samples = [
        [0.0],
        [1.0],
        [0.5] * 9,
        edges,
        edges * 40,
        [rnd.choice(edges) for _ in range(1000)],
        [rnd.random() for _ in range(7)],
        [rnd.random() for _ in range(129)],
        [rnd.random() for _ in range(4099)],
        [rnd.uniform(-0.7, 2.3) for _ in range(300)],  # the bins widen past 0..1
        [rnd.random() * rnd.choice([1e-9, 1.0, 1e6]) for _ in range(20_001)],
    ]
    return samples


@pytest.mark.parametrize("values", _samples(), ids=lambda v: f"{len(v)} values")
def test_the_bins_are_numpys(values: list[float]) -> None:
    low, high = min(0.0, min(values)), max(1.0, max(values))
    counts, edges = histogram_counts(values, 10, low, high)
    expected_counts, expected_edges = np.histogram(np.asarray(values), bins=10, range=(low, high))
    assert counts == expected_counts.tolist()
    assert edges == expected_edges.tolist()  # float equality: the same bits
    assert sum(counts) == len(values)


@pytest.mark.parametrize("values", _samples(), ids=lambda v: f"{len(v)} values")
def test_the_mean_is_numpys_and_pandas(values: list[float]) -> None:
    mean = score_mean(values)
    assert mean == float(np.asarray(values).mean())
    assert mean == float(pd.Series(values, dtype=float).mean())


def test_values_outside_the_range_are_left_out_and_no_value_has_no_mean() -> None:
    counts, _ = histogram_counts([-1.0, 0.0, 0.95, 1.0, 1.5], 10, 0.0, 1.0)
    assert counts == [1, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert np.isnan(score_mean([]))


def test_grouped_sums_are_pandas_groupby_sums_in_first_seen_order() -> None:
    rows = [
        {"scorer_id": "b", "step": "analyze", "n": 1, "m": 10},
        {"scorer_id": "a", "step": "analyze", "n": 2, "m": 20},
        {"scorer_id": "b", "step": "analyze", "n": 3, "m": 30},
        {"scorer_id": "b", "step": "generateReason", "n": 4, "m": 40},
    ]
    sums = grouped_sums(rows, ("scorer_id", "step"), ("n", "m"))
    expected = pd.DataFrame(rows).groupby(["scorer_id", "step"], sort=False)[["n", "m"]].sum()
    assert list(sums) == list(expected.index)
    assert list(sums.values()) == expected.to_numpy().tolist()


def test_the_report_modules_import_neither_pandas_nor_numpy() -> None:
    code = (
        "import json, sys\n"
        "import core.exchange.html, core.reporting.table_rows\n"
        "print(json.dumps([m for m in ('pandas', 'numpy', 'plotly') if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_an_infinite_score_is_refused_naming_its_scorer() -> None:
    with pytest.raises(ValueError, match=r"scorer 'tone' has a score that is not a finite number"):
        histograms_of({"tone": [0.5, float("inf")]}, ["tone"])
