"""What the Service's desk tests share: a catalog with scorers that fail, wait for the test
or call the judge; a Service per backend; helpers to start runs and read the database raw."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.records import (
    ExperimentConfig,
    ScorerSpec,
)
from core.scorers import PREBUILT, PrebuiltScorer, ScorerOptions
from core.service import (
    Service,
)

SECRET = "sk-test-never-stored-0123456789"
DATA = (
    b"id,question,answer,expected\n"
    b"a,question 0,answer 0,truth 0\n"
    b"b,question 1,answer 1,truth 1\n"
    b"c,question 2,answer 2,truth 2\n"
)


def fragile(fail_on: str = "question 2") -> Scorer:
    def score(ctx: Any) -> float:
        if ctx.run.input == fail_on:
            raise RuntimeError(f"cannot score {fail_on}")
        return 0.5

    return create_scorer(id="fragile", description="raises on one item").generate_score(score)


DEADLINE = 30.0
"""Seconds any wait of these tests may take before it fails (none waits a fixed time)."""


class Turnstile:
    """Holds every run of the `gated` scorer until the test lets it through, so no run ends on
    its own timing and the tests never guess how long anything takes."""

    def __init__(self) -> None:
        self._permits = threading.Semaphore(0)
        self._open = threading.Event()
        self._changed = threading.Condition()
        self.held = 0
        self.passed = 0

    def let_through(self, runs: int) -> None:
        self._permits.release(runs)

    def open(self) -> None:
        """Let every run through, now and from now on."""
        self._open.set()
        self._permits.release(10_000)

    def wait_until(self, condition: Callable[[Turnstile], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: condition(self), DEADLINE), "turnstile"

    async def enter(self) -> None:
        await asyncio.to_thread(self._enter)

    def _enter(self) -> None:  # in a worker thread: it blocks
        self._count(held=1)
        try:
            if not self._open.is_set() and not self._permits.acquire(timeout=DEADLINE):
                raise TimeoutError("the test never let this run through")
        finally:
            self._count(held=-1, passed=1)

    def _count(self, held: int = 0, passed: int = 0) -> None:
        with self._changed:
            self.held += held
            self.passed += passed
            self._changed.notify_all()


_turnstile = Turnstile()


def gated() -> Scorer:
    turnstile = _turnstile  # the current test's

    async def score(ctx: Any) -> float:
        await turnstile.enter()
        return 1.0

    return create_scorer(id="gated", description="waits for the test").generate_score(score)


def judged(model: JudgeConfig, options: dict[str, Any] | None = None) -> Scorer:
    judge = model.model_copy(update={"instructions": "You are a strict grader."})
    return (
        create_scorer(id="judged", description="judge score and reason", judge=judge)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score this"))
        .generate_reason(PromptStep(description="Why", create_prompt=lambda ctx: "explain this"))
    )


class FragileOptions(ScorerOptions):
    fail_on: str = "question 2"
    """input to fail on"""


CATALOG = {
    **PREBUILT,
    "fragile": PrebuiltScorer(
        "fragile", "Fragile", "Raises on one item", fragile, False, FragileOptions
    ),
    "gated": PrebuiltScorer("gated", "Gated", "Waits for the test", gated, False),
    "judged": PrebuiltScorer("judged", "Judged", "An LLM judge", judged, True),
}


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def turnstile(monkeypatch: pytest.MonkeyPatch) -> Iterator[Turnstile]:
    fresh = Turnstile()
    monkeypatch.setitem(globals(), "_turnstile", fresh)
    yield fresh
    fresh.open()  # never leave a run (or its thread) held


@pytest.fixture
def service(database_url: str, tmp_path: Path, turnstile: Turnstile) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    turnstile.open()
    for info in service.list_experiments():
        if not service.progress(info.id).finished:
            service.cancel(info.id, abort_in_flight=True)
            service.wait(info.id, timeout=DEADLINE)
    service.store.close()


def many(count: int) -> bytes:
    return b"question,answer\n" + b"".join(b"q%d,a%d\n" % (n, n) for n in range(count))


def start_gated(service: Service, items: int, concurrency: int = 1) -> str:
    dataset = service.import_dataset(f"{items}.csv", many(items))
    return service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="gated")], concurrency=concurrency
        )
    )


def run(service: Service, dataset_id: str, *specs: ScorerSpec, **config: Any) -> str:
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=list(specs), **config)
    )
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def dump_database(url: str) -> str:
    """Every value of every table, as text (to look for secrets)."""
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    text = []
    with engine.connect() as connection:
        for table in ("datasets", "dataset_items", "experiments", "scorer_results"):
            text += [
                repr(tuple(row))
                for row in connection.execute(sqlalchemy.text(f"SELECT * FROM {table}"))
            ]
    engine.dispose()
    return "\n".join(text)
