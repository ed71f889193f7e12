"""What a step sees: `ctx.run`, `ctx.results` and, in generate_reason, `ctx.score`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.record_base import Record, StepName

__all__ = ["ScorerRun", "StepContext", "StepResults"]


class ScorerRun(Record):
    """One input/output pair to score, as the steps see it (`ctx.run`).

    `prepare_run` receives this object and returns the one to use; `run.replace(...)` makes a
    changed copy.
    """

    run_id: str = ""
    """The run's id; `scorer.run` fills a fresh UUID4 when none is given."""
    input: Any = None
    """What the evaluated system was asked."""
    output: Any = None
    """What it answered: the value being scored."""
    ground_truth: Any = None
    """The expected answer, if any."""
    request_context: Any = None
    """Extra context for the run (e.g. retrieved documents), if any."""

    def replace(self, **changes: Any) -> ScorerRun:
        """A copy with some fields changed (unknown field names raise TypeError)."""
        unknown = set(changes) - set(type(self).model_fields)
        if unknown:
            raise TypeError(f"ScorerRun has no field(s) {', '.join(sorted(unknown))}")
        return self.model_copy(update=changes)


class StepResults:
    """Results of the steps that ran before the current one (None for the others)."""

    __slots__ = ("analyze_step_result", "generate_score_step_result", "preprocess_step_result")

    def __init__(self, values: Mapping[StepName, Any]) -> None:
        self.preprocess_step_result: Any = values.get("preprocess")
        self.analyze_step_result: Any = values.get("analyze")
        self.generate_score_step_result: Any = values.get("generateScore")

    def __repr__(self) -> str:
        return (
            f"StepResults(preprocess_step_result={self.preprocess_step_result!r}, "
            f"analyze_step_result={self.analyze_step_result!r}, "
            f"generate_score_step_result={self.generate_score_step_result!r})"
        )


class StepContext:
    """The one argument every step function and `create_prompt` receives."""

    __slots__ = ("results", "run", "score")

    def __init__(self, run: ScorerRun, results: StepResults, score: Any = None) -> None:
        self.run = run
        """The prepared run."""
        self.results = results
        """Results of the earlier steps."""
        self.score = score
        """The score; set in generate_reason only."""

    def __repr__(self) -> str:
        return f"StepContext(run={self.run!r}, results={self.results!r}, score={self.score!r})"
