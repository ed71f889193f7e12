"""The experiment desk through the Service: an experiment read whole or a page of items at a
time, with the failures this process holds; deleted."""

from __future__ import annotations

import pytest
from service_kit import DATA, Turnstile, run, start_gated

from core.records import ScorerSpec
from core.service import ExperimentConfigError, NotFoundError, Service


def _experiment(service: Service) -> str:
    dataset = service.import_dataset("qa.csv", DATA)
    return run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),  # fails on the third item
        ScorerSpec(scorer_id="checks.includes", options={"value": "answer"}),
    )


def test_an_experiment_is_read_whole_and_a_page_at_a_time_alike(service: Service) -> None:
    experiment_id = _experiment(service)
    assert [info.id for info in service.list_experiments()] == [experiment_id]
    whole = service.load_experiment(experiment_id)
    assert [item.id for item in whole.items] == ["a", "b", "c"]
    assert len(whole.results) == 5 and whole.failures_in_memory
    assert [(f.item_id, f.scorer_id) for f in whole.failures] == [("c", "fragile")]
    pages = list(service.experiment_pages(experiment_id, page_size=2))
    assert [[item.id for item in page.items] for page in pages] == [["a", "b"], ["c"]]
    assert [len(page.results) for page in pages] == [4, 1]
    assert [f.item_id for page in pages for f in page.failures] == ["c"]
    paged = {(r.item_id, r.scorer_id): r.score for page in pages for r in page.results}
    assert paged == {(r.item_id, r.scorer_id): r.score for r in whole.results}
    assert len(service.sample_results(experiment_id, limit=2)) == 2
    assert [item.id for item in service.sample_items(whole.info.dataset_id, 2)] == ["a", "b"]


def test_an_empty_experiment_still_gives_one_page(service: Service) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(service, dataset.id, ScorerSpec(scorer_id="tone-scorer"))
    assert len(list(service.experiment_pages(experiment_id, page_size=3))) == 1
    assert len(list(service.experiment_pages(experiment_id, page_size=2))) == 2


def test_a_deleted_experiment_is_gone_with_its_failures(service: Service) -> None:
    experiment_id = _experiment(service)
    assert service.failures(experiment_id)
    service.delete_experiment(experiment_id)
    with pytest.raises(NotFoundError):
        service.get_experiment(experiment_id)
    assert service.failures(experiment_id) == [] and service.list_experiments() == []


def test_a_running_experiment_is_not_deleted(service: Service, turnstile: Turnstile) -> None:
    experiment_id = start_gated(service, 3)
    with pytest.raises(ExperimentConfigError, match="Cancel the experiment before deleting it"):
        service.delete_experiment(experiment_id)
    turnstile.open()
    assert service.wait(experiment_id, timeout=30).finished
    service.delete_experiment(experiment_id)
    assert service.list_experiments() == []
