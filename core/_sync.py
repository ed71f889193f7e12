"""Blocking twins of the async entry points.

Coroutines run on one event loop owned by a daemon thread, so a `*_sync` call works the same
whether or not the caller's thread already runs a loop (Jupyter, Streamlit), and clients that
litellm caches per loop stay valid across calls.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_coroutine_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None
_loop_pid: int | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop, _loop_thread, _loop_pid
    with _lock:
        # A forked child inherits the variables but not the thread: start a new one there.
        if (
            _loop is None
            or _loop_pid != os.getpid()
            or _loop_thread is None
            or not _loop_thread.is_alive()
        ):
            _loop = asyncio.new_event_loop()
            _loop_thread = threading.Thread(
                target=_loop.run_forever, name="scorelab-event-loop", daemon=True
            )
            _loop_thread.start()
            _loop_pid = os.getpid()
        return _loop


def run_coroutine_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to completion on the background loop and return its result."""
    loop = _background_loop()
    if threading.current_thread() is _loop_thread:
        coroutine.close()
        raise RuntimeError(
            "a *_sync function was called from inside an async step; use `await` there instead"
        )
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise
