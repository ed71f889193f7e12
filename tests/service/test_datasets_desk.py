"""The dataset desk on its own: a context holding only a store, jobs and a samples folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from service_kit import DATA as QA_DATA

import core.service.datasets_desk
from core.errors import ExperimentConfigError
from core.records import ColumnMapping
from core.service import DatasetImportError, Service
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


# ---- through the Service ----


def test_import_and_preview(service: Service) -> None:
    report = service.preview_import("qa.csv", QA_DATA)
    assert report.ok and report.row_count == 3 and service.list_datasets() == []
    info = service.import_dataset("qa.csv", QA_DATA)
    assert (info.name, info.item_count, info.format) == ("qa", 3, "csv")
    assert [i.id for i in service.dataset_items(info.id)] == ["a", "b", "c"]
    named = service.import_dataset("qa.csv", QA_DATA, name="Mine")
    assert named.name == "Mine" and named.id != info.id
    assert service.import_dataset("qa.csv", QA_DATA, reuse_existing=True).id in {info.id, named.id}


def test_import_with_an_explicit_mapping(service: Service) -> None:
    mapping = ColumnMapping(input="answer", output="question", metadata=["expected"])
    info = service.import_dataset("qa.csv", QA_DATA, mapping=mapping)
    first = service.dataset_items(info.id)[0]
    assert (first.id, first.input, first.output) == ("1", "answer 0", "question 0")
    assert first.metadata == {"expected": "truth 0"}


def test_a_parsed_upload_is_previewed_and_imported_without_reading_it_again(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = service.read_upload("qa.csv", QA_DATA)

    def no_second_read(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the file was read again")

    monkeypatch.setattr(core.service.datasets_desk, "read_upload", no_second_read)
    proposed = service.preview(parsed)
    assert proposed.ok and proposed.mapping_used is not None
    assert proposed.mapping_used.input == "question"
    swapped = ColumnMapping(id="id", input="answer", output="question", metadata=["expected"])
    report = service.preview(parsed, swapped)
    assert report.ok and report.mapping_used == swapped
    assert report.fingerprint != proposed.fingerprint
    wrong = ColumnMapping(input="answer", output="reply")
    with pytest.raises(DatasetImportError) as raised:
        service.import_parsed(parsed, wrong)
    assert [p.code for p in raised.value.report.problems] == ["missing_column"]
    info = service.import_parsed(parsed, swapped, name="Swapped")
    assert (info.name, info.file_name, info.fingerprint) == (
        "Swapped",
        "qa.csv",
        report.fingerprint,
    )
    first = service.dataset_items(info.id)[0]
    assert (first.id, first.input, first.output) == ("a", "answer 0", "question 0")
    assert service.import_parsed(parsed, swapped, reuse_existing=True).id == info.id


def test_a_bad_file_raises_with_its_problems_and_stores_nothing(service: Service) -> None:
    with pytest.raises(DatasetImportError) as raised:
        service.import_dataset("qa.csv", b"id,question,answer\na,q,\na,q,x\n")
    problems = raised.value.report.problems
    assert [p.code for p in problems] == ["empty_output", "duplicate_id"]
    assert str(raised.value) == "qa.csv: Row 1: the output (column 'answer') is empty (and 1 more)"
    assert service.list_datasets() == []


def test_sample_datasets_are_imported_once(service: Service) -> None:
    samples = service.samples_dir
    assert service.ensure_sample_datasets() == []
    samples.mkdir()
    (samples / "one.csv").write_bytes(QA_DATA)
    (samples / "two.jsonl").write_bytes(b'{"input": "a", "output": "b"}\n')
    (samples / "README.md").write_text("not a dataset")
    (samples / "broken.csv").write_bytes(b"foo,bar\n1,2\n")
    first = service.ensure_sample_datasets()
    assert sorted(d.name for d in first) == ["one", "two"]
    again = service.ensure_sample_datasets()
    assert sorted(d.id for d in again) == sorted(d.id for d in first)
    assert len(service.list_datasets()) == 2
