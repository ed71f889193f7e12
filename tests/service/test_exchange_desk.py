"""The exchange desk through the Service: an exported experiment imported back, its failures in
memory and its pass/fail thresholds kept (the Mastra store's desk work: tests/mastra)."""

from __future__ import annotations

import json

from service_kit import DATA, run

from core.exchange.exports import experiment_json_text
from core.records import ScorerSpec
from core.service import Service


def test_an_export_comes_back_with_its_failures_and_thresholds(service: Service) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),
        ScorerSpec(scorer_id="checks.includes", options={"value": "answer"}),
    )
    kept = service.set_thresholds(experiment_id, {"checks.includes": {"min": 0.9}})
    text = experiment_json_text(
        service.load_experiment(experiment_id), thresholds=service.pass_fail(experiment_id).json()
    )
    imported = service.import_experiment_json(text.encode(), name="back")
    assert imported != experiment_id and service.get_experiment(imported).name == "back"
    assert service.thresholds(imported) == kept
    assert [(f.item_id, f.scorer_id) for f in service.failures(imported)] == [("c", "fragile")]
    assert len(service.load_experiment(imported).results) == 5


def test_an_export_without_thresholds_imports_none(service: Service) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(service, dataset.id, ScorerSpec(scorer_id="tone-scorer"))
    document = json.loads(experiment_json_text(service.load_experiment(experiment_id)))
    document.get("summary", {}).pop("thresholdResults", None)
    imported = service.import_experiment_json(json.dumps(document).encode())
    assert service.thresholds(imported) == {}
