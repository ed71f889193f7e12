"""The driver's plan of a Ray run (core/experiments/ray_chunks.py): chunks of about the asked
size item by item, skipped pairs taken off the total, the rest of a chunk resent a few times
only, the counts and means as the engine keeps them. No Ray needed."""

from __future__ import annotations

import pytest

from core.experiments.ray_chunks import MAX_RETRIES, Chunk, Tally, plan_chunks
from core.records import DatasetItem, RunCounts, ScorerOutcome


def items(count: int) -> list[DatasetItem]:
    return [DatasetItem(id=f"i{n}", dataset_id="d", input=f"q{n}") for n in range(count)]


def test_chunks_hold_about_the_asked_pairs_and_every_pair_once() -> None:
    tally = Tally(RunCounts(total=10 * 3))
    chunks = list(plan_chunks(items(10), ["a", "b", "c"], None, 7, tally))
    assert [len(chunk.pending) for chunk in chunks] == [9, 9, 9, 3]  # whole items: 3 a piece
    pairs = [pair for chunk in chunks for pair in chunk.pending]
    assert len(pairs) == len(set(pairs)) == 30
    assert tally.counts.total == 30


def test_skipped_pairs_are_taken_off_the_total_and_never_sent() -> None:
    tally = Tally(RunCounts(total=4 * 2))
    done = {("i0", "a"), ("i0", "b"), ("i2", "b")}
    chunks = list(
        plan_chunks(items(4), ["a", "b"], lambda item, s: (item.id, s) in done, 100, tally)
    )
    (chunk,) = chunks
    assert chunk.pending == {("i1", "a"), ("i1", "b"), ("i2", "a"), ("i3", "a"), ("i3", "b")}
    assert [item.id for item, _ in chunk.units] == ["i1", "i2", "i3"]  # i0: nothing left
    assert tally.counts.total == 5


def test_an_item_that_is_not_one_is_named_by_position() -> None:
    bad: list[DatasetItem] = [*items(2), "oops"]  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"items\[2\] must be a DatasetItem, not str"):
        list(plan_chunks(bad, ["a"], None, 1, Tally(RunCounts(total=3))))


def test_the_rest_of_a_chunk_holds_only_what_never_came_back() -> None:
    (chunk,) = plan_chunks(items(3), ["a", "b"], None, 100, Tally(RunCounts(total=6)))
    chunk.pending -= {("i0", "a"), ("i0", "b"), ("i1", "a")}
    rest = chunk.rest()
    assert [(item.id, ids) for item, ids in rest.units] == [("i1", ("b",)), ("i2", ("a", "b"))]
    assert rest.attempts == 1 and rest.pending == chunk.pending


def test_a_chunk_resent_too_often_is_refused_with_its_count() -> None:
    chunk = Chunk([(items(1)[0], ("a",))], {("i0", "a")})
    for _ in range(MAX_RETRIES):
        chunk = chunk.rest()
    with pytest.raises(
        RuntimeError, match=rf"1 runs of a Ray chunk never came back after {MAX_RETRIES + 1} tries"
    ):
        chunk.rest()


def test_the_tally_counts_outcomes_and_keeps_the_mean_of_finite_scores() -> None:
    tally = Tally(RunCounts(total=4))
    for score in (0.2, 0.6):
        tally.add(ScorerOutcome(item_id="i", scorer_id="a", status="success", score=score))
    tally.add(ScorerOutcome(item_id="j", scorer_id="a", status="success", score=float("nan")))
    tally.add(ScorerOutcome(item_id="k", scorer_id="a", status="failed", error="boom"))
    assert tally.means() == {"a": pytest.approx(0.4)}
    assert (tally.counts.succeeded, tally.counts.failed) == (3, 1)
