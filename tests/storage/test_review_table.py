"""The `reviews` table, on SQLite and (when available) PostgreSQL: one review per (experiment,
item, scorer, reviewer), updated in place with its creation time kept; read back per item;
deleted with its experiment or its dataset."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorelab_db import BACKENDS, database

from core.records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ExperimentInfo,
    ReviewInput,
    ScorerSpec,
)
from core.storage import Store


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


def make_items(count: int) -> list[DatasetItem]:
    return [DatasetItem(id=f"i{n}", input=f"q{n}", output=f"a{n}") for n in range(count)]


def save(store: Store, items: list[DatasetItem]) -> DatasetInfo:
    return store.save_dataset(
        name="set",
        file_name="set.jsonl",
        format="jsonl",
        fingerprint="f" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=items,
    )


def experiment(store: Store, dataset_id: str) -> ExperimentInfo:
    return store.create_experiment(
        name="exp",
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id=s) for s in ("a", "b")],
        scorer_ids=["a", "b"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )


def review(item: str = "i0", scorer: str = "a", **fields: object) -> ReviewInput:
    values: dict[str, object] = {"verdict": "right", "reviewer": "ana", **fields}
    return ReviewInput(item_id=item, scorer_id=scorer, **values)  # type: ignore[arg-type]


def test_a_review_is_stored_and_read_back_with_who_and_when(store: Store) -> None:
    exp = experiment(store, save(store, make_items(3)).id)
    saved = store.save_review(exp.id, review(score=0.25, note="too generous"))
    assert (saved.item_id, saved.scorer_id, saved.verdict) == ("i0", "a", "right")
    assert (saved.score, saved.note, saved.reviewer) == (0.25, "too generous", "ana")
    assert saved.created_at.tzinfo is not None and saved.created_at == saved.updated_at
    assert store.reviews(exp.id) == [saved]


def test_saving_again_updates_the_same_review_and_keeps_its_creation_time(store: Store) -> None:
    exp = experiment(store, save(store, make_items(3)).id)
    first = store.save_review(exp.id, review(note="first"))
    time.sleep(0.01)
    second = store.save_review(exp.id, review(verdict="wrong", score=None, note=""))
    assert store.reviews(exp.id) == [second]
    assert second.verdict == "wrong" and second.note == "" and second.score is None
    assert second.created_at == first.created_at and second.updated_at > first.updated_at


def test_reviewers_scorers_and_items_each_get_their_own_review(store: Store) -> None:
    exp = experiment(store, save(store, make_items(3)).id)
    store.save_review(exp.id, review("i0", "a", reviewer="ana"))
    store.save_review(exp.id, review("i0", "a", reviewer="bo", verdict="wrong"))
    store.save_review(exp.id, review("i0", "b"))
    store.save_review(exp.id, review("i2", "a"))
    found = store.reviews(exp.id)
    assert [(r.item_id, r.scorer_id, r.reviewer) for r in found] == [
        ("i0", "a", "ana"),
        ("i0", "a", "bo"),
        ("i0", "b", "ana"),
        ("i2", "a", "ana"),
    ]
    assert [r.item_id for r in store.reviews(exp.id, ["i2"])] == ["i2"]
    assert store.reviews(exp.id, []) == []


def test_one_review_can_be_deleted(store: Store) -> None:
    exp = experiment(store, save(store, make_items(2)).id)
    store.save_review(exp.id, review("i0", "a"))
    store.save_review(exp.id, review("i1", "a"))
    assert store.delete_review(exp.id, "i0", "a", "ana") is True
    assert store.delete_review(exp.id, "i0", "a", "ana") is False
    assert [r.item_id for r in store.reviews(exp.id)] == ["i1"]


def test_deleting_an_experiment_deletes_its_reviews_only(store: Store) -> None:
    dataset = save(store, make_items(2))
    gone, kept = experiment(store, dataset.id), experiment(store, dataset.id)
    store.save_review(gone.id, review())
    store.save_review(kept.id, review())
    store.delete_experiment(gone.id)
    assert store.reviews(gone.id) == []
    assert len(store.reviews(kept.id)) == 1


def test_deleting_a_dataset_deletes_the_reviews_of_its_experiments(store: Store) -> None:
    dataset = save(store, make_items(2))
    exp = experiment(store, dataset.id)
    store.save_review(exp.id, review())
    store.delete_dataset(dataset.id)
    assert store.reviews(exp.id) == []


def test_many_items_are_read_in_chunks(store: Store) -> None:
    exp = experiment(store, save(store, make_items(3)).id)
    store.save_review(exp.id, review("i1"))
    asked = [f"x{n}" for n in range(1_200)] + ["i1"]
    assert [r.item_id for r in store.reviews(exp.id, asked)] == ["i1"]


def test_scored_runs_pick_the_confidences_out_of_the_json_as_the_queue_does(
    store: Store,
) -> None:
    from core.records import ScorerOutcome
    from core.reporting.review_queue import reported_confidence, scored_runs

    exp = experiment(store, save(store, make_items(6)).id)
    results = [
        {"analyzeStepResult": {"confidence": 0.3}},
        {"preprocessStepResult": {"confidence": 0.9}, "analyzeStepResult": {"confidence": 0.1}},
        {"preprocessStepResult": {"confidence": "0.2"}},  # text: not a confidence
        {"analyzeStepResult": "no object"},
        None,
        {"analyzeStepResult": {"confidence": 2}},  # out of [0, 1]
    ]
    outcomes = [
        ScorerOutcome(item_id=f"i{n}", scorer_id="a", status="success", score=n / 10, result=r)
        for n, r in enumerate(results)
    ]
    store.add_results(exp.id, outcomes)
    item_ids, runs = store.scored_runs(exp.id)
    assert item_ids == [f"i{n}" for n in range(6)]
    expected = [(r.item_id, r.score, r.confidences) for r in scored_runs(outcomes)]
    found = [(r.item_id, r.score, [reported_confidence(r.confidences)]) for r in runs]
    assert found == expected
    assert [c[0] for _, _, c in found] == [0.3, 0.9, None, None, None, None]
