"""Slices through the service: metadata columns, per-slice means with their 95% t-interval,
failed runs per slice from memory (None in another process, where `missing` still counts
them), metadata filters on the result page, and the per-slice change between experiments."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy import stats
from scorelab_db import BACKENDS, database

from core import Scorer, create_scorer
from core.records import ExperimentConfig, ResultQuery, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import NotFoundError, Service

DATA = (
    b"id,question,answer,category\n"
    b"a,question 0,answer 0,Law\n"
    b"b,question 1,answer 1,Law\n"
    b"c,question 2,answer 2,Health\n"
    b"d,question 3,answer 3,Health\n"
    b"e,question 4,answer 4,Health\n"
    b"f,question 5,answer 5,\n"
)
CANDIDATE = DATA.replace(b"answer 3,", b"answer 3b,").replace(b"answer 0,", b"answer 0b,")
SCORES = {
    "answer 0": 0.2,
    "answer 1": 0.6,
    "answer 3": 0.9,
    "answer 4": 0.5,
    "answer 0b": 0.4,  # Law: 0.4 -> 0.5 in the candidate
    "answer 3b": 0.1,  # Health: 0.7 -> 0.3 in the candidate
}


def graded() -> Scorer:
    """The score of the output in SCORES; raises on any other output (items c and f)."""

    def score(ctx: Any) -> float:
        if ctx.run.output not in SCORES:
            raise RuntimeError("cannot score this")
        return SCORES[ctx.run.output]

    return create_scorer(id="graded", description="table scores").generate_score(score)


CATALOG = {
    **PREBUILT,
    "graded": PrebuiltScorer("graded", "Graded", "table scores", graded, False),
}


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    service.store.close()


def run(service: Service, dataset_id: str, scorer_id: str) -> str:
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=[ScorerSpec(scorer_id=scorer_id)])
    )
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def test_slices_by_a_metadata_column(service: Service, database_url: str) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(service, dataset.id, "graded")
    assert service.metadata_columns(experiment_id) == ["category"]
    found = {s.value: s for s in service.slices(experiment_id, "category")}
    assert {v: s.items for v, s in found.items()} == {"Health": 3, "Law": 2, "": 1}
    health = found["Health"].scorers[0]
    assert (health.scorer_id, health.runs, health.scored, health.missing) == ("graded", 2, 2, 1)
    assert health.failed == 1  # question 2, held in memory
    assert health.mean == pytest.approx(0.7)
    half = stats.t.ppf(0.975, 1) * statistics.stdev([0.9, 0.5]) / 2**0.5
    assert (health.low, health.high) == (pytest.approx(0.7 - half), pytest.approx(0.7 + half))
    none = found[""].scorers[0]
    assert (none.runs, none.mean, none.low, none.failed, none.missing) == (0, None, None, 1, 1)
    assert found["Law"].scorers[0].failed == 0
    # Another process: the failures' details are gone; `missing` still counts them.
    other = Service(database_url, catalog=CATALOG)
    elsewhere = {s.value: s.scorers[0] for s in other.slices(experiment_id, "category")}
    assert (elsewhere["Health"].failed, elsewhere["Health"].missing) == (None, 1)
    other.store.close()


def test_a_result_page_filtered_by_metadata(service: Service) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(service, dataset.id, "graded")
    page = service.result_page(experiment_id, ResultQuery(metadata={"category": ["Health"]}))
    assert [(r.item_id, r.failed) for r in page.rows] == [("c", ["graded"]), ("d", []), ("e", [])]
    assert page.rows[0].metadata == {"category": "Health"}
    nothing = ResultQuery(metadata={"category": [""]}, failed_only=True)
    assert [r.item_id for r in service.result_page(experiment_id, nothing).rows] == ["f"]


def test_the_change_per_slice_worst_first(service: Service) -> None:
    baseline = run(service, service.import_dataset("qa.csv", DATA).id, "graded")
    candidate = run(service, service.import_dataset("qa2.csv", CANDIDATE).id, "graded")
    changes = service.compare_slices(baseline, candidate, "category")
    assert [(c.value, c.scorer_id) for c in changes] == [
        ("Health", "graded"),
        ("Law", "graded"),
        ("", "graded"),  # no score on either side: no change, last
    ]
    health, law, none = changes
    assert (health.baseline_mean, health.candidate_mean) == (
        pytest.approx(0.7),
        pytest.approx(0.3),
    )
    assert health.change == pytest.approx(-0.4) and law.change == pytest.approx(0.1)
    assert (health.baseline_n, health.candidate_n) == (2, 2)
    assert none.change is None


def test_unknown_columns_and_experiments(service: Service) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(service, dataset.id, "graded")
    unknown = r"no metadata column 'topic' \(its dataset has 'category'\)"
    with pytest.raises(ValueError, match=unknown):
        service.slices(experiment_id, "topic")
    with pytest.raises(NotFoundError):
        service.slices("nope", "category")
