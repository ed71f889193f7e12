"""The mean of finite scores, which stays finite: a plain sum of two scores near the largest
double overflows to inf (or raises in `math.fsum`), while the mean itself is representable."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["finite_mean"]


def finite_mean(values: Sequence[float]) -> float | None:
    """The mean of `values` (finite numbers), or None when there are none."""
    if not values:
        return None
    try:
        return math.fsum(values) / len(values)
    except OverflowError:  # scale first: each share is at most max/len, so their sum fits
        return math.fsum(value / len(values) for value in values)
