"""The resampled AUCs of the label agreement's bootstrap, counted per distinct score, are
SciPy's Mann-Whitney U / (n1 x n0) exactly, ties included, for any batch shape."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from core.reporting.agreement import _pair_auc


@pytest.mark.parametrize(
    ("batch", "positives", "negatives"), [((), 5, 7), ((3,), 10, 1), ((2, 4), 60, 45)]
)
def test_pair_auc_is_the_mann_whitney_share(
    batch: tuple[int, ...], positives: int, negatives: int
) -> None:
    rng = np.random.default_rng(7)
    # Scores on a coarse grid, so that many pairs tie.
    wins = np.round(rng.random((*batch, positives)), 1)
    losses = np.round(rng.random((*batch, negatives)) * 0.8, 1)
    expected = mannwhitneyu(wins, losses, axis=-1).statistic / (positives * negatives)
    found = _pair_auc(wins, losses)
    assert np.shape(found) == batch
    np.testing.assert_array_equal(found, expected)


def test_pair_auc_extremes() -> None:
    assert _pair_auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert _pair_auc(np.array([0.1]), np.array([0.5, 0.9])) == 0.0
    assert _pair_auc(np.array([0.5, 0.5]), np.array([0.5])) == 0.5
