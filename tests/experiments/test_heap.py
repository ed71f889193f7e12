"""A large stored run keeps the heap out of the collector's full passes while it runs, and gives
it back when it ends (core/experiments/_heap.py)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from core import create_scorer
from core.experiments import _heap, jobs
from core.experiments.jobs import ExperimentJob
from core.records import ColumnMapping, DatasetItem, RunCounts, ScorerSpec
from core.scoring import StepContext
from core.storage import Store


def test_the_heap_is_frozen_from_a_large_runs_start_and_thawed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "_FREEZE_FROM", 10)
    monkeypatch.setattr(jobs, "_FREEZE_AFTER_RUNS", 5)
    assert gc.get_freeze_count() == 0
    frozen_seen: list[int] = []

    lexicon: list[list[int]] = []

    def score(context: StepContext) -> float:
        frozen_seen.append(gc.get_freeze_count())
        if not lexicon:  # what a scorer loads on its first run, alive for the whole run
            lexicon.extend([n] for n in range(1000))
        return 1.0

    scorer = create_scorer(id="counts-frozen", description="d").generate_score(score)
    store = Store(f"sqlite:///{tmp_path / 'heap.db'}")
    items = [DatasetItem(id=f"i{n}", input=f"q{n}", output=f"a{n}") for n in range(120)]
    dataset = store.save_dataset(
        name="heap",
        file_name="heap.csv",
        format="csv",
        fingerprint="c" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=[items],
    )
    experiment = store.create_experiment(
        name="heap",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="counts-frozen")],
        scorer_ids=["counts-frozen"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    job = ExperimentJob(experiment.id, RunCounts(total=len(items)))
    job.start(store, items, [scorer], concurrency=1)
    final = job.wait(timeout=60)
    assert final.status == "completed"
    assert store.result_count(experiment.id) == len(items)
    # Frozen before the first run (the first run's loading walks no frozen object), frozen
    # again once 5 runs had succeeded (the first run's lexicon with it), thawed at the end.
    # (A frozen object that is freed leaves the count: it only roughly stays.)
    assert all(count > 0 for count in frozen_seen[:5])
    assert all(count > max(frozen_seen[:5]) + len(lexicon) // 2 for count in frozen_seen[6:])
    assert gc.get_freeze_count() == 0
    store.close()


def test_the_heap_is_thawed_only_when_the_last_run_that_froze_it_ends() -> None:
    _heap.freeze_heap()
    _heap.freeze_heap()
    try:
        _heap.refreeze_heap()
        _heap.thaw_heap()
        assert gc.get_freeze_count() > 0  # another run still holds it
    finally:
        _heap.thaw_heap()
    assert gc.get_freeze_count() == 0
