"""A large stored run keeps the heap out of the collector's full passes while it runs, and gives
it back when it ends (core/experiments/_heap.py)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from core import JudgeConfig, PromptStep, create_scorer, run_evals
from core.experiments import _heap, engine, jobs
from core.experiments.jobs import ExperimentJob
from core.records import ColumnMapping, DatasetItem, RunCounts, ScorerSpec
from core.scoring import StepContext
from core.storage import Store
from core.testing import FakeJudge, Reply


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


def _freeze_seen_by(scorer_judge: JudgeConfig | None) -> tuple[Any, list[int]]:
    """A scorer (judged when `scorer_judge` is given) whose reason step records the collector's
    freeze count as each run sees it."""
    seen: list[int] = []

    def reason(context: StepContext) -> str:
        seen.append(gc.get_freeze_count())
        return "seen"

    scorer = create_scorer(id="sees-the-heap", description="d", judge=scorer_judge)
    if scorer_judge is not None:
        scored = scorer.generate_score(
            PromptStep(description="Score", create_prompt=lambda ctx: f"rate {ctx.run.input}")
        )
    else:
        scored = scorer.generate_score(lambda context: 1.0)
    return scored.generate_reason(reason), seen


@pytest.mark.parametrize(
    ("judged", "items", "frozen"), [(True, 8, True), (True, 3, False), (False, 8, False)]
)
async def test_a_judged_run_keeps_the_heap_frozen_while_it_runs(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    monkeypatch: pytest.MonkeyPatch,
    judged: bool,
    items: int,
    frozen: bool,
) -> None:
    # litellm's long-lived objects kept out of the collector's full passes (engine.py):
    # from JUDGED_FREEZE_FROM units of work, for a run that calls a judge only.
    monkeypatch.setattr(engine, "JUDGED_FREEZE_FROM", 4)
    monkeypatch.setattr(engine, "JUDGED_REFREEZE_AFTER", 2)
    monkeypatch.setattr(judge_server, "responder", lambda request: Reply('{"score": 0.5}'))
    refrozen: list[int] = []
    real_refreeze = engine.refreeze_heap
    monkeypatch.setattr(engine, "refreeze_heap", lambda: (refrozen.append(1), real_refreeze())[1])
    scorer, seen = _freeze_seen_by(judge_config if judged else None)
    assert gc.get_freeze_count() == 0
    result = await run_evals(
        data=[{"input": n, "output": "a"} for n in range(items)], scorers=[scorer], concurrency=2
    )
    assert result.summary.total_items == items
    assert len(seen) == items
    if frozen:
        assert all(count > 0 for count in seen), seen
        assert refrozen == [1]  # once, after the first two runs
    else:
        assert seen == [0] * items and not refrozen
    assert gc.get_freeze_count() == 0  # thawed: what became garbage is collected again
