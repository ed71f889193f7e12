"""The quick experiments list (core/storage/listing.py, read through the driver alone for
`scorelab experiments` and a refused `scorelab resume`) gives the Store's figures exactly, on
SQLite and PostgreSQL, and leaves to the Store every database it should not answer for."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.records import ExperimentConfig, ExperimentListing, ScorerSpec
from core.service import Service, StorageError
from core.service.listing import experiment_listing, listed_experiment
from core.storage.listing import listed_experiments

ROWS = b"id,question,answer\n" + b"".join(
    b"i%d,question %d,%s\n" % (n, n, b"right" if n % 2 else b"wrong") for n in range(6)
)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(url: str) -> Iterator[Service]:
    service = Service(url)
    try:
        yield service
    finally:
        service.store.close()


def _run(service: Service, name: str) -> str:
    dataset = service.import_dataset(f"{name}.csv", ROWS)
    started = service.start_experiment(
        ExperimentConfig(
            name=name,
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "a"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "x", "id": "b"}),
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def _set(service: Service, experiment_id: str, **values: object) -> None:
    with service.store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.text(
                "UPDATE experiments SET "
                + ", ".join(f"{key} = :{key}" for key in values)
                + " WHERE id = :id"
            ),
            {**values, "id": experiment_id},
        )


def test_the_quick_list_equals_the_stores(service: Service, url: str) -> None:
    done, stale, live = (_run(service, name) for name in ("done", "stale", "live"))
    now = datetime.now(UTC)
    _set(service, stale, status="running", finished_at=None, heartbeat_at=now - timedelta(hours=1))
    _set(service, live, status="running", finished_at=None, heartbeat_at=now, failed_runs=2)
    quick = listed_experiments(url)
    assert quick is not None  # answered here, not left to the Store
    expected = [ExperimentListing.of(info) for info in service.list_experiments()]
    assert quick == expected
    by_id = {listing.id: listing for listing in quick}
    assert by_id[done].status == "completed" and by_id[done].succeeded == 12
    assert by_id[stale].status == "interrupted"  # no heartbeat for an hour
    last_beat = by_id[stale].finished_at  # an interrupted run ended at its last heartbeat
    assert last_beat is not None
    assert abs(last_beat - (now - timedelta(hours=1))) < timedelta(seconds=1)
    assert by_id[live].status == "running" and by_id[live].failed == 2
    assert [listing.id for listing in quick] == [live, stale, done]  # newest first
    assert all(listing.created_at.tzinfo is not None for listing in quick)

    (one,) = listed_experiments(url, stale) or []
    assert one == by_id[stale]
    assert listed_experiments(url, "no-such-id") == []
    assert listed_experiment(url, "no-such-id") is None
    assert experiment_listing(url) == expected


def test_a_database_at_another_revision_is_left_to_the_store(service: Service, url: str) -> None:
    experiment_id = _run(service, "other")
    assert listed_experiment(url, experiment_id) is not None
    with service.store.engine.begin() as connection:  # as a newer scorelab would leave it
        connection.execute(sqlalchemy.text("UPDATE alembic_version SET version_num = 'ffff'"))
    assert listed_experiments(url) is None
    assert listed_experiment(url, experiment_id) is None
    with pytest.raises(StorageError, match="newer version"):  # the Store reports it, as before
        experiment_listing(url)


def test_what_the_driver_cannot_answer_is_left_to_the_store(tmp_path: Path) -> None:
    assert listed_experiments(f"sqlite:///{tmp_path / 'missing.db'}") is None
    assert not (tmp_path / "missing.db").exists()  # a read never creates the file
    assert listed_experiments("sqlite://") is None  # in memory: only the Store has it
    assert listed_experiments("mysql://nowhere/db") is None
    listed = experiment_listing(f"sqlite:///{tmp_path / 'new.db'}")  # the Store creates it
    assert listed == []
    assert listed_experiments(f"sqlite:///{tmp_path / 'new.db'}") == []
