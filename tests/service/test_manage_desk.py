"""The manage desk through the Service (SQLite, and PostgreSQL when available): renames, an
experiment's note and tags, finding an upload already stored, what a deletion takes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from planted import CATALOG, GATE, run
from scorelab_db import BACKENDS, database
from sqlalchemy import create_engine

from core.records import ColumnMapping, ExperimentConfig, ScorerSpec
from core.service import ExperimentConfigError, InvalidInputError, NotFoundError, Service
from core.service.manage import MAX_TAG_CHARS, MAX_TAGS
from core.storage import Store
from core.storage.schema import alembic_config


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    service.store.close()


# ---- renames, notes and tags ----


def test_rename_dataset_and_experiment(service: Service) -> None:
    experiment_id = run(service)
    dataset_id = service.get_experiment(experiment_id).dataset_id
    assert service.rename_dataset(dataset_id, "  TruthfulQA v2 ").name == "TruthfulQA v2"
    assert service.get_experiment(experiment_id).dataset_name == "TruthfulQA v2"
    assert service.rename_experiment(experiment_id, "baseline").name == "baseline"
    assert [i.name for i in service.list_experiments()] == ["baseline"]
    for bad, message in [("  ", "empty"), ("x" * 201, "201 characters"), ("a\nb", "one line")]:
        with pytest.raises(InvalidInputError, match=message):
            service.rename_experiment(experiment_id, bad)
        with pytest.raises(InvalidInputError, match="dataset name"):
            service.rename_dataset(dataset_id, bad)
    with pytest.raises(NotFoundError):
        service.rename_experiment("nope", "x")
    with pytest.raises(NotFoundError):
        service.rename_dataset("nope", "x")


def test_note_and_tags_are_stored_listed_and_checked(service: Service) -> None:
    experiment_id = run(service)
    assert service.get_experiment(experiment_id).note is None
    assert service.get_experiment(experiment_id).tags == []
    info = service.set_experiment_note(
        experiment_id, "  Prompt v3, temperature 0.  ", [" prompt-v3", "baseline", "Baseline"]
    )
    assert info.note == "Prompt v3, temperature 0."
    assert info.tags == ["prompt-v3", "baseline"]  # blanks trimmed, duplicates dropped
    listed = service.list_experiments()[0]
    assert (listed.note, listed.tags) == (info.note, info.tags)
    assert Service(service.store.url, catalog=CATALOG).get_experiment(experiment_id).tags == [
        "prompt-v3",
        "baseline",
    ]
    cleared = service.set_experiment_note(experiment_id, "   ", [])
    assert (cleared.note, cleared.tags) == (None, [])


@pytest.mark.parametrize(
    ("note", "tags", "message"),
    [
        (None, ["x" * (MAX_TAG_CHARS + 1)], f"Tag 1 .* at most {MAX_TAG_CHARS}"),
        (None, [f"t{n}" for n in range(MAX_TAGS + 1)], f"at most {MAX_TAGS}"),
        (None, ["ok", "  "], "Tag 2 is empty"),
        (None, ["a,b"], "comma"),
        (None, "one string", "list"),
        ("n" * 5_000, [], "note is 5,000 characters"),
    ],
)
def test_bad_notes_and_tags_are_refused_and_nothing_changes(
    service: Service, note: str | None, tags: Any, message: str
) -> None:
    experiment_id = run(service)
    service.set_experiment_note(experiment_id, "kept", ["kept"])
    with pytest.raises(InvalidInputError, match=message):
        service.set_experiment_note(experiment_id, note, tags)
    info = service.get_experiment(experiment_id)
    assert (info.note, info.tags) == ("kept", ["kept"])


# ---- finding a stored upload, deleting ----


def test_the_same_content_is_found_whatever_the_file(service: Service) -> None:
    first = service.import_dataset("one.csv", b"input,output\nq,a\n")
    report = service.preview_import("two.jsonl", b'{"input": "q", "output": "a"}\n')
    assert report.fingerprint == first.fingerprint
    assert service.find_dataset(report.fingerprint or "") == first
    assert service.find_dataset("0" * 64) is None
    assert service.find_dataset("") is None


def test_deletion_impact_counts_what_goes_and_delete_dataset_cascades(service: Service) -> None:
    first = run(service, name="first")
    dataset_id = service.get_experiment(first).dataset_id
    second = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=[ScorerSpec(scorer_id="reasoned")])
    )
    service.wait(second, timeout=60)
    other = run(service, b"input,output\nq,a\n", name="other")
    impact = service.dataset_deletion(dataset_id)
    stored = [service.store.result_count(i) for i in (first, second)]
    assert stored[0] > stored[1] > 0
    assert (impact.kind, impact.experiments, impact.results, impact.reviews) == (
        "dataset",
        2,
        sum(stored),
        0,
    )
    assert impact.items == service.get_dataset(dataset_id).item_count and impact.running == 0
    one = service.experiment_deletion(second)
    assert (one.kind, one.experiments, one.results) == ("experiment", 1, stored[1])
    assert one.name == service.get_experiment(second).name
    service.delete_dataset(dataset_id)
    assert [i.id for i in service.list_experiments()] == [other]
    assert [d.name for d in service.list_datasets()] == ["other"]
    assert service.failures(first) == []  # its failures went with it
    with pytest.raises(NotFoundError):
        service.dataset_deletion(dataset_id)
    with pytest.raises(NotFoundError):
        service.experiment_deletion(first)


def test_a_running_experiment_is_counted_and_blocks_the_deletion(service: Service) -> None:
    GATE.clear()
    dataset = service.import_dataset("held.csv", b"input,output\nq,a\n")
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="held")])
    )
    try:
        assert service.dataset_deletion(dataset.id).running == 1
        assert service.experiment_deletion(started).running == 1
        with pytest.raises(ExperimentConfigError, match="Cancel"):
            service.delete_dataset(dataset.id)
        with pytest.raises(ExperimentConfigError, match="Cancel"):
            service.delete_experiment(started)
    finally:
        GATE.set()
        service.wait(started, timeout=60)
    assert service.dataset_deletion(dataset.id).running == 0
    service.delete_dataset(dataset.id)
    assert service.list_experiments() == []


def test_the_reviews_an_experiment_holds_are_counted_and_go_with_it(service: Service) -> None:
    experiment_id = run(service)
    kept = run(service, b"input,output\nq,e\n", name="kept")
    dataset_id = service.get_experiment(experiment_id).dataset_id
    item_id = service.dataset_items(dataset_id)[0].id
    for reviewer in ("ana", "bo"):
        service.save_review(experiment_id, item_id, "reasoned", "wrong", reviewer=reviewer)
    other_item = service.dataset_items(service.get_experiment(kept).dataset_id)[0].id
    service.save_review(kept, other_item, "reasoned", "right", reviewer="ana")
    assert service.experiment_deletion(experiment_id).reviews == 2
    assert service.dataset_deletion(dataset_id).reviews == 2
    service.delete_experiment(experiment_id)
    assert service.store.review_count([experiment_id]) == 0
    assert service.store.review_count([kept]) == 1  # another experiment's reviews stay


def test_a_database_from_before_notes_is_upgraded(database_url: str) -> None:
    store = Store(database_url)
    dataset = store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="f" * 64,
        columns=["input"],
        mapping=ColumnMapping(input="input", output="input"),
        items=[],
    )
    store.close()
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0005")
        connection.exec_driver_sql(
            "INSERT INTO experiments (id, name, dataset_id, dataset_fingerprint, concurrency,"
            " status, total_items, total_runs, done_runs, succeeded_runs, failed_runs,"
            " judge_calls, judge_attempts, created_at, judge_cache)"
            f" VALUES ('old', 'old run', '{dataset.id}', 'f', 1, 'completed', 0, 0, 0, 0, 0,"
            " 0, 0, '2026-01-01 00:00:00+00:00', false)"
        )
    engine.dispose()
    upgraded = Store(database_url)
    try:
        info = upgraded.get_experiment("old")
        assert (info.note, info.tags) == (None, [])
        assert upgraded.set_experiment_note("old", "now", ["t"]).tags == ["t"]
    finally:
        upgraded.close()
