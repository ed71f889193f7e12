"""The scorer desk through the Service: the catalog and the judge calls an experiment will make."""

from __future__ import annotations

from service_kit import (
    DATA,
)

from core.service import (
    Service,
)


def test_scorer_catalog_and_estimates(service: Service) -> None:
    catalog = {entry.id: entry for entry in service.scorer_catalog()}
    assert catalog["judged"].calls_judge and not catalog["tone-scorer"].calls_judge
    assert [s.kind for s in catalog["judged"].steps] == ["prompt", "prompt"]
    assert catalog["checks.includes"].steps[-1].name == "generateScore"
    assert catalog["fragile"].options[0].name == "fail_on"
    dataset = service.import_dataset("qa.csv", DATA)
    assert service.estimate_judge_calls(dataset.id, ["judged", "tone-scorer"]) == 6
    assert service.estimate_judge_calls(dataset.id, ["tone-scorer"]) == 0
