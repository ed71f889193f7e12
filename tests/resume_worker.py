"""Code scorers for the resume tests, and a process that runs an experiment until it is killed.

`python tests/resume_worker.py DATABASE_URL DATASET_ID DELAY_S FAIL_ON [thread|process]` starts
an experiment of the `slow` scorer over the dataset through the service (its results written
by the writer thread, or by the writer's own process), prints its id (then, with `process`,
the writer's process id once it writes), and waits for `kill -9`. The test process resumes it
with the same catalog, counting each pair its `slow` scorer runs.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import Counter
from typing import Any

from core import Scorer, create_scorer
from core.records import ExperimentConfig, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer, ScorerOptions

CALLS: Counter[str] = Counter()
"""Runs of the `slow` and `flaky` scorers in this process, by item input."""
_lock = threading.Lock()

FAIL_ONCE: set[str] = set()
"""Inputs the `flaky` scorer fails on the next time it sees them (then no more)."""
FAIL_ALWAYS: set[str] = set()
"""Inputs the `flaky` scorer always fails on."""


def reset() -> None:
    """Forget the runs counted and the failures planned (before and after each test)."""
    with _lock:
        CALLS.clear()
        FAIL_ONCE.clear()
        FAIL_ALWAYS.clear()


def _count(value: Any) -> int:
    with _lock:
        CALLS[str(value)] += 1
        return CALLS[str(value)]


class SlowOptions(ScorerOptions):
    delay_s: float = 0.0
    """seconds each run waits"""
    fail_on: str = ""
    """input it fails on"""


def slow(delay_s: float = 0.0, fail_on: str = "") -> Scorer:
    async def score(ctx: Any) -> float:
        _count(ctx.run.input)
        await asyncio.sleep(delay_s)
        if ctx.run.input == fail_on:
            raise RuntimeError(f"cannot score {fail_on}")
        return float(len(str(ctx.run.output))) / 10

    return create_scorer(id="slow", description="waits, then scores").generate_score(score)


def flaky() -> Scorer:
    def score(ctx: Any) -> float:
        run = _count(ctx.run.input)
        with _lock:
            once = ctx.run.input in FAIL_ONCE
            FAIL_ONCE.discard(ctx.run.input)
        if once or ctx.run.input in FAIL_ALWAYS:
            raise RuntimeError(f"flaky on {ctx.run.input}, run {run}")
        return 1.0

    return create_scorer(id="flaky", description="fails when told").generate_score(score)


CATALOG = {
    **PREBUILT,
    "slow": PrebuiltScorer("slow", "Slow", "Waits, then scores", slow, False, SlowOptions),
    "flaky": PrebuiltScorer("flaky", "Flaky", "Fails when told", flaky, False),
}


def slow_spec(delay_s: float = 0.0, fail_on: str = "") -> ScorerSpec:
    return ScorerSpec(scorer_id="slow", options={"delay_s": delay_s, "fail_on": fail_on})


def main(
    database_url: str, dataset_id: str, delay_s: float, fail_on: str, writer: str = "thread"
) -> None:
    from core.experiments import jobs, result_writer
    from core.service import Service

    if writer == "process":  # the results written by a child process, whatever the size
        jobs._OWN_PROCESS_FROM = 0
        result_writer._PROCESS_FIRST = True

    service = Service(database_url, catalog=CATALOG)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset_id, scorers=[slow_spec(delay_s, fail_on)], concurrency=2
        )
    )
    print(experiment_id, flush=True)
    if writer == "process":  # the child's pid, once it writes
        job = service.context.jobs.get(experiment_id)
        while job is not None and job.running:
            if job._writer is not None and job._writer.process_id is not None:
                print(job._writer.process_id, flush=True)
                break
            time.sleep(0.01)
    service.wait(experiment_id)  # killed long before


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], *sys.argv[5:6])
