"""`scorelab resume` (issue 13, point 1, from the terminal): a `scorelab run` killed with
SIGKILL mid-run is resumed by the command: only the pairs without a stored result reach the
judge, the stored rows stay as they were, the exports and the summary cover the whole
experiment. An unknown id or a status that cannot be resumed exits 2 with one line."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from cli_helpers import (
    JUDGED,
    SCRIPT,
    assert_one_line_error,
    environment,
    experiment_id,
    experiments,
    items_file,
    judge_calls_per_item,
    scorelab,
)

from core.storage import Store
from core.storage.tables import ExperimentRow, ScoreRow
from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

ITEMS = 12


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return environment(tmp_path)


@pytest.fixture
def store(env: dict[str, str]) -> Iterator[Store]:
    store = Store(env["SCORELAB_DATABASE_URL"])
    yield store
    store.close()


def stored_rows(store: Store) -> dict[tuple[str, str], Any]:
    """Every stored result, by (item, scorer): its row id."""
    table = ScoreRow.__table__
    with store.engine.connect() as connection:
        rows = connection.execute(sqlalchemy.select(table.c.item_id, table.c.scorer_id, table.c.id))
        return {(item, scorer): row_id for item, scorer, row_id in rows}


def make_stale(store: Store, experiment: str) -> None:
    """Its last heartbeat a while ago, as a killed process leaves it once time has passed."""
    table = ExperimentRow.__table__
    with store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.update(table)
            .where(table.c.id == experiment)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=5))
        )


def slowly(judge: FakeJudge, delay: float) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        answer = answer_from_schema(request)
        assert isinstance(answer, Reply)
        return Reply(answer.content, delay=delay)

    judge.responder = respond


def killed_run(env: dict[str, str], tmp_path: Path, judge: FakeJudge, store: Store) -> str:
    """A `scorelab run` killed with SIGKILL once a few results are stored; returns its id."""
    data = items_file(tmp_path, [f"answer number {n}" for n in range(ITEMS)])
    slowly(judge, 0.1)
    command = [
        str(SCRIPT), "run", str(data), "--scorer", JUDGED, "--judge-model", "openai/fake-judge",
        "--api-base", judge.url, "--judge-setting", "num_retries=0", "--concurrency", "2",
        "--no-progress",
    ]  # fmt: skip
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(stored_rows(store)) < 3:
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no result was stored within a minute"
            time.sleep(0.05)
        run.send_signal(signal.SIGKILL)
        assert run.wait(timeout=60) == -signal.SIGKILL
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()
    [info] = store.list_experiments()
    return info.id


def test_a_killed_run_resumes_with_only_its_missing_pairs(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge, store: Store
) -> None:
    killed = killed_run(env, tmp_path, judge_server, store)
    before = stored_rows(store)
    assert 3 <= len(before) < ITEMS, "killed after it finished: nothing left to resume"
    refused = scorelab(env, "resume", killed)  # its heartbeat is fresh: it may be alive
    assert_one_line_error(refused, "is running: only an experiment stopped part-way")
    make_stale(store, killed)
    assert experiments(env)[0]["status"] == "interrupted"

    judge_server.reset()
    slowly(judge_server, 0.0)
    out = tmp_path / "resumed.json"
    completed = scorelab(env, "resume", killed, "--json", out, "--no-progress")

    assert completed.returncode == 0, completed.stderr
    assert experiment_id(completed.stdout) == killed
    assert f"): completed\n  {ITEMS} items, {ITEMS} runs succeeded, 0 failed" in completed.stdout
    assert "Judge key: none (the server gets a placeholder)" in completed.stdout
    missing = ITEMS - len(before)
    assert judge_server.call_count == missing * judge_calls_per_item()  # no stored pair again
    after = stored_rows(store)
    assert {pair: after[pair] for pair in before} == before  # the same rows, untouched
    assert set(after) == {(f"i{n}", JUDGED) for n in range(ITEMS)}
    report = json.loads(out.read_text())
    assert report["experimentId"] == killed and report["summary"]["failedRuns"] == 0
    assert all(JUDGED in item["results"] for item in report["items"])
    assert experiments(env)[0]["status"] == "completed"

    again = scorelab(env, "resume", killed)
    assert_one_line_error(again, f"({killed}) is completed: only an experiment stopped")


def test_resume_refuses_an_unknown_id_and_bad_options(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge
) -> None:
    unknown = scorelab(env, "resume", "nope")
    assert_one_line_error(unknown, "no experiment 'nope' in the database")
    data = items_file(tmp_path, ["hello", "hello there"])
    coded = scorelab(env, "run", data, "--scorer", "keyword-coverage-scorer")
    assert coded.returncode == 0, coded.stderr
    coded_id = experiment_id(coded.stdout)
    keyed = scorelab(env, "resume", coded_id, "--api-key-env", "HOME")
    assert_one_line_error(keyed, f"experiment {coded_id} has no judge model")
    wrong = scorelab(env, "resume", coded_id, "--threshold", "gone=0.5")
    assert_one_line_error(wrong, "--threshold gone: no such scorer in this run")
    for value in ("0", "-1", "abc"):
        capped = scorelab(env, "resume", coded_id, "--max-cost", value)
        assert_one_line_error(capped, "argument --max-cost: expected an amount of USD above 0")
    assert judge_server.call_count == 0


def test_help_lists_resume_and_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    from core.cli import main

    assert main(["--help"]) == 0
    assert "resume" in capsys.readouterr().out
    assert main(["resume", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("EXPERIMENT_ID", "--max-cost USD", "--api-key-stdin", "--json", "--threshold"):
        assert option in shown
    assert "judge keys" in shown  # the same epilog as `run`
    assert main(["run", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("--cache", "--max-cost USD", "--retry-failed N", "--dry-run"):
        assert option in shown
    assert main(["resume", "some-id", "--csv", "-"]) == 2
    assert "prints its summary on stdout" in capsys.readouterr().err
