"""SQLite's text search served by revision 0015's FTS5 trigram index: every search finds what
the LIKE scan of the items' texts finds (the same items, in the same order, with the same
count), for needles made to trip an index (LIKE's wildcards, quotes, FTS5's syntax, unicode,
needles under 3 characters, a needle in a result's reason only), on SQLite and PostgreSQL;
a dataset is indexed by its first search (an import indexes nothing), a chunk at a time, and
the index then follows its items when datasets and experiments are deleted, also half built."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from alembic import command
from scorelab_db import BACKENDS, database
from sqlalchemy import select

from core.records import ColumnMapping, DatasetItem, ResultQuery, ScorerOutcome, ScorerSpec
from core.storage import Store
from core.storage.schema import alembic_config
from core.storage.search_index import index_dataset_texts
from core.storage.tables import SEARCH_DATASETS, SEARCH_TABLE, DatasetItemRow
from core.storage.text_search import like_condition, search_base, trigram_query

SQLITE = [p for p in BACKENDS if p.id == "sqlite"]

# (id, input, output, ground truth): texts where an index and LIKE could part ways.
TEXTS: list[tuple[str, Any, Any, Any]] = [
    ("plain-1", "Tell me about paris river", "An answer on paris", None),
    ("plain-2", "PARIS River in capitals", "answer", "Paris"),
    ("pct", "100% sure, 50%% off", "a_b and a-b", None),
    ("quotes", 'it\'s "quoted" here', 'say "hi" AND "bye"', "O'Brien"),
    ("fts-syntax", "NEAR(a b) OR x* ^col:term", "- + ( ) : *", None),
    ("slash", "back\\slash and c:\\dir", "tab\there", None),
    ("unicode", "Café crème, ÉCOLE, straße", "日本語のテキスト", "naïve 🙂 emoji"),
    ("numbers", "a number", 12345, 0.5),
    ("nested", {"question": "paris?", "n": 7}, ["river", "sea"], {"k": "Velvet"}),
    ("reason-only", "nothing here", "nothing either", None),
    ("q1", "short id", "x", None),
    ("Q10", "upper id", "y", None),
]
REASONS = {"reason-only": "the reason says velvet underground"}
NEEDLES = [
    "paris river",
    "PARIS",
    "paris",
    "ari",
    "%",
    "50%",
    "%%",
    "a_b",
    "_",
    "it's",
    '"quoted"',
    '"hi" AND "bye"',
    "O'Brien",
    "NEAR(a b)",
    "x*",
    "^col:term",
    "- + (",
    "\\slash",
    "c:\\dir",
    "\\",
    "café",
    "CAFÉ",
    "École",
    "ÉCOLE",
    "straße",
    "日本語",
    "本",
    "🙂 emoji",
    "345",
    "0.5",
    '"n": 7',
    '"river"',
    "velvet",
    "underground",
    "q1",
    "Q1",
    "q",
    "pa",
    "é",
    "zzz-not-there",
]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        opened = Store(url)
        yield opened
        opened.close()


def _dataset(store: Store, texts: list[tuple[str, Any, Any, Any]], name: str = "d") -> str:
    dataset = store.save_dataset(
        name=name,
        file_name=f"{name}.jsonl",
        format="jsonl",
        fingerprint=name[0] * 64,
        columns=["id", "input", "output", "ground_truth"],
        mapping=ColumnMapping(id="id", input="input", output="output", ground_truth="ground_truth"),
        items=[
            [
                DatasetItem(id=i, input=question, output=answer, ground_truth=truth)
                for i, question, answer, truth in texts
            ]
        ],
    )
    return dataset.id


def _experiment(store: Store, dataset_id: str, item_ids: list[str]) -> str:
    info = store.create_experiment(
        name="e",
        dataset_id=dataset_id,
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
            ScorerOutcome(
                item_id=item_id,
                scorer_id="s",
                status="success",
                score=((7 * n) % 10) / 10,
                reason=REASONS.get(item_id),
            )
            for n, item_id in enumerate(item_ids)
        ],
    )
    store.finish_experiment(info.id, "completed")
    return info.id


def _scanned(store: Store, dataset_id: str, needle: str) -> set[str]:
    """The items today's LIKE scan finds (the same conditions, without the index)."""
    items = DatasetItemRow.__table__
    with store.engine.connect() as connection:
        query = select(items.c.item_id).where(
            items.c.dataset_id == dataset_id, like_condition(needle, connection.dialect.name)
        )
        return {row.item_id for row in connection.execute(query)}


def _statements(store: Store) -> tuple[list[str], Any]:
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", record)
    return sent, record


QUERIES = {
    "dataset order": {},
    "score range": {"score_range": (0.2, 0.7)},
    "sorted": {"sort": "score_desc", "sort_scorer": "s"},
    "sorted in range": {"sort": "score_asc", "sort_scorer": "s", "score_range": (0.0, 0.5)},
}


def test_every_search_finds_what_the_like_scan_finds(store: Store) -> None:
    dataset_id = _dataset(store, TEXTS)
    ids = [text[0] for text in TEXTS]
    experiment_id = _experiment(store, dataset_id, ids)
    scores = {
        row.item_id: row.scores["s"]
        for row in store.result_page(experiment_id, ResultQuery(page_size=100)).rows
    }
    sqlite = store.engine.dialect.name == "sqlite"
    found_any = 0
    for needle in NEEDLES:
        expected = _scanned(store, dataset_id, needle)
        found_any += bool(expected)
        for name, fields in QUERIES.items():
            query = ResultQuery(search=needle, page_size=5, **fields)
            low, high = fields.get("score_range", (0.0, 1.0))
            kept = [i for i in ids if i in expected and low <= scores[i] <= high]
            if "sort" in fields:  # ties in the order written (= dataset order here)
                sign = -1 if fields["sort"] == "score_desc" else 1
                kept.sort(key=lambda i: (sign * scores[i], sign * ids.index(i)))
            sent, record = _statements(store)
            try:
                pages = [store.result_page(experiment_id, query)]
                while pages[-1].page < pages[-1].pages:
                    page = pages[-1].page + 1
                    pages.append(
                        store.result_page(experiment_id, query.model_copy(update={"page": page}))
                    )
            finally:
                sqlalchemy.event.remove(store.engine, "before_cursor_execute", record)
            got = [row.item_id for page in pages for row in page.rows]
            assert got == kept, (needle, name)
            assert pages[0].total == len(kept) and not pages[0].total_at_least, (needle, name)
            used = any(SEARCH_TABLE in statement and "MATCH" in statement for statement in sent)
            # The index serves SQLite's needles of 3 characters or more, and only those.
            assert used == (sqlite and len(needle) >= 3), (needle, name)
    assert found_any >= 25  # most needles find something: the comparison is not of empties
    assert "reason-only" not in _scanned(store, dataset_id, "velvet")  # reasons are not searched
    assert {"plain-1", "plain-2", "nested"} <= _scanned(store, dataset_id, "paris")


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_sqlite_like_keeps_its_ascii_only_case_folding_through_the_index(store: Store) -> None:
    # FTS5 folds the case of "É" too; the LIKE that checks its candidates does not: the
    # answer stays LIKE's.
    dataset_id = _dataset(store, TEXTS)
    assert _scanned(store, dataset_id, "ÉCOLE") == {"unicode"}
    assert _scanned(store, dataset_id, "école") == set()
    assert _scanned(store, dataset_id, "paris RIVER") == {"plain-1", "plain-2"}


def test_trigram_queries_quote_every_trigram() -> None:
    assert trigram_query("ab") is None
    assert trigram_query("é🙂") is None
    assert trigram_query("abc") == '"abc"'
    assert trigram_query('a"bc') == '"a""b" AND """bc"'
    assert trigram_query("aaaa") == '"aaa"'  # distinct trigrams only
    long = trigram_query("x" * 10 + "".join(chr(0x4E00 + k) for k in range(100)))
    assert long is not None and long.count(" AND ") == 31  # at most 32 looked up


def _indexed_count(store: Store, trigram: str) -> int:
    with store.engine.connect() as connection:
        return int(
            connection.exec_driver_sql(
                f"SELECT count(*) FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH ?",
                (f'"{trigram}"',),
            ).scalar_one()
        )


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_deleting_experiments_and_datasets_keeps_the_index_exact(store: Store) -> None:
    first = _dataset(store, [(f"a{n}", f"alpha shared {n}", "x", None) for n in range(30)], "one")
    second = _dataset(store, [(f"b{n}", f"beta shared {n}", "y", None) for n in range(20)], "two")
    experiment_id = _experiment(store, first, [f"a{n}" for n in range(30)])
    other = _experiment(store, second, [f"b{n}" for n in range(20)])
    assert _indexed_count(store, "sha") == 0  # nothing searched yet: nothing indexed
    store.result_page(experiment_id, ResultQuery(search="alpha"))
    assert _indexed_count(store, "sha") == 30
    store.result_page(other, ResultQuery(search="beta"))
    assert _indexed_count(store, "sha") == 50
    store.delete_experiment(experiment_id)  # results go, items stay: so do their entries
    assert _indexed_count(store, "sha") == 50
    assert _indexed_count(store, "alp") == 30
    store.delete_dataset(first)
    assert _indexed_count(store, "sha") == 20
    assert _indexed_count(store, "alp") == 0
    page = store.result_page(other, ResultQuery(search="shared 1", page_size=100))
    assert [row.item_id for row in page.rows] == ["b1"] + [f"b{n}" for n in range(10, 20)]
    # A dataset saved again after a deletion is indexed afresh, under a number of its own.
    again = _dataset(store, [(f"c{n}", f"gamma shared {n}", "z", None) for n in range(5)], "three")
    assert index_dataset_texts(store.engine, again)
    assert _indexed_count(store, "sha") == 25
    with store.engine.connect() as connection:
        assert search_base(connection, again) != search_base(connection, second)


def test_a_database_upgraded_to_0015_has_its_stored_items_indexed_by_a_search(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0014")
    engine.dispose()
    # Items stored by the version before 0015: written straight into the tables it made.
    with closing(sqlite3.connect(tmp_path / "old.db")) as raw, raw:
        raw.execute(
            "INSERT INTO datasets (id, name, file_name, format, fingerprint, item_count, "
            "columns, mapping, created_at) VALUES ('old', 'old', 'old.csv', 'csv', ?, 3, ?, ?, "
            "'2026-01-01')",
            ("f" * 64, '["id", "q", "a"]', '{"id": "id", "input": "q", "output": "a"}'),
        )
        raw.executemany(
            "INSERT INTO dataset_items (dataset_id, position, item_id, input, output) "
            "VALUES ('old', ?, ?, ?, ?)",
            [(n, f"o{n}", f'"old text {n} Paris"', '"answer"') for n in range(3)],
        )
    store = Store(url)  # upgrades to head: quickly, indexing nothing yet
    try:
        assert _indexed_count(store, "par") == 0
        with store.engine.connect() as connection:
            assert search_base(connection, "old") is None
        info = _experiment(store, "old", ["o0", "o1", "o2"])
        page = store.result_page(info, ResultQuery(search="text 1 paris"))  # indexes it first
        assert [row.item_id for row in page.rows] == ["o1"]
        assert _indexed_count(store, "par") == 3  # case folded: "Paris"
        with store.engine.connect() as connection:
            assert search_base(connection, "old") is not None
    finally:
        store.close()
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0014")
        names = {row[0] for row in connection.exec_driver_sql("SELECT name FROM sqlite_master")}
    engine.dispose()
    assert not {name for name in names if name.startswith(SEARCH_TABLE)}
    assert SEARCH_DATASETS not in names


def _progress(store: Store, dataset_id: str) -> tuple[int, int] | None:
    with store.engine.connect() as connection:
        row = connection.exec_driver_sql(
            f"SELECT indexed_below, complete FROM {SEARCH_DATASETS} WHERE dataset_id = ?",
            (dataset_id,),
        ).first()
    return None if row is None else (int(row[0]), int(row[1]))


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_dataset_is_indexed_by_its_first_search_a_chunk_at_a_time(store: Store) -> None:
    texts = [
        (f"i{n}", f"item number {n} {'odd' if n % 2 else 'even'}", "o", None) for n in range(25)
    ]
    dataset_id = _dataset(store, texts)
    experiment_id = _experiment(store, dataset_id, [t[0] for t in texts])
    assert _progress(store, dataset_id) is None  # the import indexed nothing
    # A needle without a trigram scans and indexes nothing either.
    assert store.result_page(experiment_id, ResultQuery(search="od", page_size=100)).total == 12
    assert _progress(store, dataset_id) is None
    chunks: list[tuple[int, int] | None] = []
    from core.storage import search_index

    original = search_index._index_next_chunk

    def counted(connection: Any, dataset: str, chunk: int) -> bool | None:
        done = original(connection, dataset, chunk)
        chunks.append(None)
        return done

    search_index._index_next_chunk = counted
    try:
        assert index_dataset_texts(store.engine, dataset_id, chunk=10)
    finally:
        search_index._index_next_chunk = original
    assert len(chunks) == 3 and _progress(store, dataset_id) == (30, 1)
    assert _indexed_count(store, "odd") == 12 and _indexed_count(store, "eve") == 13
    assert index_dataset_texts(store.engine, dataset_id)  # done: nothing more to do
    assert _indexed_count(store, "odd") == 12
    page = store.result_page(experiment_id, ResultQuery(search="odd", page_size=100))
    assert [row.item_id for row in page.rows] == [f"i{n}" for n in range(1, 25, 2)]
    assert not index_dataset_texts(store.engine, "no-such-dataset")


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_half_built_index_stays_exact_through_changes_and_deletion(store: Store) -> None:
    texts = [(f"h{n}", f"half text {n}", "o", None) for n in range(12)]
    dataset_id = _dataset(store, texts)
    experiment_id = _experiment(store, dataset_id, [t[0] for t in texts])
    from core.storage import search_index

    with store.engine.begin() as connection:  # one chunk of 5 only: a search stopped half way
        assert search_index._index_next_chunk(connection, dataset_id, 5) is False
    assert _progress(store, dataset_id) == (5, 0) and _indexed_count(store, "hal") == 5
    with store.engine.connect() as connection:  # not whole: the search does not use it yet
        assert search_base(connection, dataset_id) is None
    with store.engine.begin() as connection:  # items changed under and over the mark
        for position in (1, 8):
            connection.exec_driver_sql(
                "UPDATE dataset_items SET input = ? WHERE dataset_id = ? AND position = ?",
                (f'"moved text {position}"', dataset_id, position),
            )
    assert _indexed_count(store, "hal") == 4 and _indexed_count(store, "mov") == 1
    page = store.result_page(experiment_id, ResultQuery(search="moved", page_size=100))
    assert [row.item_id for row in page.rows] == ["h1", "h8"]  # the rest indexed, then read
    assert _indexed_count(store, "mov") == 2 and _indexed_count(store, "hal") == 10
    store.delete_experiment(experiment_id)
    store.delete_dataset(dataset_id)
    assert _indexed_count(store, "hal") == 0 and _indexed_count(store, "mov") == 0
    assert _progress(store, dataset_id) is None  # its row went with it
