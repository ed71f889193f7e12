"""The cyclic collector paused around a bulk read (core/_collector.py): off inside, for every
thread, back on when the last caller inside leaves, and left as it was found."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from core._collector import collector_paused


@pytest.fixture(autouse=True)
def collector_back_on() -> Iterator[None]:
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off when the inner one leaves
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_gives_the_collector_back() -> None:
    gc.enable()
    with pytest.raises(RuntimeError, match="read failed"), collector_paused():
        raise RuntimeError("read failed")
    assert gc.isenabled()


def test_a_collector_found_off_is_left_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_it_resumes_only_when_the_last_of_two_threads_leaves() -> None:
    gc.enable()
    inside, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other_read() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)
        seen.append(gc.isenabled())

    thread = threading.Thread(target=other_read)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # this one left, the other thread is still reading
    release.set()
    thread.join(10)
    assert seen == [True] and gc.isenabled()
