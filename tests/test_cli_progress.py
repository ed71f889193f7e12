"""Progress bars of the `scorelab` command: drawn on a terminal (a pseudo-terminal here) with
their rate and time left, never into a pipe or a file, never with --no-progress."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path
from typing import Any

import pytest
from test_cli import SCRIPT, env, scorelab

from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

__all__ = ["env"]  # a fixture, imported for its use here

ITEMS = 8
RATE = re.compile(r"\d[\d,]*\.\d runs/s")


@pytest.fixture
def slow_run(tmp_path: Path, judge_server: FakeJudge) -> list[str]:
    """A run of about two seconds (each judge answer waits): long enough for the bar to be
    redrawn several times, so that a rate can be measured."""

    def respond(request: dict[str, Any]) -> Reply:
        answer = answer_from_schema(request)
        assert isinstance(answer, Reply)
        return Reply(answer.content, delay=0.05)

    judge_server.responder = respond
    data = tmp_path / "items.jsonl"
    rows = [{"id": f"i{n}", "input": "Say hello", "output": f"hello {n}"} for n in range(ITEMS)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return [
        "run", str(data), "--scorer", "toxicity-scorer", "--judge-model", "openai/fake-judge",
        "--api-base", judge_server.url, "--concurrency", "1",
        "--json", str(tmp_path / "r.json"),
    ]  # fmt: skip


def on_a_terminal(env: dict[str, str], *arguments: str) -> tuple[int, str, str]:
    """Run the command with its stderr on a pseudo-terminal of 120 columns: the exit code,
    stdout, and what the terminal received."""
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    process = subprocess.Popen(
        [str(SCRIPT), *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        env={**env, "TERM": "xterm-256color"},
    )
    os.close(terminal)
    received = bytearray()
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal's last descriptor
            break
        if not chunk:
            break
        received += chunk
    os.close(main)
    assert process.stdout is not None
    stdout = process.stdout.read().decode()
    return process.wait(timeout=60), stdout, received.decode(errors="replace")


def test_a_terminal_gets_bars_with_a_rate_and_the_time_left(
    env: dict[str, str], slow_run: list[str], tmp_path: Path
) -> None:
    code, stdout, shown = on_a_terminal(env, *slow_run)
    assert code == 0, shown
    assert "Experiment " in stdout and "\x1b" not in stdout  # the summary stays plain
    assert "reading" in shown and "storing" in shown  # the import's bars
    assert RATE.search(shown), shown  # the runs' bar, with its rate
    assert f"{ITEMS}/{ITEMS}" in shown and "ETA" in shown and "0 failed" in shown
    assert "json r.json" in shown  # the export's bar
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["totalRuns"] == ITEMS


def test_no_progress_draws_nothing_on_a_terminal(env: dict[str, str], slow_run: list[str]) -> None:
    code, stdout, shown = on_a_terminal(env, *slow_run, "--no-progress")
    assert code == 0, shown
    assert "Experiment " in stdout
    assert shown == ""  # nothing at all went to the terminal


def test_a_pipe_gets_no_bar(env: dict[str, str], slow_run: list[str]) -> None:
    completed = scorelab(env, *slow_run)
    assert completed.returncode == 0, completed.stderr
    assert "runs/s" not in completed.stderr and "ETA" not in completed.stderr
    assert "\x1b" not in completed.stderr and "\r" not in completed.stderr


def test_export_draws_a_bar_of_the_items_written(
    env: dict[str, str], slow_run: list[str], tmp_path: Path
) -> None:
    summary = scorelab(env, *slow_run).stdout
    made = re.findall(r"^Experiment (\S+)", summary, re.MULTILINE)[0]
    code, _, shown = on_a_terminal(env, "export", made, "--csv", str(tmp_path / "e.csv"))
    assert code == 0, shown
    assert "csv e.csv" in shown and f"{ITEMS}/{ITEMS}" in shown and "items/s" in shown
    _, _, quiet = on_a_terminal(
        env, "export", made, "--csv", str(tmp_path / "e.csv"), "--no-progress"
    )
    assert quiet == ""
