"""Issue 21's analysis views in a real browser: the agreement verdict on a labelled file where
one scorer is perfect and one inverted, and Compare's side-by-side grid of three experiments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service

from ._streamlit import open_page


def _run(service: Service, name: str, data: bytes, scorers: list[ScorerSpec]) -> str:
    dataset = service.import_dataset(f"{name}.csv", data)
    started = service.start_experiment(
        ExperimentConfig(name=name, dataset_id=dataset.id, scorers=scorers)
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def test_the_agreement_verdict_names_the_perfect_and_the_inverted_scorer(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
        rows = [b"id,question,answer,is_correct"]
        rows += [b"r%d,Q,right %d,yes" % (n, n) for n in range(6)]
        rows += [b"w%d,Q,wrong %d,no" % (n, n) for n in range(6)]
        experiment_id = _run(
            service,
            "labelled",
            b"\n".join(rows) + b"\n",
            [
                ScorerSpec(scorer_id="checks.includes", options={"value": "wrong", "id": "inv"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "ok"}),
            ],
        )
        service.store.close()
        open_page(page, f"{url}/experiment?experiment={experiment_id}&tab=agreement")
        verdict = page.get_by_text("1 of 2 scorers separates the labels")
        verdict.wait_for()
        text = verdict.inner_text()
        assert "ok (AUC 1.00)" in text
        assert "Ranks wrong answers higher (the interval below 0.5): inv (AUC 0.00)" in text
        assert "label=is_correct" in page.evaluate("location.href")


def test_three_experiments_side_by_side(page: Any, tmp_path: Path, fresh_dashboard: Any) -> None:
    with fresh_dashboard(tmp_path) as url:
        service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
        scorers = [ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "r"})]
        ids = [
            _run(service, name, b"id,question,answer\n" + body, scorers)
            for name, body in (
                ("base", b"a,Q,right\nb,Q,wrong\nc,Q,right\n"),
                ("one", b"a,Q,wrong\nb,Q,right\nc,Q,right\n"),
                ("two", b"a,Q,right\nb,Q,right\nc,Q,wrong\n"),
            )
        ]
        service.store.close()
        open_page(page, f"{url}/compare?baseline={ids[0]}&candidates={ids[1]},{ids[2]}")
        page.get_by_role("heading", name="Side by side").wait_for()
        page.get_by_text("3 items paired in all 3 experiments").wait_for()
        # The sort picked by default: the first candidate's change (the grid is a canvas).
        assert "sorted by r · one Δ" in page.get_by_text("3 items paired in all 3").inner_text()
