"""`scorelab export --json/--csv` read through the database driver (core/storage/export_reads.py,
core/service/export_source.py): the same files, byte for byte, as through the `Service` of a
fresh process, on SQLite and PostgreSQL, for an experiment with a judge scorer (per-step
judge usage, one run stored before the per-step column: "all steps"), a code scorer, failed
runs (absent from another process's files), reviews on several pages, and a secret in the
experiment's error; and what falls back to the `Service` (thresholds kept, an unknown id).
The dashboard's JSON download (pages/ui/downloads.py) is the same text as the command's."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.cli import main
from core.cli.outputs import ExportSource, csv_export, json_export
from core.records import ExperimentConfig, ScorerSpec
from core.service import Service
from core.service.export_source import QuickExportSource, quick_export_source
from core.testing import FakeJudge
from core.testing.fake_judge import Answer, Fault, answer_from_schema

SECRET = "sk-test-export-reads-0123456789"
JUDGED = "toxicity-scorer"
CODED = "keyword-coverage-scorer"
FAILING = "please fail this one"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


def _responder(request: dict[str, Any]) -> Answer:
    if FAILING in json.dumps(request):
        return Fault(400, "the fake judge refuses this item")
    return answer_from_schema(request)


def _items(count: int) -> bytes:
    rows = ["id,input,output,topic"]
    for n in range(count):
        output = FAILING if n == 3 else f"hello number {n} politely"
        rows.append(f"i{n},Say hello {n},{output},t{n % 3}")
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture
def experiment(
    database_url: str,
    tmp_path: Path,
    judge_server: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """A finished experiment of 7 items × (a judge scorer, a code scorer), one judge run
    failed, reviews on items of the first and the last page, one stored run without its
    per-step usage (as stored before revision 0011), and a secret in its error."""
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    judge_server.responder = _responder
    service = Service(database_url, samples_dir=tmp_path / "samples")
    dataset = service.import_dataset("items.csv", _items(7))
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=JUDGED), ScorerSpec(scorer_id=CODED)],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            judge_settings={"num_retries": 0},
        )
    )
    assert service.wait(experiment_id, timeout=60).finished
    info = service.get_experiment(experiment_id)
    assert info.counts.failed == 1 and info.counts.judge_calls > 0
    service.save_review(experiment_id, "i0", JUDGED, "right", note="fine", reviewer="ann")
    service.save_review(experiment_id, "i6", CODED, "wrong", score=0.25, reviewer="bob")
    service.save_review(experiment_id, "i6", "*", "wrong", note="whole item")
    service.store.close()
    engine = sqlalchemy.create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(
            sqlalchemy.text(
                "UPDATE scorer_results SET step_usage = NULL WHERE experiment_id = :e "
                "AND item_id = 'i1' AND scorer_id = :s"
            ),
            {"e": experiment_id, "s": JUDGED},
        )
        connection.execute(
            sqlalchemy.text("UPDATE experiments SET error = :error WHERE id = :e"),
            {"e": experiment_id, "error": f"judge said no (key {SECRET})"},
        )
        connection.execute(  # the totals kept at its end no longer match: summed again
            sqlalchemy.text("DELETE FROM experiment_totals WHERE experiment_id = :e"),
            {"e": experiment_id},
        )
    engine.dispose()
    return experiment_id


class _Paged:
    """A source whose pages hold `size` items (the exports' pages, made small)."""

    def __init__(self, source: Any, size: int) -> None:
        self._source = source
        self._size = size

    def experiment_pages(self, experiment_id: str) -> Any:
        return self._source.experiment_pages(experiment_id, page_size=self._size)

    def judge_usage(self, experiment_id: str, *, priced: bool = True) -> Any:
        return self._source.judge_usage(experiment_id, priced=priced)


def _files(source: ExportSource, experiment_id: str) -> tuple[str, str]:
    texts = []
    for export in (json_export, csv_export):
        out = io.StringIO()
        export(source, experiment_id, total_items=7).write(out, lambda _n: None)
        texts.append(out.getvalue())
    return texts[0], texts[1]


def _quick(database_url: str, experiment_id: str) -> QuickExportSource:
    quick = quick_export_source(database_url, experiment_id)
    assert quick is not None, "the driver's read refused a database at the shipped revision"
    return quick


def test_the_quick_read_gives_the_services_files_byte_for_byte(
    database_url: str, experiment: str
) -> None:
    fresh = Service(database_url)  # another process: no failure in memory
    try:
        quick = _quick(database_url, experiment)
        try:
            info = quick.get_experiment(experiment)
            assert info == fresh.get_experiment(experiment)
            assert info.error is not None and "judge said no" in info.error
            assert SECRET not in info.error  # masked, as the Service masks it
            assert quick.judge_usage(experiment, priced=False) == fresh.judge_usage(
                experiment, priced=False
            )
            for size in (2, 2_000):
                expected = _files(_Paged(fresh, size), experiment)
                assert _files(_Paged(quick, size), experiment) == expected
        finally:
            quick.close()
    finally:
        fresh.store.close()
    document = json.loads(expected[0])
    summary = document["summary"]
    assert summary["failedRuns"] == 1 and summary["failuresInMemory"] is False
    assert "i3" not in {
        item["id"] for item in document["items"] if JUDGED in item["results"]
    }  # the failed run is not in another process's file
    steps = {(entry["scorerId"], entry["step"]) for entry in summary["judgeUsageBySteps"]}
    assert (JUDGED, None) in steps and (JUDGED, "analyze") in steps  # split and unsplit
    assert [review["itemId"] for review in document["reviews"]] == ["i0", "i6", "i6"]
    assert SECRET not in expected[0] + expected[1]


def test_the_kept_totals_of_a_finished_experiment_give_the_same_files(
    database_url: str, tmp_path: Path, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as the `Store` reads a finished experiment: its totals and per-step usage from
    `experiment_totals`, kept when it finished."""
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    judge_server.responder = answer_from_schema
    service = Service(database_url, samples_dir=tmp_path / "samples")
    dataset = service.import_dataset("items.csv", _items(3))
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=JUDGED)],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            judge_settings={"num_retries": 0},
        )
    )
    assert service.wait(experiment_id, timeout=60).finished
    service.store.close()
    fresh = Service(database_url)
    quick = _quick(database_url, experiment_id)
    try:
        assert quick._reader._kept() is not None  # the kept row is the one read
        assert quick.get_experiment(experiment_id) == fresh.get_experiment(experiment_id)
        assert _files(quick, experiment_id) == _files(fresh, experiment_id)
    finally:
        quick.close()
        fresh.store.close()


def test_thresholds_kept_and_unknown_ids_are_left_to_the_service(
    database_url: str, experiment: str
) -> None:
    assert quick_export_source(database_url, "no-such-experiment") is None
    service = Service(database_url)
    try:
        service.set_thresholds(experiment, {CODED: 0.5})
    finally:
        service.store.close()
    assert quick_export_source(database_url, experiment) is None


def test_a_database_the_driver_cannot_answer_gives_none(tmp_path: Path) -> None:
    assert quick_export_source(f"sqlite:///{tmp_path / 'absent.db'}", "x") is None
    assert not (tmp_path / "absent.db").exists()  # nothing created
    assert quick_export_source("sqlite:///:memory:", "x") is None
    assert quick_export_source("mysql://somewhere/db", "x") is None


def _cli_json(database_url: str, experiment_id: str, target: Path) -> str:
    code = main(["--database-url", database_url, "export", experiment_id, "--json", str(target),
                 "--no-progress"])  # fmt: skip
    assert code == 0
    return target.read_text(encoding="utf-8")


@pytest.mark.parametrize("thresholds", [False, True], ids=["plain", "thresholds"])
def test_the_dashboards_json_download_is_the_exports_text(
    database_url: str,
    experiment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    thresholds: bool,
) -> None:
    from pages.ui import downloads

    fresh = Service(database_url)  # the dashboard of another process than the run's
    monkeypatch.setattr(downloads, "service", lambda: fresh)
    try:
        if thresholds:  # kept with it: the export goes through the Service, with their results
            fresh.set_thresholds(experiment, {CODED: 0.5, JUDGED: {"max": 0.2}})
        exported = _cli_json(database_url, experiment, tmp_path / "export.json")
        downloaded = downloads.json_download(fresh.load_experiment(experiment))
    finally:
        fresh.store.close()
    assert downloaded == exported
    summary = json.loads(downloaded)["summary"]
    assert {entry["scorerId"] for entry in summary["judgeUsageBySteps"]} == {JUDGED}
    if thresholds:
        results = {entry["id"]: entry["passed"] for entry in summary["thresholdResults"]}
        assert set(results) == {CODED, JUDGED}
    else:
        assert "thresholdResults" not in summary


def test_the_html_report_read_a_page_at_a_time_is_the_whole_experiments(
    database_url: str, experiment: str, tmp_path: Path
) -> None:
    """`scorelab export --html` (through the driver, a page of items at a time) writes the
    report `experiment_html` makes of the whole experiment loaded by the `Service`."""
    from core.exchange.html import experiment_html, write_experiment_html

    at = datetime(2026, 1, 2, tzinfo=UTC)
    fresh = Service(database_url)
    quick = _quick(database_url, experiment)
    try:
        detail = fresh.load_experiment(experiment)
        for over in (2_000_000, 1_000):  # plain, and gzip-compressed
            whole = experiment_html(detail, generated_at=at, compress_over=over)
            pieces: list[str] = []
            write_experiment_html(
                pieces.append,
                quick.get_experiment(experiment),
                _Paged(quick, 2).experiment_pages(experiment),
                reviews=quick.reviews(experiment),
                generated_at=at,
                compress_over=over,
            )
            assert "".join(pieces) == whole
    finally:
        quick.close()
        fresh.store.close()
    target = tmp_path / "report.html"
    code = main(["--database-url", database_url, "export", experiment, "--html", str(target),
                 "--no-progress"])  # fmt: skip
    assert code == 0
    stamp = re.compile(r"generated [^<·]+ ·")
    written = stamp.sub("generated · ", target.read_text(encoding="utf-8"))
    assert written == stamp.sub("generated · ", experiment_html(detail))
    assert SECRET not in written
