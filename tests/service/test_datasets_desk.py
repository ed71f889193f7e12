"""The dataset desk on its own: a context holding only a store, jobs and a samples folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.errors import ExperimentConfigError
from core.records import ColumnMapping
from core.service.context import DeskContext
from core.service.datasets_desk import DatasetsDesk
from core.storage import NotFoundError, Store

DATA = b"question,answer\nq1,a1\nq2,a2\n"


class _Jobs:
    """The two questions the desk asks of the jobs."""

    def __init__(self, running: list[str]) -> None:
        self._running = running
        self.forgotten: list[str] = []

    def running(self) -> list[str]:
        return list(self._running)

    def forget(self, experiment_id: str) -> None:
        self.forgotten.append(experiment_id)


def _desk(store: Store, samples_dir: Path, running: list[str]) -> DatasetsDesk:
    """The desk over a context holding only a store, jobs and a samples folder."""
    jobs: Any = _Jobs(running)
    catalog: Any = None  # the dataset desk builds no scorer
    return DatasetsDesk(DeskContext(store, catalog, jobs, samples_dir))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(f"sqlite:///{tmp_path / 'desk.db'}")
    yield opened  # type: ignore[misc]
    opened.close()


MAPPING = ColumnMapping(input="question", output="answer")


def test_an_upload_is_previewed_then_stored_and_listed(store: Store, tmp_path: Path) -> None:
    desk = _desk(store, tmp_path, [])
    report = desk.preview_import("qa.csv", DATA, MAPPING)
    assert report.row_count == 2 and not report.problems
    assert desk.list_datasets() == []  # a preview stores nothing
    info = desk.import_dataset("qa.csv", DATA, name="qa", mapping=MAPPING)
    assert [d.id for d in desk.list_datasets()] == [info.id]
    assert [item.input for item in desk.dataset_items(info.id)] == ["q1", "q2"]
    assert [item.id for item in desk.iter_dataset_items(info.id)] == [
        item.id for item in desk.dataset_items(info.id)
    ]
    again = desk.import_dataset("qa.csv", DATA, mapping=MAPPING, reuse_existing=True)
    assert again.id == info.id  # the same content found by its fingerprint


def test_a_dataset_is_deleted_unless_one_of_its_experiments_runs(
    store: Store, tmp_path: Path
) -> None:
    info = _desk(store, tmp_path, []).import_dataset("qa.csv", DATA, mapping=MAPPING)
    ids = store.experiment_ids_of(info.id)
    assert ids == []  # none yet: deleting frees nothing in the jobs
    desk = _desk(store, tmp_path, [])
    desk.delete_dataset(info.id)
    with pytest.raises(NotFoundError):
        desk.get_dataset(info.id)
    assert desk._ctx.jobs.forgotten == []  # type: ignore[attr-defined]


def test_deleting_is_refused_while_an_experiment_of_the_dataset_runs(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _desk(store, tmp_path, []).import_dataset("qa.csv", DATA, mapping=MAPPING)
    monkeypatch.setattr(store, "experiment_ids_of", lambda dataset_id: ["e1"])
    desk = _desk(store, tmp_path, ["e1"])
    with pytest.raises(ExperimentConfigError, match="Cancel the dataset's running experiments"):
        desk.delete_dataset(info.id)
    assert desk.get_dataset(info.id).id == info.id  # still there


def test_the_samples_are_imported_once_each(store: Store, tmp_path: Path) -> None:
    (tmp_path / "one.csv").write_bytes(DATA)
    desk = _desk(store, tmp_path, [])
    first = desk.ensure_sample_datasets()
    assert [d.file_name for d in first] == ["one.csv"]
    assert [d.id for d in desk.ensure_sample_datasets()] == [d.id for d in first]
    assert len(desk.list_datasets()) == 1
