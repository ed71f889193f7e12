"""Stored results do not echo their item's texts (issue 22; docs/storage.md, The write path):
a run that saw the item's own input, output, ground truth and request context is stored
without them and rebuilt from the item when read, so every reader (exports, pages, Compare)
sees what the scorer returned, and the JSON export is the one it was with the texts stored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.experiments.engine import run_outcome
from core.records import ExperimentConfig, ScorerSpec
from core.service import Service
from core.service.views import experiment_json_text

CSV = (
    "id,question,answer,expected,category\n"
    "a,What is the capital of France?,Paris is the capital of France.,Paris,geo\n"
    'b,"Name two rivers, please",The Seine and the Loire (é ü).,Seine Loire,geo\n'
    "c,Say nothing,Nothing.,something,\n"
).encode()
SCORERS = ("keyword-coverage-scorer", "completeness-scorer", "textual-difference-scorer")


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        service = Service(url, samples_dir=tmp_path / "samples")
        yield service
        service.store.close()


def stored(service: Service, experiment_id: str) -> list[tuple[bool, dict[str, Any]]]:
    """(item_texts, the result JSON as stored) of each row, in the order written."""
    query = sqlalchemy.text(
        "SELECT item_texts, result FROM scorer_results WHERE experiment_id = :id ORDER BY id"
    )
    with service.store.engine.connect() as connection:
        rows = connection.execute(query, {"id": experiment_id}).all()
    return [
        (bool(texts), result if isinstance(result, dict) else json.loads(result))
        for texts, result in rows
    ]


def run_experiment(service: Service) -> str:
    dataset = service.import_dataset("texts.csv", CSV)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            name="texts",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=scorer) for scorer in SCORERS],
            concurrency=2,
        )
    )
    assert service.wait(experiment_id, timeout=60).status == "completed"
    return experiment_id


def test_results_are_stored_without_the_item_texts_and_read_back_with_them(
    service: Service,
) -> None:
    experiment_id = run_experiment(service)
    rows = stored(service, experiment_id)
    assert len(rows) == 3 * len(SCORERS)
    for item_texts, result in rows:
        assert item_texts
        assert not {"input", "output", "groundTruth", "requestContext"} & set(result)
        assert result["runId"] and "score" in result
    info = service.get_experiment(experiment_id)
    items = {item.id: item for item in service.dataset_items(info.dataset_id)}
    scorers = {
        scorer: service.build_scorer(ScorerSpec(scorer_id=scorer), None) for scorer in SCORERS
    }
    outcomes = service.store.experiment_results(experiment_id)
    assert len(outcomes) == len(rows)
    for outcome in outcomes:
        # What the scorer returns for this item now, to_dict() as the engine made it: the
        # same, key for key and in the same order, but for the run's own id.
        item = items[outcome.item_id]
        fresh = asyncio.run(run_outcome(item, scorers[outcome.scorer_id]))
        assert fresh.result is not None and outcome.result is not None
        expected = {**fresh.result, "runId": outcome.result["runId"]}
        assert list(outcome.result.items()) == list(expected.items())
        assert outcome.result["input"] == item.input
        assert outcome.result.get("requestContext") == (item.metadata or None)


def test_the_json_export_is_the_same_as_with_the_texts_stored(service: Service) -> None:
    experiment_id = run_experiment(service)
    without_texts = experiment_json_text(service.load_experiment(experiment_id))
    # The same results stored whole, as every row was before (the texts echoed in the JSON).
    outcomes = service.store.experiment_results(experiment_id)
    with service.store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.text("DELETE FROM scorer_results WHERE experiment_id = :id"),
            {"id": experiment_id},
        )
    assert service.store.add_results(experiment_id, outcomes) == len(outcomes)
    rows = stored(service, experiment_id)
    assert rows and all(not texts and "input" in result for texts, result in rows)
    with_texts = experiment_json_text(service.load_experiment(experiment_id))
    assert with_texts == without_texts
    assert '"input": "What is the capital of France?"' in with_texts
