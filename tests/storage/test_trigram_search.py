"""PostgreSQL's text search under a score filter served by the dataset's trigram index
(`pg_trgm`, revision 0016: built lazily, test_postgres_lazy_trigram.py): the statements
`result_page` sends for a search are planned on the index, and answer as before. SQLite has its
own (revision 0015: test_sqlite_trigram_search.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database
from sqlalchemy import select

from core.records import ColumnMapping, DatasetItem, ResultQuery, ScorerOutcome, ScorerSpec
from core.storage import Store, reads
from core.storage.search_index import build_postgres_index, index_dataset_texts
from core.storage.tables import SEARCHED_TEXT, TRIGRAM_INDEX, DatasetItemRow
from core.storage.text_search import dataset_index_name, matches, search_base

POSTGRES = [p for p in BACKENDS if p.id == "postgres"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        opened = Store(url)
        yield opened
        opened.close()


def _experiment(store: Store, items: int) -> str:
    rng = random.Random(5)
    # Words of a large vocabulary, "paris river" in one item of 50: a rare needle, the case
    # an index is for (a needle in every item is cheaper read by a scan).
    texts = [
        " ".join(f"w{rng.randrange(10**6):06d}" for _ in range(6))
        + (" paris river" if n % 50 == 7 else "")
        for n in range(items)
    ]
    dataset = store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="t" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[
            [
                DatasetItem(id=f"q{n}", input=f"About {text}?", output=f"Answer {n}.")
                for n, text in enumerate(texts)
            ]
        ],
    )
    info = store.create_experiment(
        name="e",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=["s"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(
        info.id,
        [
            ScorerOutcome(item_id=f"q{n}", scorer_id="s", status="success", score=n / items)
            for n in range(items)
        ],
    )
    store.finish_experiment(info.id, "completed")
    return info.id


def _searches(store: Store, experiment_id: str, query: ResultQuery) -> list[tuple[str, Any]]:
    """The statements (with their parameters) `result_page` sends that search the texts."""
    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "LIKE" in statement.upper():
            sent.append((statement, parameters))

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", record)
    try:
        page = store.result_page(experiment_id, query)
    finally:
        sqlalchemy.event.remove(store.engine, "before_cursor_execute", record)
    assert page.rows, "the search found nothing: the plan below would prove nothing"
    return sent


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_the_searched_expression_is_served_by_the_trigram_index(store: Store) -> None:
    experiment_id = _experiment(store, 2_000)
    sent = _searches(store, experiment_id, ResultQuery(score_range=(0.1, 0.9), search="paris"))
    assert sent and all(SEARCHED_TEXT in s.replace("dataset_items.", "") for s, _ in sent)
    dataset_id = store.get_experiment(experiment_id).dataset_id
    assert build_postgres_index(store.engine, dataset_id)
    items = DatasetItemRow.__table__
    search = select(items.c.position).where(
        matches("paris river", "postgresql", dataset_id=dataset_id)
    )
    with store.engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE dataset_items")
        # 2,000 items are cheaper scanned: without sequential scans the plan shows whether the
        # search's own expression (the one `result_page` sends) is answered from the index.
        connection.exec_driver_sql("SET enable_seqscan = off")
        compiled = search.compile(connection)
        plan = connection.exec_driver_sql(f"EXPLAIN {compiled}", compiled.params).all()
    text = "\n".join(row[0] for row in plan)
    assert f"Bitmap Index Scan on {dataset_index_name(dataset_id)}" in text, text


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_a_search_under_a_score_range_is_counted_by_a_semi_join(store: Store) -> None:
    """The count of a search under a score range keeps the scores' EXISTS a semi join (the
    results in range hashed, the items' matches streamed, so LIMIT stops the count at its
    last match): with `scorer_id IN (...)` PostgreSQL proves one result per item, joins, and
    hashes every text match first (0.88 s at 1 M items, 0.49 s as a semi join)."""
    experiment_id = _experiment(store, 2_000)
    query = ResultQuery(score_range=(0.1, 0.9), search="paris")
    sent = _searches(store, experiment_id, query)
    counted = [(s, p) for s, p in sent if s.lstrip().upper().startswith("SELECT COUNT(*)")]
    assert counted, sent
    statement, parameters = counted[0]
    with store.engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE")
        # 2,000 items would be walked by a nested loop: hashing is what a million items get.
        connection.exec_driver_sql("SET enable_nestloop = off")
        connection.exec_driver_sql("SET enable_mergejoin = off")
        plan = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
    text = "\n".join(row[0] for row in plan)
    assert "Semi Join" in text, text


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_the_indexed_search_finds_what_the_scan_finds(store: Store) -> None:
    experiment_id = _experiment(store, 500)
    query = ResultQuery(score_range=(0.2, 0.7), search="PARIS RIVER", page_size=1_000)
    found = store.result_page(experiment_id, query)
    with store.engine.connect() as connection:
        connection.exec_driver_sql("SET enable_indexscan = off")
        connection.exec_driver_sql("SET enable_bitmapscan = off")
    expected = [
        row
        for row in store.result_page(
            experiment_id, ResultQuery(score_range=(0.2, 0.7), page_size=1_000)
        ).rows
        if "paris river" in str(row.input).lower()
    ]
    assert [row.item_id for row in found.rows] == [row.item_id for row in expected]
    assert found.total == len(expected) > 0


@pytest.mark.parametrize("store", [p for p in BACKENDS if p.id == "sqlite"], indirect=True)
def test_sqlite_has_no_trigram_index(store: Store) -> None:
    with store.engine.connect() as connection:
        names = {row[0] for row in connection.exec_driver_sql("PRAGMA index_list(dataset_items)")}
    assert TRIGRAM_INDEX not in names


def _reads_only_items_in_range(store: Store, experiment_id: str, query: ResultQuery) -> bool:
    """Whether the page's search statements start from the results in range (`scored`, the
    plan for a narrow range) rather than test each item's text in dataset order."""
    statements = [statement for statement, _ in _searches(store, experiment_id, query)]
    return all("AS scored" in statement for statement in statements)


@pytest.mark.parametrize(
    ("score_range", "narrow"),
    [((0.10, 0.115), True), ((0.10, 0.20), False), ((0.10, 0.90), False), ((0.0, 1.0), False)],
)
def test_a_large_datasets_share_in_range_is_guessed_from_a_sample(
    store: Store, score_range: tuple[float, float], narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over 2,000 items: the share in range is guessed from 20 runs of 100 items, not counted;
    # under 1/32 (1.5% here) the items in range are read, else every item in order.
    experiment_id = _experiment(store, 4_000)
    # The scan, as PostgreSQL and SQLite while its trigram index is built do.
    monkeypatch.setattr(reads, "search_base", lambda *_: None)
    query = ResultQuery(score_range=score_range, search="PARIS river", page_size=1_000)
    assert _reads_only_items_in_range(store, experiment_id, query) is narrow
    found = store.result_page(experiment_id, query)
    low, high = score_range
    expected = [f"q{n}" for n in range(4_000) if n % 50 == 7 and low <= n / 4_000 <= high]
    assert [row.item_id for row in found.rows] == expected
    assert found.total == len(expected) and not found.total_at_least


def _plan_and_page(store: Store, experiment_id: str, query: ResultQuery) -> tuple[bool, Any]:
    """Whether the page's search statements start from the results in range (`scored`), and
    the page; unlike `_searches`, an empty answer is allowed (a range keeping nothing)."""
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if "LIKE" in statement.upper():
            sent.append(statement)

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", record)
    try:
        page = store.result_page(experiment_id, query)
    finally:
        sqlalchemy.event.remove(store.engine, "before_cursor_execute", record)
    assert sent, "no statement searched the texts"
    return all("AS scored" in statement for statement in sent), page


@pytest.mark.parametrize("store", [p for p in BACKENDS if p.id == "sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("score_range", "needle", "from_range"),
    [
        # A range keeping no item: the index's 4,000 matches of "about" would all be tested.
        ((0.10001, 0.10002), "about", True),
        ((0.10001, 0.10002), "PARIS river", True),
        # 61 items in range (about 3% of the sample), "about" in every item: the range is read.
        ((0.10, 0.115), "about", True),
        # The same range, a needle in 80 items: fewer matches than items in range to test.
        ((0.10, 0.115), "PARIS river", False),
        # A wide range: the walk meets the count's limit after a few matches.
        ((0.10, 0.90), "about", False),
        ((0.0, 1.0), "PARIS river", False),
    ],
)
def test_sqlites_indexed_search_under_a_range_reads_whichever_side_is_fewer(
    store: Store, score_range: tuple[float, float], needle: str, from_range: bool
) -> None:
    experiment_id = _experiment(store, 4_000)
    dataset_id = store.get_experiment(experiment_id).dataset_id
    assert index_dataset_texts(store.engine, dataset_id)
    with store.engine.connect() as connection:
        assert search_base(connection, dataset_id) is not None, "the index is not whole"
    query = ResultQuery(score_range=score_range, search=needle, page_size=1_000)
    reads_range, found = _plan_and_page(store, experiment_id, query)
    assert reads_range is from_range
    low, high = score_range
    held = (lambda n: True) if needle == "about" else (lambda n: n % 50 == 7)
    expected = [f"q{n}" for n in range(4_000) if held(n) and low <= n / 4_000 <= high]
    assert [row.item_id for row in found.rows] == expected[:1_000]
    assert found.total == min(len(expected), 1_000)
    assert found.total_at_least is (len(expected) > 1_000)
