"""A large experiment read without loading it: the per-scorer aggregates the database computes
(summaries, histograms, judge usage) equal a Python computation over the same rows, and the
item table's pages (filters, sort, count, bad page numbers), on SQLite and (when available)
PostgreSQL."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scorelab_db import BACKENDS, database

from core.records import (
    ColumnMapping,
    DatasetItem,
    ResultQuery,
    ScorerOutcome,
    ScorerSpec,
)
from core.run_results import JudgeUsage
from core.storage import NotFoundError, Store, reads

SCORERS = ["alpha", "beta", "wide"]
ITEMS = 240
WORDS = ["Paris", "tokyo", "LIMA", "oslo", "50%_off", "back\\slash"]
EDGES = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]  # exact bin edges: the tricky ones


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


def make_items() -> list[DatasetItem]:
    rng = random.Random(7)
    return [
        DatasetItem(
            id=f"item-{n:04d}",
            input=f"question {n} about {rng.choice(WORDS)}",
            output={"text": f"answer {rng.choice(WORDS)}"} if n % 3 else f"plain {n}",
            ground_truth=None if n % 5 == 0 else f"truth {rng.choice(WORDS)}",
        )
        for n in range(ITEMS)
    ]


def make_outcomes() -> list[ScorerOutcome]:
    """Most items scored by each scorer: scores on exact edges, some None (not scorable), some
    missing; `wide` has scores outside 0..1 (its histogram widens)."""
    rng = random.Random(11)
    outcomes = []
    for n in range(ITEMS):
        for scorer_id in SCORERS:
            if rng.random() < 0.15:
                continue  # not run (or failed: failures are never stored)
            if rng.random() < 0.1:
                score = None
            elif scorer_id == "wide":
                score = rng.uniform(-2.0, 3.0)
            elif rng.random() < 0.3:
                score = rng.choice(EDGES)
            else:
                score = rng.random()
            calls = rng.choice([0, 1, 3])
            usage = (
                JudgeUsage()
                if not calls
                else JudgeUsage(
                    input_tokens=rng.randint(1, 500),
                    output_tokens=rng.randint(1, 90),
                    total_tokens=rng.randint(2, 600),
                    reasoning_tokens=rng.choice([None, rng.randint(0, 40)]),
                )
            )
            outcomes.append(
                ScorerOutcome(
                    item_id=f"item-{n:04d}",
                    scorer_id=scorer_id,
                    status="success",
                    score=score,
                    reason=f"reason {n}",
                    result={"score": score},
                    duration_ms=rng.randint(0, 2000),
                    usage=usage,
                    judge_calls=calls,
                    judge_attempts=calls + rng.choice([0, 1]),
                )
            )
    return outcomes


@pytest.fixture
def stored(store: Store) -> tuple[str, list[DatasetItem], list[ScorerOutcome]]:
    items = make_items()
    dataset = store.save_dataset(
        name="set",
        file_name="set.jsonl",
        format="jsonl",
        fingerprint="a" * 64,
        columns=["input", "output", "ground_truth"],
        mapping=ColumnMapping(input="input", output="output", ground_truth="ground_truth"),
        items=items,
    )
    experiment = store.create_experiment(
        name="big",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id=s) for s in SCORERS],
        scorer_ids=SCORERS,
        judge_model="openai/gpt-4o-mini",
        api_base=None,
        judge_settings={},
        concurrency=4,
    )
    outcomes = make_outcomes()
    store.add_results(experiment.id, outcomes)
    other = store.create_experiment(  # another experiment's rows must never count
        name="other",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="alpha")],
        scorer_ids=["alpha"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(other.id, [o.model_copy(update={"score": 0.5}) for o in outcomes[:50]])
    return experiment.id, items, outcomes


# ---- aggregates ----


def test_summaries_equal_python_over_the_same_rows(store: Store, stored: Any) -> None:
    experiment_id, _items, outcomes = stored
    found = {s.scorer_id: s for s in store.score_summaries(experiment_id)}
    assert sorted(found) == sorted(SCORERS)
    for scorer_id in SCORERS:
        mine = [o for o in outcomes if o.scorer_id == scorer_id]
        scores = [o.score for o in mine if o.score is not None]
        summary = found[scorer_id]
        assert summary.count == len(mine) and summary.scored == len(scores)
        assert summary.mean == pytest.approx(sum(scores) / len(scores), rel=1e-12)
        assert (summary.min, summary.max) == (min(scores), max(scores))
    assert store.get_experiment(experiment_id).scores == pytest.approx(
        {s: found[s].mean for s in SCORERS}
    )


def test_histograms_equal_numpy_over_the_same_rows(store: Store, stored: Any) -> None:
    experiment_id, _items, outcomes = stored
    for bins in (10, 7, 1):
        found = {h.scorer_id: h for h in store.score_histograms(experiment_id, bins)}
        for scorer_id in SCORERS:
            scores = np.array(
                [o.score for o in outcomes if o.scorer_id == scorer_id and o.score is not None]
            )
            low, high = min(0.0, scores.min()), max(1.0, scores.max())
            counts, edges = np.histogram(scores, bins=bins, range=(low, high))
            histogram = found[scorer_id]
            assert histogram.counts == counts.tolist(), (scorer_id, bins)
            assert (histogram.low, histogram.high) == (low, high)
            assert histogram.edges == pytest.approx(edges.tolist())
    assert found["wide"].low < 0 and found["wide"].high > 1  # widened to its scores


def test_judge_usage_equals_python_sums(store: Store, stored: Any) -> None:
    experiment_id, _items, outcomes = stored
    found = {u.scorer_id: u for u in store.judge_usage(experiment_id)}
    for scorer_id in SCORERS:
        mine = [o for o in outcomes if o.scorer_id == scorer_id and o.judge_attempts > 0]
        usage = found[scorer_id]
        assert usage.model == "openai/gpt-4o-mini"
        assert usage.runs == len(mine)
        assert usage.judge_calls == sum(o.judge_calls for o in mine)
        assert usage.judge_attempts == sum(o.judge_attempts for o in mine)
        assert usage.duration_ms == sum(o.duration_ms for o in mine)
        for kind in ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens"):
            values = [getattr(o.usage, kind) for o in mine if getattr(o.usage, kind) is not None]
            assert getattr(usage.usage, kind) == (sum(values) if values else None), kind
        assert usage.usage.cached_input_tokens is None  # never reported: NULL, not 0
        assert usage.est_cost_usd is None  # the service prices it, not the store


def test_an_experiment_without_results_has_empty_aggregates(store: Store, stored: Any) -> None:
    assert store.score_summaries("nope") == []
    assert store.score_histograms("nope") == []
    assert store.judge_usage("nope") == []
    with pytest.raises(ValueError, match="1 bin or more"):
        store.score_histograms(stored[0], 0)


# ---- the item table, a page at a time ----


def expected_ids(
    items: list[DatasetItem],
    outcomes: list[ScorerOutcome],
    query: ResultQuery,
    only: set[str] | None = None,
) -> list[str]:
    """The query answered in Python, over every item."""
    scores: dict[tuple[str, str], float | None] = {
        (o.item_id, o.scorer_id): o.score for o in outcomes
    }
    chosen = query.scorer_ids or SCORERS
    needle = query.search.strip().lower()
    rows = []
    for position, item in enumerate(items):
        if only is not None and item.id not in only:
            continue
        if query.score_range is not None:
            low, high = query.score_range
            values = [scores.get((item.id, s)) for s in chosen]
            if not any(v is not None and low <= v <= high for v in values):
                continue
        if needle and not any(needle in text for text in _texts(item)):
            continue
        key: Any = position
        if query.sort != "position":
            value = scores.get((item.id, query.sort_scorer or ""))
            if value is None:
                continue  # sorted by a score: the items with one
            # Ties in the order the results were written (here: item order), reversed when
            # the highest come first.
            key = (-value, -position) if query.sort == "score_desc" else (value, position)
        rows.append((key, item.id))
    return [item_id for _, item_id in sorted(rows)]


def _texts(item: DatasetItem) -> list[str]:
    import json

    def text(value: Any) -> str:
        return "null" if value is None else json.dumps(value, ensure_ascii=False)

    values = (item.input, item.output, item.ground_truth)
    return [item.id.lower(), *(text(v).lower() for v in values)]


QUERIES = [
    ResultQuery(),
    ResultQuery(page_size=7, page=3),
    ResultQuery(score_range=(0.2, 0.5), page_size=10, page=2),
    ResultQuery(scorer_ids=["beta"], score_range=(0.3, 0.3)),  # an exact score only
    ResultQuery(scorer_ids=["beta"], score_range=(0.3, 0.3), page=2, page_size=3),  # few
    ResultQuery(scorer_ids=["alpha", "wide"], score_range=(0.9, 1.0), search="paris"),
    ResultQuery(search="PARIS"),  # case-insensitive
    ResultQuery(search="50%_off"),  # LIKE's wildcards are plain text
    ResultQuery(search="%"),
    ResultQuery(search="back\\\\slash"),  # a backslash (escaped in the JSON text)
    ResultQuery(search="item-012"),  # the id
    ResultQuery(search="truth tokyo", page_size=1000),
    ResultQuery(sort="score_asc", sort_scorer="alpha", page_size=25, page=2),
    ResultQuery(sort="score_desc", sort_scorer="wide", score_range=(0.0, 0.5)),
    ResultQuery(sort="score_desc", sort_scorer="beta", search="oslo", page_size=5),
]


@pytest.mark.parametrize("query", QUERIES, ids=[str(n) for n in range(len(QUERIES))])
def test_pages_equal_python_over_every_item(store: Store, stored: Any, query: ResultQuery) -> None:
    experiment_id, items, outcomes = stored
    wanted = expected_ids(items, outcomes, query)
    page = store.result_page(experiment_id, query)
    assert page.total == len(wanted)
    first = (page.page - 1) * query.page_size
    assert [row.item_id for row in page.rows] == wanted[first : first + query.page_size]
    assert page.page == min(query.page, max(1, math.ceil(len(wanted) / query.page_size)))


def test_rows_carry_their_items_scores_and_tokens(store: Store, stored: Any) -> None:
    experiment_id, items, outcomes = stored
    page = store.result_page(experiment_id, ResultQuery(page_size=30, page=2))
    by_id = {item.id: (n, item) for n, item in enumerate(items)}
    for row in page.rows:
        position, item = by_id[row.item_id]
        assert (row.position, row.input, row.output, row.ground_truth) == (
            position,
            item.input,
            item.output,
            item.ground_truth,
        )
        mine = [o for o in outcomes if o.item_id == row.item_id]
        assert row.scores == {o.scorer_id: o.score for o in mine}
        assert row.judge_tokens == sum(o.usage.total_tokens or 0 for o in mine)
        assert row.failed == []  # failures are not stored: the service adds them


def test_the_last_page_and_beyond(store: Store, stored: Any) -> None:
    experiment_id, items, _outcomes = stored
    last = store.result_page(experiment_id, ResultQuery(page_size=50, page=5))
    assert (last.total, last.pages, last.page) == (ITEMS, 5, 5)
    assert [r.item_id for r in last.rows] == [i.id for i in items[200:]]  # 40 on the last
    beyond = store.result_page(experiment_id, ResultQuery(page_size=50, page=99))
    assert beyond.page == 5 and beyond.rows == last.rows  # clamped to the last page
    nothing = store.result_page(experiment_id, ResultQuery(search="no such text", page=3))
    assert (nothing.total, nothing.pages, nothing.page, nothing.rows) == (0, 1, 1, [])


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (ResultQuery(page=0), "page must be 1 or more, got 0"),
        (ResultQuery(page=-3), "page must be 1 or more"),
        (ResultQuery(page_size=0), "page_size must be from 1 to 1,000, got 0"),
        (ResultQuery(page_size=5000), "page_size must be from 1 to 1,000"),
        (ResultQuery(score_range=(0.8, 0.2)), "score_range goes from 0.8 down to 0.2"),
        (ResultQuery(sort="score_asc"), "needs a sort_scorer"),
    ],
)
def test_bad_queries_are_refused_naming_the_field(
    store: Store, stored: Any, query: ResultQuery, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        store.result_page(stored[0], query)


def test_an_unknown_experiment_is_not_found(store: Store, stored: Any) -> None:
    with pytest.raises(NotFoundError, match="No experiment with id 'nope'"):
        store.result_page("nope", ResultQuery())


@pytest.mark.parametrize("chunk", [5_000, 7])  # one statement, then many chunks
def test_pages_restricted_to_given_items(
    store: Store, stored: Any, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reads, "_ID_CHUNK", chunk)
    experiment_id, items, outcomes = stored
    only = {item.id for item in items[::4]} | {"not-an-item"}
    for query in (
        ResultQuery(page_size=9, page=2),
        ResultQuery(score_range=(0.0, 0.6), search="a", page_size=4, page=3),
        ResultQuery(sort="score_desc", sort_scorer="alpha", page_size=6, page=2),
        ResultQuery(page_size=50, page=40),
    ):
        wanted = expected_ids(items, outcomes, query, only)
        page = store.result_page(experiment_id, query, item_ids=only)
        first = (page.page - 1) * query.page_size
        assert page.total == len(wanted)
        assert [r.item_id for r in page.rows] == wanted[first : first + query.page_size]
    empty = store.result_page(experiment_id, ResultQuery(), item_ids=set())
    assert (empty.total, empty.rows) == (0, [])


def test_a_text_search_stops_counting_past_the_page_asked_for(
    store: Store, stored: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reads, "COUNT_AT_LEAST", 20)
    experiment_id, items, _outcomes = stored
    query = ResultQuery(search="question", page_size=5, page=2)
    page = store.result_page(experiment_id, query)
    assert (page.total, page.total_at_least, page.pages) == (20, True, 4)  # "20+"
    assert [r.item_id for r in page.rows] == [i.id for i in items[5:10]]
    far = store.result_page(experiment_id, query.model_copy(update={"page": 30}))
    assert (far.total, far.total_at_least, far.page) == (150, True, 30)  # past page 30
    assert [r.item_id for r in far.rows] == [i.id for i in items[145:150]]
    few = ResultQuery(search="item-000")  # 10 matches: counted whole
    assert store.result_page(experiment_id, few).total_at_least is False
    exact = store.result_page(experiment_id, ResultQuery(page_size=5))  # no search: exact
    assert (exact.total, exact.total_at_least) == (ITEMS, False)


def test_a_finished_experiments_totals_are_kept_until_its_row_or_results_change(
    store: Store, stored: Any
) -> None:
    experiment_id, _items, outcomes = stored
    store.finish_experiment(experiment_id, "completed")
    before = {s.scorer_id: s.count for s in store.score_summaries(experiment_id)}
    assert experiment_id in store._settled  # kept: a finished experiment's results are set
    extra = ScorerOutcome(item_id="item-0000", scorer_id="late", status="success", score=0.25)
    store.add_results(experiment_id, [extra])  # through this store: forgotten at once
    assert {s.scorer_id: s.count for s in store.score_summaries(experiment_id)} == {
        **before,
        "late": 1,
    }
    other = Store(store.url)  # another process writes, then updates the row (as a run does)
    try:
        other.add_results(experiment_id, [extra.model_copy(update={"item_id": "item-0001"})])
        other.finish_experiment(experiment_id, "completed")
    finally:
        other.close()
    assert store.get_experiment(experiment_id).counts.succeeded == len(outcomes) + 2
    assert {s.scorer_id: s.count for s in store.score_summaries(experiment_id)}["late"] == 2
    store.delete_experiment(experiment_id)
    assert experiment_id not in store._settled and store.score_summaries(experiment_id) == []
