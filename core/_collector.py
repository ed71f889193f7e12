"""The cyclic collector paused while a bulk read builds many objects at once (docs/storage.md,
Reading a large experiment).

Compare reads 50,000 stored runs per experiment as tuples and dicts of text, which hold no
reference cycle; the collector still runs a pass for every 700 objects made, and a full pass
over the whole heap (the dashboard's imported modules and caches) every few dozen. Measured on
Compare at 10,000 items x 5 scorers: half of reading and pairing two experiments went to those
passes (1.2 s with them, 0.6 s without). A paused collector leaks nothing: what became cyclic
garbage meanwhile is collected by the next pass after the pause ends."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_pausing = 0
"""Callers inside `collector_paused` now (any thread): it resumes when the last one leaves."""
_resume = False
"""Whether the collector was enabled when the first of them came in."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside (for every thread: the collector is the process's); the
    collector enabled again as it was once the last caller inside leaves."""
    global _pausing, _resume
    with _lock:
        if _pausing == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _lock:
            _pausing -= 1
            if _pausing == 0 and _resume:
                gc.enable()
