"""Slices by metadata and metadata filters, computed by the database: the groups, counts, means
and standard deviations equal a Python computation over the same rows, and a filtered page holds
exactly the items Python keeps, on SQLite and (when available) PostgreSQL."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scorelab_db import BACKENDS, database

from core.records import (
    ColumnMapping,
    DatasetItem,
    ResultQuery,
    ScorerOutcome,
    ScorerSpec,
)
from core.storage import Store

SCORERS = ["alpha", "beta"]
ITEMS = 180
CATEGORIES = ["Health", "Law", "Misconceptions", "Ünïcode ✓"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


def metadata(n: int, rng: random.Random) -> dict[str, Any]:
    """A string category (absent from some items, null in others), a JSON boolean and a
    number (int or float)."""
    found: dict[str, Any] = {"flag": n % 3 == 0, "level": rng.choice([1, 2, 2.5])}
    if n % 11 == 0:
        found["category"] = None
    elif n % 17 == 0:
        found["category"] = ""  # an empty cell: no value too
    elif n % 13 != 0:
        found["category"] = rng.choice(CATEGORIES)
    return found


def text(value: Any) -> str:
    """A metadata value as the database gives it (`core.storage.slices.metadata_text`)."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@pytest.fixture
def stored(store: Store) -> tuple[str, list[DatasetItem], list[ScorerOutcome]]:
    rng = random.Random(5)
    items = [
        DatasetItem(id=f"it-{n:03d}", input=f"q{n}", output=f"a{n}", metadata=metadata(n, rng))
        for n in range(ITEMS)
    ]
    dataset = store.save_dataset(
        name="set",
        file_name="set.jsonl",
        format="jsonl",
        fingerprint="b" * 64,
        columns=["input", "output", "category", "flag", "level"],
        mapping=ColumnMapping(
            input="input", output="output", metadata=["category", "flag", "level"]
        ),
        items=items,
    )
    experiment = store.create_experiment(
        name="sliced",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id=s) for s in SCORERS],
        scorer_ids=SCORERS,
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=2,
    )
    outcomes = [
        ScorerOutcome(
            item_id=item.id,
            scorer_id=scorer_id,
            status="success",
            score=None if rng.random() < 0.05 else rng.random(),
        )
        for item in items
        for scorer_id in SCORERS
        if rng.random() > 0.1  # the others failed or were never run: not stored
    ]
    store.add_results(experiment.id, outcomes)
    other = store.create_experiment(  # another experiment's results must never count
        name="other",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="alpha")],
        scorer_ids=["alpha"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(other.id, [o.model_copy(update={"score": 0.0}) for o in outcomes[:40]])
    return experiment.id, items, outcomes


@pytest.mark.parametrize("column", ["category", "flag", "level"])
def test_slices_equal_python_over_the_same_rows(store: Store, stored: Any, column: str) -> None:
    experiment_id, items, outcomes = stored
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(text(item.metadata.get(column)), []).append(item.id)
    found = store.slice_summaries(experiment_id, column)
    assert sorted(s.value for s in found) == sorted(groups)
    assert [s.items for s in found] == sorted((len(v) for v in groups.values()), reverse=True)
    for summary in found:
        members = set(groups[summary.value])
        assert summary.items == len(members)
        assert [s.scorer_id for s in summary.scorers] == SCORERS
        for scorer in summary.scorers:
            runs = [o for o in outcomes if o.item_id in members and o.scorer_id == scorer.scorer_id]
            scores = [o.score for o in runs if o.score is not None]
            assert (scorer.runs, scorer.scored) == (len(runs), len(scores))
            assert scorer.missing == len(members) - len(runs)
            if scores:
                assert scorer.mean == pytest.approx(statistics.fmean(scores))
            else:
                assert scorer.mean is None
            if len(scores) >= 2:
                assert scorer.sd == pytest.approx(statistics.stdev(scores), abs=1e-9)
            else:
                assert scorer.sd is None
            assert scorer.failed is None and scorer.low is None  # the service adds them


def test_values_read_as_text(store: Store, stored: Any) -> None:
    experiment_id, _items, _outcomes = stored
    assert {s.value for s in store.slice_summaries(experiment_id, "flag")} == {"true", "false"}
    assert {s.value for s in store.slice_summaries(experiment_id, "level")} == {"1", "2", "2.5"}
    categories = {s.value for s in store.slice_summaries(experiment_id, "category")}
    assert categories == {*CATEGORIES, ""}  # null and absent are both "no value"
    nothing = store.slice_summaries(experiment_id, "no such column")
    assert [(s.value, s.items) for s in nothing] == [("", ITEMS)]


FILTERS = [
    {"category": ["Law"]},
    {"category": ["Law", "Ünïcode ✓"]},
    {"category": [""]},
    {"category": ["Health", ""], "flag": ["true"]},
    {"level": ["2.5"]},
    {"category": []},  # nothing chosen: nothing kept
]


@pytest.mark.parametrize("filters", FILTERS, ids=[str(n) for n in range(len(FILTERS))])
@pytest.mark.parametrize(
    "base",
    [
        ResultQuery(page_size=500),
        ResultQuery(page_size=7, page=2),
        ResultQuery(sort="score_desc", sort_scorer="alpha", page_size=500),
        ResultQuery(score_range=(0.2, 0.6), page_size=500),
        ResultQuery(search="q1", page_size=500),
    ],
    ids=["all", "page", "sorted", "range", "search"],
)
def test_metadata_filters_keep_what_python_keeps(
    store: Store, stored: Any, filters: dict[str, list[str]], base: ResultQuery
) -> None:
    experiment_id, items, outcomes = stored
    scores = {(o.item_id, o.scorer_id): o.score for o in outcomes}
    kept = []
    for position, item in enumerate(items):
        if not all(text(item.metadata.get(c)) in v for c, v in filters.items()):
            continue
        if base.search and base.search not in item.input:
            continue
        if base.score_range is not None:
            low, high = base.score_range
            values = [scores.get((item.id, s)) for s in SCORERS]
            if not any(v is not None and low <= v <= high for v in values):
                continue
        key: Any = position
        if base.sort == "score_desc":
            value = scores.get((item.id, "alpha"))
            if value is None:
                continue
            key = (-value, -position)
        kept.append((key, item.id))
    wanted = [item_id for _, item_id in sorted(kept)]
    page = store.result_page(experiment_id, base.model_copy(update={"metadata": filters}))
    assert page.total == len(wanted)
    first = (page.page - 1) * base.page_size
    assert [row.item_id for row in page.rows] == wanted[first : first + base.page_size]
    assert page.page == min(base.page, max(1, math.ceil(len(wanted) / base.page_size)))


def test_rows_carry_their_metadata(store: Store, stored: Any) -> None:
    experiment_id, items, _outcomes = stored
    page = store.result_page(experiment_id, ResultQuery(page_size=20, page=3))
    by_id = {item.id: item for item in items}
    assert page.rows
    for row in page.rows:
        assert row.metadata == by_id[row.item_id].metadata


def test_item_values_are_the_slice_values(store: Store, stored: Any) -> None:
    experiment_id, items, _outcomes = stored
    dataset_id = store.get_experiment(experiment_id).dataset_id
    wanted = [item.id for item in items[:30]] + ["not an item"]
    found = store.metadata_values(dataset_id, "flag", wanted)
    assert found == {item.id: text(item.metadata["flag"]) for item in items[:30]}


HOSTILE_NAMES = [
    'a"b',
    "a'b",
    "a\\b",
    'a\\"b',
    "a.b",
    "[0]",
    "a[1]",
    "$.x",
    "$",
    "*",
    '"',
    '"]',
    "Ünï ✓",
    "a  b",
    "tab\tkey",
]


@pytest.fixture
def hostile(store: Store) -> tuple[str, list[DatasetItem]]:
    """A dataset whose metadata columns are named with quotes, brackets, dots, backslashes,
    JSON-path syntax and unicode, and an experiment over it."""
    items = [
        DatasetItem(
            id=f"h{n}",
            input=f"q{n}",
            output=f"a{n}",
            metadata={name: f"v{(n + k) % 3}" for k, name in enumerate(HOSTILE_NAMES)}
            | {"a": "plain", "b": n},  # names a careless path could read instead
        )
        for n in range(12)
    ]
    dataset = store.save_dataset(
        name="hostile",
        file_name="h.jsonl",
        format="jsonl",
        fingerprint="c" * 64,
        columns=["input", "output", *HOSTILE_NAMES, "a", "b"],
        mapping=ColumnMapping(input="input", output="output", metadata=[*HOSTILE_NAMES, "a", "b"]),
        items=items,
    )
    experiment = store.create_experiment(
        name="hostile",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="alpha")],
        scorer_ids=["alpha"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(
        experiment.id,
        [
            ScorerOutcome(item_id=i.id, scorer_id="alpha", status="success", score=0.5)
            for i in items
        ],
    )
    return experiment.id, items


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_any_column_name_reads_in_slices_filters_and_values(
    store: Store, hostile: tuple[str, list[DatasetItem]], name: str
) -> None:
    """Issue 19: a column named `a"b` (or with other quotes, brackets, dots, unicode) is
    accepted at import, so slices, the grid's metadata filter and item values read it too
    (the name bound as a parameter, never spliced into SQL or a JSON path)."""
    experiment_id, items = hostile
    wanted: dict[str, int] = {}
    for item in items:
        wanted[item.metadata[name]] = wanted.get(item.metadata[name], 0) + 1
    found = store.slice_summaries(experiment_id, name)
    assert {s.value: s.items for s in found} == wanted
    page = store.result_page(experiment_id, ResultQuery(page_size=50, metadata={name: ["v1"]}))
    assert [row.item_id for row in page.rows] == [i.id for i in items if i.metadata[name] == "v1"]
    dataset_id = store.get_experiment(experiment_id).dataset_id
    values = store.metadata_values(dataset_id, name, [i.id for i in items])
    assert values == {i.id: i.metadata[name] for i in items}
