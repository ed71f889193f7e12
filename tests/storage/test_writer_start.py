"""A result writer with a process of its own (core/experiments/result_writer.py,
`ResultWriter`) holds the rows while that process starts, so the scoring interpreter never
writes them itself, unless more pile up than it may hold: then it writes them, and every row
is stored once."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from scorelab_db import BACKENDS, database
from test_store import experiment, make_items, save, success

from core.experiments import result_writer
from core.experiments.result_writer import ResultWriter
from core.records import RunCounts
from core.run_results import ResultRow
from core.storage import Store
from core.storage._rows import _score_row
from core.storage.writer_process import WriterProcess

ROWS = 1_200


class SlowToStart(Store):
    """A store whose writer's process is ready only after a while (a loaded machine's
    imports), counting the rows this process writes itself."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.written_here = 0

    def detached(self) -> WriterProcess | None:
        time.sleep(1.0)
        return super().detached()

    def add_rows(self, experiment_id: str, rows: Sequence[ResultRow]) -> int:
        self.written_here += len(rows)
        return super().add_rows(experiment_id, rows)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SlowToStart]:
    with database(request.param, tmp_path) as url:
        store = SlowToStart(url)
        try:
            yield store
        finally:
            store.close()


def _write_all(store: SlowToStart) -> tuple[str, ResultWriter]:
    dataset = save(store, make_items(ROWS))
    info = experiment(store, dataset.id, scorer_ids=("a",))
    counts = RunCounts(total=ROWS, succeeded=ROWS)
    writer = ResultWriter(
        store, info.id, lambda: (counts, RunCounts()), lambda: None, own_process=True
    )
    for n in range(ROWS):
        writer.put(_score_row(success(f"i{n}", "a", n / ROWS)))
        if n % 100 == 0:
            time.sleep(0.01)  # the runs go on while the process starts
    writer.close()
    return info.id, writer


def test_rows_wait_for_the_starting_process_and_are_all_written_by_it(
    store: SlowToStart,
) -> None:
    experiment_id, writer = _write_all(store)
    assert writer.error is None
    assert store.written_here == 0  # the process wrote every row, none this interpreter
    assert store.result_count(experiment_id) == ROWS == writer.written
    assert store.get_experiment(experiment_id).counts.succeeded == ROWS


def test_past_what_it_may_hold_the_thread_writes_and_each_row_is_stored_once(
    store: SlowToStart, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(result_writer, "_HELD_WHILE_STARTING", 300)
    experiment_id, writer = _write_all(store)
    assert writer.error is None
    assert 0 < store.written_here < ROWS  # this thread wrote some, the process the rest
    assert store.result_count(experiment_id) == ROWS == writer.written
