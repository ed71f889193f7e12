"""What a Ray worker sends back: a chunk's outcomes as compressed parts under Ray's inline limit.

A part holding a failure stays under the limit, so Ray hands it straight to the driver's memory
and it never reaches the object store or a disk (docs/scale.md).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.records import ScorerOutcome

__all__ = [
    "RAY_INLINE_DEFAULT",
    "ChunkResult",
    "inline_limit",
    "pack_outcomes",
    "unpack_outcomes",
]

RAY_INLINE_DEFAULT = 100 * 1024
"""Ray's default `max_direct_call_object_size`: a task's return below it goes straight to the
caller's in-process memory store, never to the object store."""

_INLINE_SHARE = 0.8
"""Parts are packed to this share of Ray's inline limit (pickling adds a few bytes)."""


def inline_limit() -> int:
    """The most bytes a part may have: a share of Ray's inline limit (its documented default,
    `max_direct_call_object_size`: a cluster must not be started with a lower one)."""
    return int(RAY_INLINE_DEFAULT * _INLINE_SHARE)


def pack_outcomes(outcomes: Sequence[ScorerOutcome], limit: int) -> list[bytes]:
    """Outcomes as compressed parts. Failures and successes go in separate parts; a part with
    a failure is at most `limit` bytes (a failure too large alone loses its snapshot, then the
    tail of its texts); a success too large alone is a part of its own (it is stored anyway)."""
    failures = [o for o in outcomes if o.status != "success"]
    successes = [o for o in outcomes if o.status == "success"]
    parts = _packed([_fitting(o, limit) for o in failures], limit)
    return parts + _packed(successes, limit)


def unpack_outcomes(part: bytes) -> list[ScorerOutcome]:
    """The outcomes of a part made by `pack_outcomes`."""
    return [ScorerOutcome.model_validate(entry) for entry in json.loads(zlib.decompress(part))]


def _encoded(outcomes: Sequence[ScorerOutcome]) -> bytes:
    text = "[" + ",".join(o.model_dump_json() for o in outcomes) + "]"
    return zlib.compress(text.encode(), 6)


def _packed(outcomes: Sequence[ScorerOutcome], limit: int) -> list[bytes]:
    """Greedy parts under `limit`, split in halves where one is over it."""
    if not outcomes:
        return []
    whole = _encoded(outcomes)
    if len(whole) <= limit or len(outcomes) == 1:
        return [whole]
    half = len(outcomes) // 2
    return _packed(outcomes[:half], limit) + _packed(outcomes[half:], limit)


def _fitting(failure: ScorerOutcome, limit: int) -> ScorerOutcome:
    """A failure small enough to travel inline: its snapshot first, then its texts cut."""
    if len(_encoded([failure])) <= limit:
        return failure
    failure = failure.model_copy(update={"snapshot": None, "failed_execution": None})
    keep = limit
    while len(_encoded([failure])) > limit and keep > 16:
        keep //= 2
        failure = failure.model_copy(
            update={
                "error": _cut(failure.error, keep),
                "recovered_reason": _cut(failure.recovered_reason, keep),
            }
        )
    return failure


def _cut(value: Any, keep: int) -> Any:
    text = value if isinstance(value, str) else (None if value is None else str(value))
    if text is None or len(text) <= keep:
        return value
    return text[:keep] + " [cut: too long to send back from the Ray worker]"


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What the driver received of one chunk."""

    outcomes: list[ScorerOutcome]
    sizes: list[int] = field(default_factory=list)
