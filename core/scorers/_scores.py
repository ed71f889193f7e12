"""Scores as Mastra computes and shows them: half-up rounding to two decimals, and display.

Mastra rounds half up (docs/scorers.md, "Rounding"); Python's `round` rounds half to even,
so it is never used for scores.
"""

from __future__ import annotations

import math
import sys

__all__ = ["format_score", "round_to_two_decimals"]


def round_to_two_decimals(value: float) -> float:
    """Round half up to two decimals, as Mastra's `roundToTwoDecimals`."""
    shifted = (value + sys.float_info.epsilon) * 100
    return math.floor(shifted + 0.5) / 100


def format_score(value: float) -> str:
    """A score for display: `1` rather than `1.0`, `0.43` as is."""
    return str(int(value)) if float(value).is_integer() else str(value)
