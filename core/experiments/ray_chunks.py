"""The driver's plan of a Ray run: chunks of (item, scorer) pairs, what each still owes, the counts.

Pure bookkeeping, no Ray: core/experiments/ray_backend.py submits the chunks planned here and
hands back to them what its tasks return (docs/scale.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.experiments.engine import Skip
from core.records import DatasetItem, RunCounts, ScorerOutcome

__all__ = ["MAX_RETRIES", "Chunk", "Tally", "plan_chunks"]

MAX_RETRIES = 3
"""How many times a chunk goes out again: Ray's retries of a task whose worker died, and the
driver's own resends of the pairs a chunk never sent back (not for errors: a scorer failure is
an outcome, never an exception of the task)."""


@dataclass(slots=True)
class Chunk:
    """A part of the run sent as one Ray task: items with the scorer ids to run on each."""

    units: list[tuple[DatasetItem, tuple[str, ...]]]
    pending: set[tuple[str, str]]
    """The pairs not received yet."""
    attempts: int = 0
    """How many times it went out again for pairs it did not send back."""

    def rest(self) -> Chunk:
        """A chunk of the pairs not received; raises RuntimeError once it went out too often
        (a pair that kills every worker it runs on, say)."""
        if self.attempts >= MAX_RETRIES:
            raise RuntimeError(
                f"{len(self.pending)} runs of a Ray chunk never came back after "
                f"{self.attempts + 1} tries (their workers died?)"
            )
        units = [
            (item, tuple(i for i in ids if (item.id, i) in self.pending))
            for item, ids in self.units
        ]
        units = [(item, ids) for item, ids in units if ids]
        return Chunk(units, set(self.pending), self.attempts + 1)


def plan_chunks(
    items: Iterable[DatasetItem],
    scorer_ids: list[str],
    skip: Skip | None,
    size: int,
    tally: Tally,
) -> Iterator[Chunk]:
    """Chunks of about `size` pairs, item by item; the pairs `skip` leaves out are taken off
    the planned total (as `run_experiment` does)."""
    units: list[tuple[DatasetItem, tuple[str, ...]]] = []
    pending: set[tuple[str, str]] = set()
    for position, item in enumerate(items):
        if not isinstance(item, DatasetItem):
            raise TypeError(f"items[{position}] must be a DatasetItem, not {type(item).__name__}")
        ids = tuple(i for i in scorer_ids if skip is None or not skip(item, i))
        tally.left_out(len(scorer_ids) - len(ids))
        if not ids:
            continue
        units.append((item, ids))
        pending.update((item.id, i) for i in ids)
        if len(pending) >= size:
            yield Chunk(units, pending)
            units, pending = [], set()
    if units:
        yield Chunk(units, pending)


class Tally:
    """The driver's counts and running means, as the engine keeps them."""

    def __init__(self, counts: RunCounts) -> None:
        self.counts = counts
        self._means: dict[str, list[float]] = {}

    def left_out(self, pairs: int) -> None:
        if pairs:
            update = {"total": self.counts.total - pairs}
            self.counts = self.counts.model_copy(update=update)

    def add(self, outcome: ScorerOutcome) -> None:
        self.counts = self.counts.with_outcome(outcome)
        score = outcome.score
        if outcome.status == "success" and isinstance(score, int | float) and math.isfinite(score):
            entry = self._means.setdefault(outcome.scorer_id, [0, 0.0])
            entry[0] += 1
            entry[1] += score / entry[0] - entry[1] / entry[0]

    def means(self) -> dict[str, float]:
        return {scorer_id: mean for scorer_id, (_, mean) in self._means.items()}
