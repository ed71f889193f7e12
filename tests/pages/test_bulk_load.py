"""Reading a large experiment runs without cyclic garbage collection, and what it read is
left out of later collections; the collector's own state is given back as it was."""

from __future__ import annotations

import gc

from pages.ui.data import bulk_load


def test_no_collection_while_reading_and_the_result_frozen() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with bulk_load():
        assert not gc.isenabled()
        read = [{"score": n / 10} for n in range(1_000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(read)


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with bulk_load():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
