"""The judge calls a sample of items would make, recorded by a dry run (nothing is sent): the
real prompts behind `Service.estimate_cost` (core/judge/estimate.py prices them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.experiments.engine import run_outcome
from core.judge.estimate import DryRequest, recording
from core.records import DatasetItem
from core.scoring import Scorer

__all__ = ["sample_judge_requests"]


async def sample_judge_requests(
    scorers: Sequence[Scorer], items: Iterable[DatasetItem]
) -> list[list[DryRequest]]:
    """Per item, the judge requests its scorers would send (each prompt step answered with the
    shortest answer its schema accepts, so later steps build their prompts from it)."""
    sampled: list[list[DryRequest]] = []
    for item in items:
        with recording() as recorder:
            for scorer in scorers:
                await run_outcome(item, scorer)  # a failing scorer is an outcome, not an error
        sampled.append(recorder.requests)
    return sampled
