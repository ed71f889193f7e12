"""The Service as one door: one per process, and each desk method reachable under its old name."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.scorers import PREBUILT
from core.scorers.catalog import ScorerCatalog
from core.service import NotFoundError, Service, get_service


def test_get_service_is_one_per_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import core.service as module

    monkeypatch.setattr(module, "_service", None)
    monkeypatch.setenv("SCORELAB_DATABASE_URL", f"sqlite:///{tmp_path / 'one.db'}")
    assert get_service() is get_service()
    assert get_service().store.url.endswith("one.db")


DESKS = (
    "datasets",
    "scorers",
    "runs",
    "experiments",
    "results",
    "reviewing",
    "theming",
    "grading",
    "manage",
    "exchange",
)


def _public(desk: object) -> list[str]:
    return [
        name
        for name, value in vars(type(desk)).items()
        if callable(value) and not name.startswith("_")
    ]


def test_every_desk_method_is_a_method_of_the_service_that_calls_it(tmp_path: Path) -> None:
    door = Service(f"sqlite:///{tmp_path / 'door.db'}", samples_dir=tmp_path)
    try:
        seen: dict[str, str] = {}
        for part in DESKS:
            desk = getattr(door, part)
            for name in _public(desk):
                assert name not in seen, f"{name} is on both {seen[name]} and {part}"
                seen[name] = part
                bound = getattr(door, name)
                assert bound.__self__ is desk, f"Service.{name} does not call service.{part}"
                assert bound.__func__ is getattr(type(desk), name)
                assert getattr(Service, name).__doc__ == getattr(type(desk), name).__doc__
        # What the pages and the CLI call (a sample of the old names) is still there.
        for name in ("start_experiment", "result_page", "save_review", "themes", "pass_fail"):
            assert name in seen
        assert len(seen) >= 65  # the 65 public methods the Service had before the desks, and more
    finally:
        door.store.close()


def test_the_desks_share_one_context_and_a_swapped_catalog_reaches_them(tmp_path: Path) -> None:
    door = Service(f"sqlite:///{tmp_path / 'door.db'}", samples_dir=tmp_path)
    try:
        contexts = {id(getattr(door, part)._ctx) for part in DESKS}
        assert contexts == {id(door.context)}
        door.catalog = ScorerCatalog({"tone-scorer": PREBUILT["tone-scorer"]})
        assert len(PREBUILT) > 1
        assert [entry.id for entry in door.scorer_catalog()] == ["tone-scorer"]
        assert [entry.id for entry in door.scorers.scorer_catalog()] == ["tone-scorer"]
    finally:
        door.store.close()


def test_an_instance_attribute_still_overrides_a_delegated_method(tmp_path: Path) -> None:
    door = Service(f"sqlite:///{tmp_path / 'door.db'}", samples_dir=tmp_path)
    try:
        door.list_experiments = lambda: ["patched"]  # type: ignore[method-assign,assignment,misc]
        assert door.list_experiments() == ["patched"]  # what a test's monkeypatch relies on
        assert door.experiments.list_experiments() == []
    finally:
        door.store.close()


def test_a_delegated_method_taken_from_the_class_calls_the_desk(tmp_path: Path) -> None:
    door = Service(f"sqlite:///{tmp_path / 'door.db'}", samples_dir=tmp_path)
    try:
        original = Service.list_experiments  # what a test keeps before patching the class
        assert original(door) == [] and Service.get_dataset.__doc__
        with pytest.raises(NotFoundError, match="No dataset with id 'nope'"):
            Service.get_dataset(door, "nope")
    finally:
        door.store.close()
