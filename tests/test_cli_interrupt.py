"""Ctrl-C during `scorelab run` (a real SIGINT to a subprocess): the experiment is cancelled
and recorded as such, its finished results kept, no export written, exit 130, no traceback.

The judge answers the item whose output is "fast answer" at once and every other item slowly,
so which runs have finished when the signal comes is known."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

SCRIPT = Path(sys.executable).with_name("scorelab")
ROOT = Path(__file__).resolve().parents[1]
ITEMS = 10
RUNS_AT_ONCE = 2


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": python_path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def slow_judge(judge: FakeJudge, delay: float) -> None:
    """Every judge step of the fast item answers at once (its verdicts' reasons carry the
    marker on to the next step's prompt); any other waits `delay` seconds."""

    def respond(request: dict[str, Any]) -> Reply:
        answer = answer_from_schema(request)
        assert isinstance(answer, Reply)
        if "fast answer" not in json.dumps(request["messages"]):
            return Reply(answer.content, delay=delay)
        try:
            return Reply(json.dumps(marked(json.loads(answer.content))))
        except json.JSONDecodeError:  # a free-text step
            return answer

    judge.responder = respond


def marked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "fast answer" if k == "reason" else marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [marked(v) for v in value]
    return value


def start_run(env: dict[str, str], tmp_path: Path, judge: FakeJudge) -> subprocess.Popen[str]:
    data = tmp_path / "items.jsonl"
    rows = [
        {"id": f"i{n}", "input": "Say hello", "output": "fast answer" if n == 0 else "slow"}
        for n in range(ITEMS)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = [
        str(SCRIPT), "run", str(data), "--scorer", "toxicity-scorer",
        "--judge-model", "openai/fake-judge", "--api-base", judge.url,
        "--judge-setting", "num_retries=0", "--concurrency", str(RUNS_AT_ONCE),
        "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"),
    ]  # fmt: skip
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def query(env: dict[str, str], sql: str) -> list[tuple[Any, ...]]:
    path = env["SCORELAB_DATABASE_URL"].removeprefix("sqlite:///")
    try:
        with sqlite3.connect(path, timeout=30) as connection:
            return connection.execute(sql).fetchall()
    except sqlite3.OperationalError:  # not made yet
        return []


def wait_for_the_first_result(env: dict[str, str], run: subprocess.Popen[str]) -> None:
    for _ in range(600):
        if query(env, "SELECT item_id FROM scorer_results"):
            return
        assert run.poll() is None, run.communicate()
        time.sleep(0.1)
    pytest.fail("no result was stored within a minute")


def check_cancelled(env: dict[str, str], tmp_path: Path, out: str, err: str) -> list[str]:
    """What every interrupted run must show; returns the items whose result is stored."""
    assert "Traceback" not in err, err
    assert "Experiment " in out and "): cancelled" in out
    assert "interrupted, so" in err and "r.json" in err and "r.csv" in err
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.csv").exists()
    assert not list(tmp_path.glob(".r.*"))  # no temporary file left either
    [(status, finished_at)] = query(env, "SELECT status, finished_at FROM experiments")
    assert status == "cancelled" and finished_at is not None
    stored = sorted(item for (item,) in query(env, "SELECT item_id FROM scorer_results"))
    from core.storage import Store

    store = Store(env["SCORELAB_DATABASE_URL"])
    try:
        [info] = store.list_experiments()
        assert info.status == "cancelled" and info.counts.succeeded == len(stored)
    finally:
        store.close()
    return stored


def test_ctrl_c_cancels_keeps_finished_results_and_exits_130(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge
) -> None:
    slow_judge(judge_server, delay=1.5)
    run = start_run(env, tmp_path, judge_server)
    wait_for_the_first_result(env, run)
    # i0 is stored; i1 and i2 are in flight (two slow judge steps each); none other started.
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=120)

    assert run.returncode == 130, err
    assert "cancelling: no new run starts" in err
    # The runs in flight were let finish and are kept; no other run started.
    assert check_cancelled(env, tmp_path, out, err) == ["i0", "i1", "i2"]
    assert "3 runs succeeded, 0 failed" in out


def test_a_second_ctrl_c_aborts_the_runs_in_flight_without_a_traceback(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge
) -> None:
    slow_judge(judge_server, delay=60)  # had they not been aborted, they would be stored
    run = start_run(env, tmp_path, judge_server)
    wait_for_the_first_result(env, run)
    run.send_signal(signal.SIGINT)
    time.sleep(0.5)
    for _ in range(3):  # an impatient user
        run.send_signal(signal.SIGINT)
        time.sleep(0.05)
    out, err = run.communicate(timeout=120)

    assert run.returncode == 130, err
    assert "aborting the runs in flight" in err
    assert check_cancelled(env, tmp_path, out, err) == ["i0"]  # the aborted ones left nothing


def test_an_older_export_is_left_as_it_was(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge
) -> None:
    """An interrupted run writes nothing, not even over the files of an earlier run."""
    (tmp_path / "r.json").write_text("earlier")
    slow_judge(judge_server, delay=60)
    run = start_run(env, tmp_path, judge_server)
    wait_for_the_first_result(env, run)
    run.send_signal(signal.SIGINT)
    time.sleep(0.3)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130 and "Traceback" not in err
    assert (tmp_path / "r.json").read_text() == "earlier"
    assert not (tmp_path / "r.csv").exists()


def test_an_error_after_the_start_does_not_leave_the_experiment_running(
    env: dict[str, str], tmp_path: Path, judge_server: FakeJudge
) -> None:
    slow_judge(judge_server, delay=60)
    data = tmp_path / "items.jsonl"
    data.write_text('{"input": "Say hello", "output": "slow"}\n')
    command = [
        str(SCRIPT), "run", str(data), "--scorer", "toxicity-scorer",
        "--judge-model", "openai/fake-judge", "--api-base", judge_server.url,
        "--threshold", "other-scorer=0.5",  # known to be wrong only once the scorers are built
    ]  # fmt: skip
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2 and "no such scorer in this run" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert query(env, "SELECT status FROM experiments") == [("cancelled",)]
