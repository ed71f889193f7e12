"""Datasets stored from chunks and read back a page at a time, on SQLite and (when available)
PostgreSQL: a large dataset is never held whole on either side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from scorelab_db import BACKENDS, database
from sqlalchemy import update

from core.records import ColumnMapping, DatasetItem, ScorerOutcome
from core.storage import NotFoundError, StorageError, Store
from core.storage.tables import DatasetItemRow

MAPPING = ColumnMapping(input="input", output="output", metadata=["tag"])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


def make_items(start: int, count: int) -> list[DatasetItem]:
    return [
        DatasetItem(id=f"i{n}", input=f"q{n}", output={"text": f"a{n}"}, metadata={"tag": n})
        for n in range(start, start + count)
    ]


def save(store: Store, items: object) -> str:
    return store.save_dataset(
        name="set",
        file_name="set.jsonl",
        format="jsonl",
        fingerprint="f" * 64,
        columns=["input", "output", "tag"],
        mapping=MAPPING,
        items=items,  # type: ignore[arg-type]
    ).id


def chunks(sizes: list[int]) -> Iterator[list[DatasetItem]]:
    """Chunks built only as they are asked for, like `MappedUpload.item_chunks`."""
    start = 0
    for size in sizes:
        yield make_items(start, size)
        start += size


def test_chunks_are_stored_in_order_and_counted(store: Store) -> None:
    dataset_id = save(store, chunks([3, 7000, 1]))  # over one insert batch
    info = store.get_dataset(dataset_id)
    assert info.item_count == 7004
    items = store.dataset_items(dataset_id)
    assert [i.id for i in items] == [f"i{n}" for n in range(7004)]
    assert items[5000].output == {"text": "a5000"} and items[5000].metadata == {"tag": 5000}


def test_items_one_by_one_from_a_generator_are_stored_too(store: Store) -> None:
    dataset_id = save(store, (item for item in make_items(0, 4)))
    assert store.get_dataset(dataset_id).item_count == 4


def test_a_failing_chunk_leaves_nothing_stored(store: Store) -> None:
    def failing() -> Iterator[list[DatasetItem]]:
        yield make_items(0, 3)
        yield make_items(2, 2)  # i2 again: the (dataset, item id) pair is unique

    with pytest.raises(StorageError, match="Could not save the dataset"):
        save(store, failing())
    assert store.list_datasets() == []


def test_items_are_read_a_page_at_a_time(store: Store) -> None:
    dataset_id = save(store, chunks([25]))
    pages = _page_reads(store)
    read = list(store.iter_dataset_items(dataset_id, page_size=10))
    assert [i.id for i in read] == [f"i{n}" for n in range(25)]
    assert len(pages) == 1 + 3  # the dataset's row, then three pages
    assert [i.id for i in store.dataset_items(dataset_id, limit=3)] == ["i0", "i1", "i2"]


def test_a_page_reader_is_lazy_but_an_unknown_dataset_is_refused_at_once(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.iter_dataset_items("nope")
    dataset_id = save(store, chunks([4]))
    reader = store.iter_dataset_items(dataset_id, page_size=2)
    assert next(reader).id == "i0"
    assert [i.id for i in reader] == ["i1", "i2", "i3"]


def test_results_of_some_items_only(store: Store) -> None:
    dataset_id = save(store, chunks([4]))
    experiment = store.create_experiment(
        name="e",
        dataset_id=dataset_id,
        scorers=[],
        scorer_ids=["s"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(
        experiment.id,
        [
            ScorerOutcome(item_id=f"i{n}", scorer_id="s", status="success", score=n / 4)
            for n in range(4)
        ],
    )
    found = store.experiment_results(experiment.id, item_ids=["i1", "i3"])
    assert sorted(o.item_id for o in found) == ["i1", "i3"]


def test_paged_items_are_the_records_a_validation_makes(store: Store) -> None:
    """The paged reader builds its items without a validation per item: each is the record
    `DatasetItem(...)` makes of the same values (fields, fields set, dump, frozen)."""
    given = [
        DatasetItem(id="a", input="q", output=None, ground_truth="t", metadata={"tag": 1}),
        DatasetItem(id="b", input={"x": [1, 2]}, output=42, ground_truth=None, metadata={}),
        DatasetItem(id="c", input="é", output="\u2028", ground_truth={"k": None}),
    ]
    dataset_id = save(store, given)
    read = list(store.iter_dataset_items(dataset_id, page_size=2))
    assert read == store.dataset_items(dataset_id) == given
    for mine, validated in zip(read, given, strict=True):
        assert mine.model_fields_set == DatasetItem(**dict(validated)).model_fields_set
        assert mine.model_dump(by_alias=True) == validated.model_dump(by_alias=True)
        with pytest.raises(ValidationError, match="frozen"):
            mine.id = "changed"  # type: ignore[misc]


def test_a_stored_item_with_metadata_that_is_no_mapping_is_refused_by_name(store: Store) -> None:
    """Bad stored data (metadata written as a JSON list by something else) is refused when
    read, naming the field, never handed to a scorer."""
    dataset_id = save(store, make_items(0, 2))
    table = DatasetItemRow.__table__
    with store.engine.begin() as connection:
        connection.execute(
            update(table).where(table.c.item_id == "i1").values(item_metadata=[1, 2])
        )
    reader = store.iter_dataset_items(dataset_id)
    assert next(reader).id == "i0"
    with pytest.raises(ValidationError, match="metadata"):
        next(reader)


def test_paged_items_decode_every_json_value_as_the_driver_did(store: Store) -> None:
    """The paged reader decodes the JSON columns' text itself (orjson, the standard library
    for what orjson refuses) on both backends: the values are the ones saved, an integer over
    64 bits, a float's last digit, a string "null" and a JSON null included."""
    given = [
        DatasetItem(id="a", input=2**70, output=0.1 + 0.2, ground_truth="null", metadata={}),
        DatasetItem(id="b", input=[1, {"k": [None, True]}], output="😀 \u2028", ground_truth=-7),
        DatasetItem(id="c", input={"nested": {"x": 1e300}}, output=None, metadata={"tag": "t"}),
    ]
    dataset_id = save(store, given)
    assert list(store.iter_dataset_items(dataset_id, page_size=2)) == given


def test_postgresql_pages_cast_the_json_columns_to_text() -> None:
    """On PostgreSQL the page reader asks for the JSON columns' text (decoded by orjson), not
    for psycopg to decode each with `json.loads` (four times the cost per item)."""
    from sqlalchemy.dialects import postgresql, sqlite

    from core.storage._rows import _items_query

    cast = str(
        _items_query("d", 0, 10, as_text=True, cast=True).compile(dialect=postgresql.dialect())
    )
    assert cast.count("CAST(") == 4
    as_is = str(_items_query("d", 0, 10, as_text=True).compile(dialect=sqlite.dialect()))
    assert "CAST(" not in as_is  # SQLite's numbers would become text


def _page_reads(store: Store) -> list[int]:
    """Counts the connections the store opens from now on (one per page read)."""
    opened: list[int] = []
    original = store.engine.connect

    def counting_connect():  # type: ignore[no-untyped-def]
        opened.append(1)
        return original()

    store.engine.connect = counting_connect  # type: ignore[method-assign]
    return opened


def test_a_reader_closed_early_reads_no_further(store: Store) -> None:
    dataset_id = save(store, chunks([9]))
    opened = _page_reads(store)
    reader = store.iter_dataset_items(dataset_id, page_size=3)
    assert next(reader).id == "i0"
    reader.close()
    assert len(opened) == 1 + 1  # the dataset's row and its first page only
    assert [i.id for i in store.iter_dataset_items(dataset_id, page_size=3)] == [
        f"i{n}" for n in range(9)
    ]


def test_a_failing_later_page_is_the_readers_error(store: Store) -> None:
    dataset_id = save(store, chunks([7]))
    original = store.engine.connect
    calls: list[int] = []

    def failing_third():  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:  # the dataset's row, page 1, then page 2 fails
            raise StorageError("page 2 could not be read")
        return original()

    store.engine.connect = failing_third  # type: ignore[method-assign]
    reader = store.iter_dataset_items(dataset_id, page_size=3)
    taken = [next(reader).id for _ in range(3)]
    assert taken == ["i0", "i1", "i2"]
    with pytest.raises(StorageError, match="page 2 could not be read"):
        next(reader)
