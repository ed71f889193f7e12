"""The Resume button of the experiment page and the "Re-run failed" button of the failures page,
on the dashboard's own service (code scorers from tests/resume_worker.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from resume_worker import CALLS, CATALOG, FAIL_ONCE, reset, slow_spec
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.scorers.catalog import ScorerCatalog
from core.service import Service

DEADLINE = 60.0
ROWS = b"question,answer\n" + b"".join(b"q%d,a%d\n" % (n, n) for n in range(30))


@pytest.fixture
def service(app: AppTest) -> Iterator[Service]:
    """The dashboard's service, with the test scorers in its catalog."""
    reset()
    shared = core.service.get_service()
    shared.catalog = ScorerCatalog(CATALOG)
    yield shared
    for experiment_id in shared.running_experiments():
        shared.cancel(experiment_id, abort_in_flight=True)
        shared.wait(experiment_id, timeout=DEADLINE)
    reset()


def show(app: AppTest, page: str, experiment_id: str) -> AppTest:
    app.query_params["experiment"] = experiment_id
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def buttons(app: AppTest) -> dict[str, object]:
    return {button.label: button for button in app.button}


def test_a_cancelled_experiment_is_resumed_from_its_page(app: AppTest, service: Service) -> None:
    dataset = service.import_dataset("thirty.csv", ROWS)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            name="stopped", dataset_id=dataset.id, scorers=[slow_spec(0.02)], concurrency=1
        )
    )
    service.wait(experiment_id, timeout=DEADLINE, until=lambda p: p.counts.done >= 3)
    service.cancel(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "cancelled"
    stored = service.get_experiment(experiment_id).counts.succeeded
    assert 3 <= stored < 30

    show(app, "pages/experiment.py", experiment_id)
    notes = plain(" ".join(info.value for info in app.info))
    assert f"{stored} of 30 scorer runs have a stored result" in notes
    CALLS.clear()
    app.button(key="experiment.resume").click()
    app.run()
    assert not app.exception, app.exception
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert sum(CALLS.values()) == 30 - stored  # only the missing pairs
    show(app, "pages/experiment.py", experiment_id)
    assert "Resume" not in buttons(app)  # completed: nothing to resume
    assert {m.label: m.value for m in app.metric}["Scorer runs"] == "30 / 30"


def test_a_completed_experiment_has_no_resume_button(app: AppTest, service: Service) -> None:
    dataset = service.import_dataset("thirty.csv", ROWS)
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[slow_spec()], concurrency=4)
    )
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    show(app, "pages/experiment.py", experiment_id)
    assert "Resume" not in buttons(app)


def test_failed_runs_are_rerun_from_the_failures_page(app: AppTest, service: Service) -> None:
    dataset = service.import_dataset("thirty.csv", ROWS)
    FAIL_ONCE.update({"q4", "q9"})
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="flaky")], concurrency=4
        )
    )
    assert service.wait(experiment_id, timeout=DEADLINE).counts.failed == 2

    show(app, "pages/failures.py", experiment_id)
    assert "Re-run failed (2)" in buttons(app)
    CALLS.clear()
    app.button(key="failures.retry").click()
    app.run()
    assert not app.exception, app.exception
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert dict(CALLS) == {"q4": 1, "q9": 1}
    show(app, "pages/failures.py", experiment_id)
    assert any("No scorer run failed" in success.value for success in app.success)
    assert not any(label.startswith("Re-run failed") for label in buttons(app))
    assert service.get_experiment(experiment_id).counts.succeeded == 30
