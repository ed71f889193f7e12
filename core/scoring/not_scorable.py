"""`not_scorable(reason)`: what a step returns to say the run cannot be scored."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NotScorable", "not_scorable"]


@dataclass(frozen=True, slots=True)
class NotScorable:
    """The sentinel a step returns to stop the pipeline; the run then has no score."""

    reason: str | None = None


def not_scorable(reason: str | None = None) -> NotScorable:
    """Stop the pipeline here: later steps and judge calls are skipped, the result has
    `not_scorable = {step, reason}` and no score, and averages leave the run out."""
    if reason is not None and not isinstance(reason, str):
        raise TypeError(f"not_scorable(reason) takes a string, not {type(reason).__name__}")
    return NotScorable(reason)
