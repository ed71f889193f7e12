"""Deleting a dataset or an experiment while another process runs it (issue 19, hostile
finding 1): a `scorelab run` in a real subprocess writes to the same SQLite file; while its
experiment is running with a fresh heartbeat the deletion is refused, naming the experiment,
and nothing is deleted; once its heartbeat is stale (the process died) the deletion goes ahead.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_helpers import JUDGED, SCRIPT, environment, items_file

from core.errors import ExperimentConfigError
from core.service import Service
from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema


def query(database: Path, sql: str) -> list[tuple[object, ...]]:
    try:
        with sqlite3.connect(database, timeout=30) as connection:
            return connection.execute(sql).fetchall()
    except sqlite3.OperationalError:  # not made yet
        return []


@pytest.fixture
def running_cli(tmp_path: Path, judge_server: FakeJudge):  # type: ignore[no-untyped-def]
    """A `scorelab run` whose judge answers slowly, left running; killed at the end."""

    def slow(request: dict[str, object]) -> Reply:
        answer = answer_from_schema(request)
        assert isinstance(answer, Reply)
        return Reply(answer.content, delay=20.0)

    judge_server.responder = slow
    env = environment(tmp_path)
    data = items_file(tmp_path, ["one", "two", "three"])
    command = [
        str(SCRIPT), "run", str(data), "--scorer", JUDGED, "--judge-model", "openai/fake-judge",
        "--api-base", judge_server.url, "--judge-setting", "num_retries=0",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    database = tmp_path / "cli.db"
    try:
        for _ in range(600):
            if query(database, "SELECT id FROM experiments WHERE status = 'running'"):
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("the CLI's experiment was not running within a minute")
        yield process, env["SCORELAB_DATABASE_URL"], database
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)


def test_deleting_what_another_process_runs_is_refused_until_its_heartbeat_is_stale(
    running_cli: tuple[subprocess.Popen[str], str, Path],
) -> None:
    process, url, database = running_cli
    [(experiment_id, name, dataset_id)] = query(
        database, "SELECT id, name, dataset_id FROM experiments"
    )
    service = Service(url)
    try:
        assert service.running_experiments() == []  # not this process's run
        impact = service.dataset_deletion(str(dataset_id))
        assert impact.running == 1
        with pytest.raises(ExperimentConfigError) as refused:
            service.delete_dataset(str(dataset_id))
        message = str(refused.value)
        assert repr(name) in message and str(experiment_id) in message
        assert "another process" in message
        assert service.experiment_deletion(str(experiment_id)).running == 1
        with pytest.raises(ExperimentConfigError) as refused:
            service.delete_experiment(str(experiment_id))
        assert repr(name) in str(refused.value) and str(experiment_id) in str(refused.value)
        # Nothing was deleted, and the run goes on.
        assert query(database, "SELECT count(*) FROM experiments") == [(1,)]
        assert query(database, "SELECT count(*) FROM datasets") == [(1,)]
        assert process.poll() is None

        # The process dies (kill -9): its heartbeat goes stale, and the deletion is allowed.
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        old = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S.%f")
        with sqlite3.connect(database, timeout=30) as connection:
            connection.execute("UPDATE experiments SET heartbeat_at = ?", (old,))
        assert service.get_experiment(str(experiment_id)).status == "interrupted"
        assert service.dataset_deletion(str(dataset_id)).running == 0
        service.delete_dataset(str(dataset_id))
        assert query(database, "SELECT count(*) FROM experiments") == [(0,)]
        assert query(database, "SELECT count(*) FROM datasets") == [(0,)]
    finally:
        service.store.close()
