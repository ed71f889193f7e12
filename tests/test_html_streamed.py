"""The HTML reports that used to be built from the whole experiment at once, now built a page of
items at a time (`write_experiment_html`): `scorelab run --html` and the dashboard's HTML
download (pages/ui/downloads.py). Each is the report of the whole experiment, byte for byte but
for the "generated" time: with the thresholds kept with the experiment, reviews and hostile
text, on SQLite and (when available) PostgreSQL. Their memory at 100,000 results is measured by
bench/html_report.py, never asserted here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import environment, experiment_id, scorelab
from scorelab_db import BACKENDS, database

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service, views
from pages.ui.downloads import html_download

GENERATED = re.compile(r"generated [0-9T:.+-]+")
DATA = (
    b"id,question,answer\n"
    b"a,q,right\n"
    b"b,q,</script><b>right</b>\n"
    b"c,q,\xe2\x80\xaeright wrong\n"
    b"d,q,wrong\n"
)


def without_time(page: str) -> str:
    """The report without its generation time (the one part two builds differ in)."""
    assert len(GENERATED.findall(page)) == 1
    return GENERATED.sub("generated <time>", page)


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        empty = tmp_path / "samples"
        empty.mkdir()
        shared = Service(url, samples_dir=empty)
        try:
            yield shared
        finally:
            shared.store.close()


def test_the_dashboard_download_is_the_whole_report(service: Service) -> None:
    dataset = service.import_dataset("streamed.csv", DATA)
    started = service.start_experiment(
        ExperimentConfig(
            name="streamed <report>",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "r"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "q", "id": "q"}),
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    service.set_thresholds(started, {"r": 0.7})
    service.save_review(started, "b", "r", "wrong", note="<i>odd</i>", reviewer="ann")
    whole = views.experiment_html(
        service.load_experiment(started), thresholds=service.pass_fail(started).json()
    )
    streamed = html_download(service, started)
    assert "Pass/fail" in streamed and "&lt;i&gt;odd&lt;/i&gt;" in streamed
    assert without_time(streamed) == without_time(whole)


def test_run_html_is_the_whole_report(tmp_path: Path) -> None:
    env = environment(tmp_path)
    data = tmp_path / "items.jsonl"
    rows = [
        {"id": f"i{n}", "input": f"question {n} <b>", "output": f"answer {n} </script>",
         "ground_truth": f"answer {n % 3}"}
        for n in range(12)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = tmp_path / "run.html"
    done = scorelab(
        env, "run", data, "--scorer", "keyword-coverage-scorer", "--scorer",
        "completeness-scorer", "--html", report, "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shared = Service(env["SCORELAB_DATABASE_URL"])
    try:
        whole = views.experiment_html(shared.load_experiment(experiment_id(done.stdout)))
    finally:
        shared.store.close()
    assert without_time(report.read_text(encoding="utf-8")) == without_time(whole)
