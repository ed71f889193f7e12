"""Large and hostile runs through the engine, the service and the `scorelab` command: items read
a page at a time, a summary from the database, exports written a page at a time (and equal to
the whole), the concurrency cap, NUL characters refused with their row on every database, and
data printed with its control characters escaped."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scorelab_db import BACKENDS, database

from core import Scorer, create_scorer
from core.cli.outputs import csv_export, json_export
from core.exchange.exports import experiment_json, results_csv
from core.experiments.engine import MAX_CONCURRENCY, run_experiment
from core.records import DatasetItem, ExperimentConfig, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import DatasetImportError, ExperimentConfigError, Service

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("scorelab")


def fragile() -> Scorer:
    def score(ctx: Any) -> float:
        if "3" in str(ctx.run.input):
            raise RuntimeError(f"cannot score {ctx.run.input}")
        return 0.5

    return create_scorer(id="fragile", description="fails on a 3").generate_score(score)


CATALOG = {
    **PREBUILT,
    "fragile": PrebuiltScorer("fragile", "Fragile", "Fails on inputs holding a 3", fragile, False),
}


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        service = Service(url, catalog=CATALOG, samples_dir=tmp_path / "samples")
        try:
            yield service
        finally:
            service.store.close()


def rows(count: int) -> bytes:
    return b"id,question,answer\n" + b"".join(
        f"i{n},question {n},answer {n}\n".encode() for n in range(count)
    )


# ---- the engine and the service ----


def test_the_engine_takes_items_from_an_iterator() -> None:
    consumed: list[int] = []

    def stream() -> Iterator[DatasetItem]:
        for n in range(7):
            consumed.append(n)
            yield DatasetItem(id=f"i{n}", input=f"q{n}", output="a")

    scorer = create_scorer(id="s", description="x").generate_score(lambda ctx: 1.0)
    summary = asyncio.run(
        run_experiment(items=stream(), item_count=7, scorers=[scorer], concurrency=3)
    )
    assert (summary.counts.total, summary.counts.succeeded) == (7, 7)
    assert consumed == list(range(7))
    with pytest.raises(TypeError, match="pass item_count"):
        asyncio.run(run_experiment(items=stream(), scorers=[scorer]))


def test_the_engine_refuses_concurrency_over_the_cap() -> None:
    scorer = create_scorer(id="s", description="x").generate_score(lambda ctx: 1.0)
    item = DatasetItem(id="a", input="q", output="a")
    with pytest.raises(ValueError, match=f"at most {MAX_CONCURRENCY}, got 99,999,999,999"):
        asyncio.run(run_experiment(items=[item], scorers=[scorer], concurrency=99_999_999_999))


def test_an_experiment_reads_its_items_a_page_at_a_time(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = service.import_dataset("many.csv", rows(25))
    pages: list[int] = []
    original = service.store.datasets._item_pages

    def counted(dataset_id: str, page_size: int) -> Iterator[DatasetItem]:
        pages.append(page_size)
        return original(dataset_id, 10)

    monkeypatch.setattr(service.store.datasets, "_item_pages", counted)
    monkeypatch.setattr(
        service.store, "dataset_items", lambda *a, **k: pytest.fail("loaded every item")
    )
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="fragile")])
    )
    progress = service.wait(started, timeout=60)
    assert progress.status == "completed" and pages
    info = service.get_experiment(started)
    assert (info.counts.total, info.counts.succeeded, info.counts.failed) == (25, 22, 3)


def test_concurrency_over_the_cap_is_refused_before_anything_is_stored(service: Service) -> None:
    dataset = service.import_dataset("few.csv", rows(2))
    config = ExperimentConfig(
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="fragile")],
        concurrency=MAX_CONCURRENCY + 1,
    )
    with pytest.raises(ExperimentConfigError, match="at most 256 runs at once, got 257"):
        service.start_experiment(config)
    assert service.list_experiments() == []


def test_a_nul_character_in_an_id_is_refused_with_its_row(service: Service) -> None:
    with pytest.raises(DatasetImportError) as refused:
        service.import_dataset("nul.csv", b"id,question,answer\na,q,x\nb\x00,q,y\n")
    assert str(refused.value) == (
        "nul.csv: Row 2: the id (column 'id') holds a NUL character (\\x00), which the "
        "database cannot store"
    )
    assert service.list_datasets() == []


def test_exports_written_a_page_at_a_time_equal_the_whole(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = service.import_dataset("many.csv", rows(25))
    started = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="fragile"), ScorerSpec(scorer_id="tone-scorer")],
        )
    )
    service.wait(started, timeout=60)
    whole = service.load_experiment(started)
    assert whole.failures and whole.results
    pages = service.experiment_pages
    monkeypatch.setattr(service, "experiment_pages", lambda e: pages(e, page_size=4))
    thresholds = [{"id": "fragile", "passed": False}]
    out = io.StringIO()
    written: list[int] = []  # the items of each page, as the CLI's progress bar gets them
    json_export(service, started, total_items=25, thresholds=thresholds).write(out, written.append)
    assert written == [4, 4, 4, 4, 4, 4, 1]
    expected = experiment_json(whole, thresholds=thresholds)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(expected, default=str))
    out = io.StringIO()
    csv_export(service, started, total_items=25).write(out, written.append)
    assert sum(written) == 2 * 25
    assert out.getvalue() == results_csv(whole)


def test_exports_of_an_empty_page_are_valid(service: Service) -> None:
    dataset = service.import_dataset("few.csv", rows(2))
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="fragile")])
    )
    service.wait(started, timeout=60)
    service.store.delete_experiment(started)  # results gone, the items stay
    recreated = service.store.create_experiment(
        name="empty",
        dataset_id=dataset.id,
        scorers=[],
        scorer_ids=["fragile"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    out = io.StringIO()
    csv_export(service, recreated.id, total_items=2).write(out, lambda _items: None)
    assert out.getvalue() == results_csv(service.load_experiment(recreated.id))
    out = io.StringIO()
    json_export(service, recreated.id, total_items=2).write(out, lambda _items: None)
    assert len(json.loads(out.getvalue())["items"]) == 2


# ---- the command ----


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": python_path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def scorelab(env: dict[str, str], *arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, arguments)], capture_output=True, text=True, env=env, timeout=120
    )


def one_line_error(completed: subprocess.CompletedProcess[str]) -> str:
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorelab: error: "), completed.stderr
    return lines[0]


def test_concurrency_over_the_cap_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "qa.csv"
    data.write_bytes(rows(2))
    line = one_line_error(
        scorelab(env, "run", data, "--scorer", "tone-scorer", "--concurrency", "99999999999")
    )
    assert "--concurrency: at most 256 runs at once, got 99,999,999,999" in line


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        (
            "deep.jsonl",
            b'{"input": "q", "output": ' + b"[" * 900 + b"]" * 900 + b"}\n",
            "deep.jsonl: Line 1: the value of key 'output' is nested deeper than the limit",
        ),
        (
            "long.json",
            b'[{"input": "q", "output": ' + b"9" * 5000 + b"}]",
            "long.json: Item 1 (line 1): a number has 5,000 digits",
        ),
        (
            "cols.csv",
            b"foo,bar\n1,2\n",
            "cols.csv: No input column found (looked for input, question, prompt, query)",
        ),
        (
            "nul.csv",
            b"id,input,output\nq\x001,a,b\n",
            "nul.csv: Row 1: the id (column 'id') holds a NUL character (\\x00)",
        ),
    ],
)
def test_a_hostile_file_is_one_line_naming_the_file_and_the_place(
    env: dict[str, str], tmp_path: Path, name: str, content: bytes, fragment: str
) -> None:
    data = tmp_path / name
    data.write_bytes(content)
    line = one_line_error(scorelab(env, "run", data, "--scorer", "tone-scorer"))
    assert str(data) in line and fragment.split(": ", 1)[1] in line


def test_missing_output_column_is_refused_even_with_the_input_named(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "cols.csv"
    data.write_bytes(b"foo,bar\n1,2\n")
    line = one_line_error(
        scorelab(env, "run", data, "--scorer", "tone-scorer", "--input-column", "foo")
    )
    assert "no output column found; name it with --output-column" in line


def test_a_cr_only_csv_runs(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "mac.csv"
    data.write_bytes(b"id,input,output\rq1,hello,great answer\rq2,hi,bad answer\r")
    completed = scorelab(env, "run", data, "--scorer", "tone-scorer")
    assert completed.returncode == 0, completed.stderr
    assert "2 items, 2 runs succeeded, 0 failed" in completed.stdout


def test_control_characters_from_the_data_are_printed_escaped(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "esc.jsonl"
    data.write_text(
        json.dumps({"id": "evil\x1b[31m\x1b]0;owned\x07", "input": "q", "output": {"x": 1}}) + "\n"
    )
    completed = scorelab(
        env, "run", data, "--scorer", "tone-scorer", "--name", "run\x1b[2J\u202ename"
    )
    assert completed.returncode == 1, completed.stderr
    everything = completed.stdout + completed.stderr
    assert "\x1b" not in everything and "\x07" not in everything and "\u202e" not in everything
    assert "(run\\x1b[2J\\u202ename)" in completed.stdout
    assert "item evil\\x1b[31m\\x1b]0;owned\\x07, tone-scorer" in completed.stderr
