"""Shapes of the judge's answers that several LLM-judge scorers share (claims, verdicts), and
`folded`, the validator that reads a judge's label case- and space-insensitively."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["Claims", "Verdict", "Verdicts", "folded"]


class Claims(BaseModel):
    """A judge's answer listing the claims of a text."""

    claims: list[str]


class Verdict(BaseModel):
    """One verdict with its reason."""

    verdict: str
    reason: str


class Verdicts(BaseModel):
    """A judge's answer: one verdict per item, in order."""

    verdicts: list[Verdict]


def folded(value: Any) -> Any:
    """A judge's label trimmed and lower-cased (anything but a string as is); the models of
    the judge's answers use it as a `mode="before"` field validator, so that "High " is
    read as "high"."""
    return value.strip().lower() if isinstance(value, str) else value
