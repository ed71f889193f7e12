"""The Store as one entry over its parts by subject: every part's method is a method of the
Store that calls it, the parts share one Database, and a test's patch on the Store still wins."""

from __future__ import annotations

from pathlib import Path

from core.storage import Store

PARTS = ("datasets", "experiments", "results", "reviewing", "manage")


def test_every_part_method_is_a_method_of_the_store_that_calls_it(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'parts.db'}")
    try:
        seen: dict[str, str] = {}
        for part in PARTS:
            shelf = getattr(store, part)
            for name, value in vars(type(shelf)).items():
                if not callable(value) or name.startswith("_"):
                    continue
                assert name not in seen, f"{name} is on both {seen[name]} and {part}"
                seen[name] = part
                bound = getattr(store, name)
                assert bound.__self__ is shelf, f"Store.{name} does not call store.{part}"
                assert bound.__func__ is value
        assert {"save_dataset", "add_rows", "result_page", "save_review", "rename_dataset"} <= set(
            seen
        )
    finally:
        store.close()


def test_the_parts_share_one_database(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'parts.db'}", stale_after_s=7.0)
    try:
        assert {id(getattr(store, part)._db) for part in PARTS} == {id(store.database)}
        assert store.engine is store.database.engine and store.stale_after_s == 7.0
        assert store._settled is store.database.settled  # one cache of settled totals
    finally:
        store.close()
