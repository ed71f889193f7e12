"""Experiments the manage and theming desk tests share: a `reasoned` scorer whose reason is the
output (three planted low-score topics, two kinds of failure), a `held` one waiting for the test."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from core import Scorer, create_scorer
from core.records import ExperimentConfig, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import Service

REASONS = {
    "date": "The answer gives the wrong date: the year {n} is wrong for this event.",
    "source": "The output cites a made-up source that is not in the context (ref {n}).",
    "tone": "The tone is rude and dismissive toward the user.",
}


def planted_csv(per_topic: int = 8) -> bytes:
    """Rows whose output is the reason the `reasoned` scorer gives: three low-score topics,
    some high scores, and two kinds of failure."""
    lines = ["id,question,answer"]
    n = 0
    for topic, reason in REASONS.items():
        for _ in range(per_topic):
            lines.append(f"{topic}{n},q{n},LOW {reason.format(n=1900 + n)}")
            n += 1
    for k in range(6):
        lines.append(f"good{k},q,HIGH The answer is correct and complete.")
    for k in range(3):
        lines.append(f"limit{k},q,RAISE rate limit exceeded (HTTP 429) for request {k}")
        lines.append(f"time{k},q,RAISE timed out connecting to the judge server")
    return "\n".join(lines).encode()


def reasoned() -> Scorer:
    def score(ctx: Any) -> float:
        text = str(ctx.run.output)
        if text.startswith("RAISE "):
            raise RuntimeError(text.removeprefix("RAISE "))
        return 0.0 if text.startswith("LOW ") else 1.0

    def reason(ctx: Any) -> str:
        return str(ctx.run.output).split(" ", 1)[1]

    return (
        create_scorer(id="reasoned", description="its reason is the output")
        .generate_score(score)
        .generate_reason(reason)
    )


GATE = threading.Event()
"""Holds every run of the `held` scorer until a test sets it."""


def held() -> Scorer:
    async def score(ctx: Any) -> float:
        await asyncio.to_thread(GATE.wait, 60)
        return 1.0

    return create_scorer(id="held", description="waits for the test").generate_score(score)


CATALOG = {
    **PREBUILT,
    "reasoned": PrebuiltScorer("reasoned", "Reasoned", "Reason from the output", reasoned, False),
    "held": PrebuiltScorer("held", "Held", "Waits for the test", held, False),
}


def run(service: Service, data: bytes | None = None, name: str = "planted") -> str:
    dataset = service.import_dataset(f"{name}.csv", data or planted_csv())
    experiment_id = service.start_experiment(
        ExperimentConfig(
            name=name,
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="reasoned"),
                ScorerSpec(scorer_id="checks.includes", options={"value": "e"}),
            ],
        )
    )
    progress = service.wait(experiment_id, timeout=60)
    assert progress.status == "completed", progress
    return experiment_id
