"""Compare read light (`Service.compare_sides`: stored runs as columns, the judge records of the
runs that called the judge only) gives the comparison of the experiments loaded whole: the
pairing, the per-scorer table, the items' changes and drill-down, and the judge usage."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from scorelab_db import BACKENDS, database

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec
from core.reporting.compare import (
    StoredSide,
    compare_experiments,
    item_changes,
    item_pair,
    scorer_table,
    usage_side_by_side,
)
from core.run_results import JudgeUsage
from core.service import NotFoundError, Service

SCORERS = ["judged", "coverage"]


def _judged(item_id: str, score: float, tokens: int) -> ScorerOutcome:
    execution = {
        "judgeModelId": "gpt-4o-mini",
        "judgeProvider": "openai",
        "attemptCount": 1,
        "modelCallCount": 1,
        "usage": {"inputTokens": tokens, "outputTokens": 3, "totalTokens": tokens + 3},
    }
    return ScorerOutcome(
        item_id=item_id,
        scorer_id="judged",
        status="success",
        score=score,
        reason={"why": f"judged {item_id}"},
        result={"score": score, "judge": {"analyze": {"executions": [execution]}}},
        usage=JudgeUsage(input_tokens=tokens, output_tokens=3, total_tokens=tokens + 3),
        judge_calls=1,
        judge_attempts=1,
    )


def _experiment(service: Service, dataset_id: str, name: str, seed: int, skip: set[str]) -> str:
    rng = random.Random(seed)
    store = service.store
    info = store.create_experiment(
        name=name,
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=SCORERS,
        judge_model="openai/gpt-4o-mini",
        api_base=None,
        judge_settings={},
        concurrency=2,
    )
    outcomes = []
    for n in range(40):
        item_id = f"q{n}"
        if item_id in skip:
            continue
        outcomes.append(_judged(item_id, rng.choice([0.0, 0.5, 1.0]), 10 + n))
        score = None if n % 9 == 0 else rng.random()  # some not scorable
        outcomes.append(
            ScorerOutcome(
                item_id=item_id,
                scorer_id="coverage",
                status="success",
                score=score,
                reason=f"coverage of {item_id}" if n % 2 else None,
                result={"score": score},
            )
        )
    store.add_results(info.id, outcomes)
    store.finish_experiment(info.id, "completed")
    return info.id


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        shared = Service(url)
        yield _filled(shared)
        shared.store.engine.dispose()


def _filled(shared: Service) -> Service:
    items = [
        DatasetItem(id=f"q{n}", input=f"question {n}", output=f"answer {n}", metadata={"n": n})
        for n in range(40)
    ]
    dataset = shared.store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="d" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[items],
    )
    shared.baseline = _experiment(shared, dataset.id, "base", 1, set())  # type: ignore[attr-defined]
    shared.candidate = _experiment(shared, dataset.id, "cand", 2, {"q5", "q6"})  # type: ignore[attr-defined]
    return shared


def test_read_light_the_comparison_is_the_one_of_the_experiments_loaded_whole(
    service: Service,
) -> None:
    ids = [service.baseline, service.candidate]  # type: ignore[attr-defined]
    (whole,) = compare_experiments(
        service.load_experiment(ids[0]), [service.load_experiment(ids[1])]
    )
    sides = service.compare_sides(ids)
    assert all(isinstance(side, StoredSide) for side in sides)
    assert sides[0].items is sides[1].items  # one dataset: its items read once
    (light,) = compare_experiments(sides[0], sides[1:])
    assert light.pairing == whole.pairing
    pd.testing.assert_frame_equal(scorer_table(light), scorer_table(whole))
    assert scorer_table(light)["paired_n"].tolist() == [38, 33]  # q5, q6 gone; 5 unscorable
    for scorer_id in SCORERS:
        pd.testing.assert_frame_equal(
            item_changes(light, scorer_id), item_changes(whole, scorer_id)
        )
    pair, expected = item_pair(light, "q7"), item_pair(whole, "q7")
    for scorer_id in SCORERS:
        for got, want in zip(pair.outcomes[scorer_id], expected.outcomes[scorer_id], strict=True):
            assert got is not None and want is not None
            assert (got.score, got.reason, got.status) == (want.score, want.reason, want.status)
    usage = usage_side_by_side([light])
    pd.testing.assert_frame_equal(usage, usage_side_by_side([whole]))
    assert usage.loc["input tokens"].iloc[0] == sum(10 + n for n in range(40))


def test_only_the_judged_runs_are_read_with_their_result(service: Service) -> None:
    (side,) = service.compare_sides([service.baseline])  # type: ignore[attr-defined]
    assert {run.scorer_id for run in side.judged} == {"judged"}
    assert len(side.judged) == 40
    assert len(side.scores.item_ids) == 80
    stored = side.scores
    reasons = dict(
        zip(zip(stored.item_ids, stored.scorer_ids, strict=True), stored.reasons, strict=True)
    )
    assert reasons["q0", "judged"] == {"why": "judged q0"}  # JSON decoded
    assert reasons["q0", "coverage"] is None and reasons["q1", "coverage"] == "coverage of q1"
    scores = dict(
        zip(zip(stored.item_ids, stored.scorer_ids, strict=True), stored.scores, strict=True)
    )
    assert scores["q0", "coverage"] is None  # not scorable
    unscored = sorted(key[0] for key, score in scores.items() if score is None)
    assert unscored == ["q0", "q18", "q27", "q36", "q9"]
    assert all(type(score) is float for score in scores.values() if score is not None)


def test_an_unknown_experiment_is_named(service: Service) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        service.compare_sides([service.baseline, "nope"])  # type: ignore[attr-defined]


def test_the_items_are_read_back_as_they_were_saved(service: Service) -> None:
    (side,) = service.compare_sides([service.baseline])  # type: ignore[attr-defined]
    assert len(side.items) == 40
    assert side.items[3] == DatasetItem(
        id="q3", input="question 3", output="answer 3", metadata={"n": 3}
    )
    assert side.items[3].ground_truth is None


def test_the_largest_changes_alone_are_the_first_rows_of_every_change(service: Service) -> None:
    sides = service.compare_sides([service.baseline, service.candidate])  # type: ignore[attr-defined]
    (comparison,) = compare_experiments(sides[0], sides[1:])
    for scorer_id in SCORERS:
        every = item_changes(comparison, scorer_id)
        assert len(every) == 40  # q5 and q6 too: "baseline only"
        for limit in (1, 7, 38, 100):
            pd.testing.assert_frame_equal(
                item_changes(comparison, scorer_id, limit=limit), every.head(limit)
            )
        none = item_changes(comparison, scorer_id, limit=0)
        assert none.empty and list(none.columns) == list(every.columns)
    # Not scored on one side (coverage's unscorable items): after every scored change.
    tail = item_changes(comparison, "coverage")["change"].isna().tolist()
    assert tail == sorted(tail) and any(tail)
    for wrong in (-1, True):
        with pytest.raises(ValueError, match="limit of 0 or more"):
            item_changes(comparison, "coverage", limit=wrong)
