"""The theming desk through the Service: themes in judge reasons and failure errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planted import CATALOG, run
from scorelab_db import BACKENDS, database

from core.records import ScorerOutcome
from core.service import InvalidInputError, NotFoundError, Service


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    service.store.close()


def test_themes_of_low_score_reasons_name_the_planted_topics(service: Service) -> None:
    experiment_id = run(service)
    report = service.themes(experiment_id, "reasoned", "low_scores", seed=0, threshold=0.5)
    assert report.considered == 24 and report.without_text == 0
    assert "24 of 30 scored items" in report.basis and "below 0.5" in report.basis
    assert len(report.themes) == 3 and {t.size for t in report.themes} == {8}
    for theme in report.themes:
        topics = {item_id.rstrip("0123456789") for item_id in theme.item_ids}
        assert len(topics) == 1
        words = {"date": {"date", "wrong", "year"}, "source": {"source", "cites", "context"},
                 "tone": {"rude", "dismissive", "tone"}}[topics.pop()]  # fmt: skip
        assert words & set(theme.words[:3]), theme
    assert service.themes(experiment_id, "reasoned", seed=0, threshold=0.5) == report
    bottom = service.themes(experiment_id, "reasoned")  # lowest quarter: ties at 0 all taken
    assert bottom.quantile == 0.25 and bottom.cutoff == 0.0 and bottom.considered == 24


def test_themes_of_failure_errors(service: Service) -> None:
    experiment_id = run(service)
    report = service.themes(experiment_id, None, "failures", seed=1)
    assert report.considered == 6 and sum(t.size for t in report.themes) == 6
    labels = " ".join(t.label for t in report.themes)
    assert "limit" in labels or "rate" in labels
    assert "timed" in labels or "server" in labels or "connecting" in labels
    for theme in report.themes:
        kinds = {item_id.rstrip("0123456789") for item_id in theme.item_ids}
        assert len(kinds) == 1
    assert service.themes(experiment_id, "checks.includes", "failures").themes == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"scorer_id": "nope"}, InvalidInputError, "no scorer 'nope'"),
        ({"scorer_id": None}, InvalidInputError, "need a scorer"),
        ({"scorer_id": "reasoned", "kind": "other"}, InvalidInputError, "Unknown theme kind"),
        ({"scorer_id": "reasoned", "quantile": 2.0}, InvalidInputError, "quantile"),
        ({"scorer_id": "reasoned", "max_themes": 0}, InvalidInputError, "max_themes"),
    ],
)
def test_themes_refuse_bad_requests(
    service: Service, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    experiment_id = run(service, b"input,output\nq,LOW a\n")
    with pytest.raises(error, match=message):
        service.themes(experiment_id, **kwargs)
    with pytest.raises(NotFoundError):
        service.themes("nope", "reasoned")


def test_themes_of_an_experiment_without_low_scores(service: Service) -> None:
    experiment_id = run(service, b"input,output\nq,HIGH fine\n")
    report = service.themes(experiment_id, "reasoned", threshold=0.5)
    assert (report.considered, report.themes) == (0, [])
    outcome = ScorerOutcome(item_id="x", scorer_id="reasoned", status="success", score=0.0)
    service.store.add_results(experiment_id, [outcome])  # a low score without a reason
    report = service.themes(experiment_id, "reasoned", threshold=0.5)
    assert (report.considered, report.without_text, report.themes) == (0, 1, [])
