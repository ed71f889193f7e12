"""What a Ray worker sends back (core/experiments/ray_parts.py): every part holding a failure
under Ray's inline limit, failures apart from successes, an oversized failure cut to fit. No Ray
needed."""

from __future__ import annotations

import os

import pytest

from core.experiments.ray_parts import (
    RAY_INLINE_DEFAULT,
    inline_limit,
    pack_outcomes,
    unpack_outcomes,
)
from core.records import ScorerOutcome


def failure(index: int, size: int) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=f"item-{index}",
        scorer_id="judge",
        status="failed",
        error=os.urandom(size // 2).hex(),
        error_type="ScorerRunError",
        snapshot={"raw": os.urandom(size).hex()},
    )


def test_every_part_holding_a_failure_stays_under_rays_inline_limit() -> None:
    limit = inline_limit()
    assert limit < RAY_INLINE_DEFAULT
    failures = [failure(n, 3_000) for n in range(60)]
    successes = [
        ScorerOutcome(item_id=f"item-{n}", scorer_id="s", status="success", score=0.5)
        for n in range(500)
    ]
    parts = pack_outcomes(failures + successes, limit)
    back = [outcome for part in parts for outcome in unpack_outcomes(part)]
    assert sorted(back, key=repr) == sorted(failures + successes, key=repr)
    with_failures = [p for p in parts if any(o.status == "failed" for o in unpack_outcomes(p))]
    assert len(with_failures) > 1  # they did not fit in one part
    assert all(len(part) <= limit for part in with_failures)
    assert all(o.status == "failed" for p in with_failures for o in unpack_outcomes(p))


def test_a_failure_too_large_alone_loses_its_snapshot_then_the_tail_of_its_texts() -> None:
    limit = inline_limit()
    (part,) = pack_outcomes([failure(0, 400_000)], limit)
    (sent,) = unpack_outcomes(part)
    assert len(part) <= limit
    assert sent.snapshot is None
    assert sent.error is not None and sent.error.endswith(
        "too long to send back from the Ray worker]"
    )
    assert (sent.item_id, sent.scorer_id, sent.error_type) == ("item-0", "judge", "ScorerRunError")


def test_a_success_too_large_alone_travels_whole_in_a_part_of_its_own() -> None:
    big = ScorerOutcome(
        item_id="item-big", scorer_id="s", status="success", score=1.0,
        reason=os.urandom(200_000).hex(),
    )  # fmt: skip
    small = ScorerOutcome(item_id="item-small", scorer_id="s", status="success", score=0.0)
    parts = pack_outcomes([big, small], 1_000)
    assert [o for part in parts for o in unpack_outcomes(part)] == [big, small]
    assert any(len(part) > 1_000 for part in parts)  # stored anyway: never cut


def test_no_outcomes_make_no_part() -> None:
    assert pack_outcomes([], inline_limit()) == []


@pytest.mark.parametrize("part", [b"", b"not zlib"])
def test_a_part_that_is_not_one_is_refused(part: bytes) -> None:
    with pytest.raises(Exception):  # noqa: B017 (zlib.error: no part of ours)
        unpack_outcomes(part)
