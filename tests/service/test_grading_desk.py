"""Pass/fail thresholds kept with an experiment, on SQLite and (when available) PostgreSQL:
set and read back, checked (unknown scorer, bounds outside 0..1, min above max), the verdict by
`check_threshold` (the CLI's rule), the pass rate and each item's mark, the JSON export and its
re-import, the HTML report, and deletion with the experiment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorelab_db import BACKENDS, database

from core.experiments.thresholds import Threshold
from core.records import ExperimentConfig, ScorerSpec
from core.service import InvalidInputError, Service, views

# checks.includes "right": 1 for a, b, c; 0 for d. Mean 0.75.
DATA = b"id,question,answer\na,q,right\nb,q,right\nc,q,right\nd,q,wrong\n"


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        empty = tmp_path / "samples"
        empty.mkdir()
        shared = Service(url, samples_dir=empty)
        try:
            yield shared
        finally:
            shared.store.close()


def run(service: Service) -> str:
    dataset = service.import_dataset("pf.csv", DATA)
    started = service.start_experiment(
        ExperimentConfig(
            name="pf",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "r"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "q", "id": "none"}),
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def test_thresholds_are_kept_checked_and_applied(service: Service) -> None:
    experiment_id = run(service)
    assert service.thresholds(experiment_id) == {}
    assert service.pass_fail(experiment_id).passed is None
    service.set_thresholds(experiment_id, {"r": 0.7, "none": {"max": 0.5}})
    assert service.thresholds(experiment_id) == {
        "r": Threshold(min=0.7),
        "none": Threshold(max=0.5),
    }
    found = service.pass_fail(experiment_id)
    assert found.passed is True
    assert [(r.id, r.passed, r.average_score) for r in found.results] == [
        ("r", True, 0.75),
        ("none", True, 0.0),
    ]
    assert found.items == {"a": True, "b": True, "c": True, "d": False}
    assert found.pass_rate == 0.75 and found.mark("d") == "✗" and found.mark("a") == "✓"
    service.set_thresholds(experiment_id, {"r": 0.8})  # replaces both
    failing = service.pass_fail(experiment_id)
    assert failing.passed is False and list(failing.thresholds) == ["r"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"nope": 0.5}, "Threshold for 'nope': experiment 'pf' has no such scorer"),
        ({"r": 1.5}, "threshold min must be a finite number between 0 and 1, got 1.5"),
        ({"r": {"min": 0.8, "max": 0.2}}, "threshold min 0.8 is greater than max 0.2"),
    ],
)
def test_bad_thresholds_are_refused_by_name(
    service: Service, given: dict[str, object], message: str
) -> None:
    experiment_id = run(service)
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(")):
        service.set_thresholds(experiment_id, given)
    assert service.thresholds(experiment_id) == {}


def test_exports_carry_them_and_the_import_keeps_them(service: Service) -> None:
    experiment_id = run(service)
    service.set_thresholds(experiment_id, {"r": {"min": 0.5, "max": 0.9}})
    results = service.pass_fail(experiment_id).json()
    detail = service.load_experiment(experiment_id)
    text = views.experiment_json_text(detail, thresholds=results)
    summary = json.loads(text)["summary"]
    assert summary["thresholdResults"][0]["id"] == "r"
    assert summary["thresholdResults"][0]["threshold"] == {"min": 0.5, "max": 0.9}
    imported = service.import_experiment_json(text.encode(), name="copy")
    assert service.thresholds(imported) == {"r": Threshold(min=0.5, max=0.9)}
    report = views.experiment_html(detail, thresholds=results)
    section = report[report.index('<section id="pass-fail">') :]
    assert "Passed every threshold." in section and "✓ passed" in section
    service.delete_experiment(imported)
    assert service.store.thresholds(imported) == {}
