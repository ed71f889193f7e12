"""The collector and a large run: the heap as it is once the run is under way kept out of the
cyclic collector's full passes while it runs (docs/core.md, Experiments).

A scorer's lexicons, the imported modules and the store's machinery are a few hundred
thousand objects that never become garbage during a run; every full pass of the collector
walks them all again (about 0.2 s each, a few dozen times per 100,000 runs: a third of a fast
scorer's time). `gc.freeze` moves what is alive to a generation the collector skips; the last
run to end moves it back (`gc.unfreeze`), so whatever of it became garbage meanwhile is
collected then, never leaked. Objects made during the run are collected as always."""

from __future__ import annotations

import gc
import threading

__all__ = ["freeze_heap", "refreeze_heap", "thaw_heap"]

_lock = threading.Lock()
_holders = 0
"""Runs that froze the heap and have not ended: it is thawed when the last one ends."""


def freeze_heap() -> None:
    """Keep every object alive now out of the collector's passes until `thaw_heap`."""
    global _holders
    with _lock:
        gc.freeze()
        _holders += 1


def refreeze_heap() -> None:
    """Freeze what the run made since (a scorer's caches grown with the items' words), the
    young generations collected first so that no garbage of theirs is frozen."""
    with _lock:
        gc.collect(1)
        gc.freeze()


def thaw_heap() -> None:
    """One run that called `freeze_heap` ended: the last to end gives the heap back to the
    collector."""
    global _holders
    with _lock:
        _holders -= 1
        if _holders == 0:
            gc.unfreeze()
