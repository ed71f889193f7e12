"""Wall-clock helpers shared by the judge and the experiment engine."""

from __future__ import annotations

import time

__all__ = ["elapsed_ms"]


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started`, a `time.perf_counter()` reading."""
    return round((time.perf_counter() - started) * 1000)
