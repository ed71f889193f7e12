"""The `scorelab` console script end to end on real files (subprocesses): outputs, exit codes,
and one-line error messages without tracebacks."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from core.testing import FakeJudge, Fault
from core.testing.fake_judge import answer_from_schema

SCRIPT = Path(sys.executable).with_name("scorelab")
ROWS = (
    "id,question,answer,expected\n"
    "q1,What is the capital of France?,Paris is the capital of France.,Paris\n"
    'q2,Say hi,"=HYPERLINK(""http://x"")",hi\n'
    "q3,Tag test,<script>alert(1)</script> hello,hello\n"
)


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # The console script would import `core` from wherever the package was installed
    # (editable: possibly another checkout); PYTHONPATH makes it run this checkout's code.
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": python_path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "qa.csv"
    path.write_text(ROWS)
    return path


def scorelab(env: dict[str, str], *arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, arguments)], capture_output=True, text=True, env=env, timeout=120
    )


def assert_one_line_error(completed: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorelab: error: "), completed.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_run_writes_json_csv_and_html(env: dict[str, str], data_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    completed = scorelab(
        env,
        "run",
        data_file,
        "--scorer",
        "keyword-coverage-scorer",
        "--scorer",
        'checks.includes={"value": "hello"}',
        "--name",
        "cli run",
        "--json",
        out / "r.json",
        "--csv",
        out / "r.csv",
        "--html",
        out / "r.html",
    )
    assert completed.returncode == 0, completed.stderr
    assert "cli run" in completed.stdout and "checks.includes: 0.3333" in completed.stdout

    report = json.loads((out / "r.json").read_text())
    assert set(report) == {"experimentId", "name", "scores", "summary", "items", "reviews"}
    assert report["reviews"] == []  # nothing reviewed yet (docs/review.md)
    assert report["name"] == "cli run"
    assert report["summary"]["totalItems"] == 3 and report["summary"]["failedRuns"] == 0
    assert report["scores"]["checks.includes"] == pytest.approx(1 / 3)
    first = report["items"][0]
    assert {k: first[k] for k in ("id", "input", "groundTruth")} == {
        "id": "q1",
        "input": "What is the capital of France?",
        "groundTruth": "Paris",
    }
    result = first["results"]["checks.includes"]
    assert result["score"] == 0 and result["output"] == "Paris is the capital of France."
    assert set(first["results"]) == {"keyword-coverage-scorer", "checks.includes"}

    rows = list(csv.DictReader(io.StringIO((out / "r.csv").read_text())))
    assert len(rows) == 6
    assert rows[2]["output"] == '\'=HYPERLINK("http://x")'  # neutralised formula

    html = (out / "r.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html  # escaped report data
    assert "default-src 'none'" in html and 'src="http' not in html  # nothing loaded


def test_judge_attempts_match_the_judge_servers_own_count(
    env: dict[str, str], data_file: Path, tmp_path: Path, judge_server: FakeJudge
) -> None:
    judge_server.responder = answer_from_schema
    # Two retried transport faults (Retry-After: 0 keeps the real waits short) and a malformed
    # answer (the fallback), all met by the first run's first step.
    judge_server.script(
        Fault(429, "slow down", retry_after="0"), Fault(503, retry_after="0"), "not JSON"
    )
    out = tmp_path / "r.json"
    completed = scorelab(
        env,
        "run",
        data_file,
        "--scorer",
        "toxicity-scorer",
        "--judge-model",
        "openai/fake-judge",
        "--api-base",
        judge_server.url,
        "--concurrency",
        "1",
        "--no-progress",
        "--json",
        out,
    )
    assert completed.returncode == 0, completed.stderr

    summary = json.loads(out.read_text())["summary"]
    # As a test with the judge in another process would: the counter over HTTP.
    with urllib.request.urlopen(f"{judge_server.url}/__stats", timeout=10) as response:
        stats = json.loads(response.read())
    assert summary["failedRuns"] == 0
    assert summary["judgeAttempts"] == stats["requests"] > summary["judgeCalls"]
    assert summary["judgeCalls"] == stats["byStatus"]["200"]
    assert stats["byStatus"]["429"] == stats["byStatus"]["503"] == 1


def test_the_experiment_is_in_the_dashboard_database(env: dict[str, str], data_file: Path) -> None:
    assert scorelab(env, "run", data_file, "--scorer", "tone-scorer").returncode == 0
    assert scorelab(env, "run", data_file, "--scorer", "tone-scorer").returncode == 0
    from core.service import Service

    service = Service(env["SCORELAB_DATABASE_URL"])
    assert len(service.list_experiments()) == 2
    assert len(service.list_datasets()) == 1  # the same file is imported once
    service.store.close()


def test_thresholds_decide_the_exit_code(env: dict[str, str], data_file: Path) -> None:
    includes = 'checks.includes={"value": "hello"}'
    failed = scorelab(
        env, "run", data_file, "--scorer", includes, "--threshold", "checks.includes=0.5"
    )
    assert failed.returncode == 1
    assert "threshold checks.includes >= 0.5: FAILED (0.3333)" in failed.stdout
    passed = scorelab(
        env, "run", data_file, "--scorer", includes, "--threshold", "checks.includes=0.3"
    )
    assert passed.returncode == 0 and "passed" in passed.stdout


def test_failed_runs_are_reported_and_kept_in_the_json(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "mixed.jsonl"
    data.write_text('{"input": "q", "output": 42}\n{"input": "q2", "output": "fine"}\n')
    completed = scorelab(env, "run", data, "--scorer", "tone-scorer", "--json", tmp_path / "r.json")
    assert completed.returncode == 1  # a failed run fails the run unless allowed
    assert "FAILED: 1 of 2 runs of tone-scorer failed (allowed: 0%" in completed.stdout
    assert (
        "warning: 1 scorer run(s) failed" in completed.stderr
        and "Traceback" not in completed.stderr
    )
    entry = json.loads((tmp_path / "r.json").read_text())["items"][0]["results"]["tone-scorer"]
    assert entry["status"] == "failed" and entry["score"] is None
    assert entry["failedStep"] == "preprocess" and entry["completedSteps"] == []
    assert "output must be a string" in entry["error"]


def test_a_threshold_fails_when_half_the_runs_failed(env: dict[str, str], tmp_path: Path) -> None:
    """The mean of the surviving runs is high; the gate must still see the failures."""
    data = tmp_path / "half.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"i{n}",
                "input": "Say something kind",
                "output": 42 if n % 2 else "What a lovely, wonderful day!",
            }
        )
        for n in range(12)
    ]
    data.write_text("\n".join(lines) + "\n")
    run = ("run", data, "--scorer", "tone-scorer", "--threshold", "tone-scorer=0.1")
    failed = scorelab(env, *run, "--json", tmp_path / "r.json")
    assert failed.returncode == 1, failed.stderr
    assert "6 runs succeeded, 6 failed" in failed.stdout
    assert "threshold tone-scorer >= 0.1: FAILED" in failed.stdout
    assert "6 failed runs" in failed.stdout
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["thresholdResults"] == [
        {
            "id": "tone-scorer",
            "passed": False,
            "averageScore": pytest.approx(summary["thresholdResults"][0]["averageScore"]),
            "threshold": {"min": 0.1},
            "failedRuns": 6,
            "totalRuns": 12,
        }
    ]
    assert scorelab(env, *run, "--max-failure-rate", "0.49").returncode == 1
    allowed = scorelab(env, *run, "--max-failure-rate", "0.5")
    assert allowed.returncode == 0, allowed.stdout
    assert "threshold tone-scorer >= 0.1: passed" in allowed.stdout


def test_a_run_where_every_scorer_run_failed_does_not_exit_0(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "broken.jsonl"
    data.write_text('{"input": "q", "output": 42}\n{"input": "q2", "output": 43}\n')
    completed = scorelab(env, "run", data, "--scorer", "tone-scorer")
    assert completed.returncode == 1
    assert "0 runs succeeded, 2 failed" in completed.stdout
    assert "FAILED: 2 of 2 runs of tone-scorer failed" in completed.stdout
    # Even when failures are allowed: a run that measured nothing is not a pass.
    allowed = scorelab(env, "run", data, "--scorer", "tone-scorer", "--max-failure-rate", "1")
    assert allowed.returncode == 1, allowed.stdout
    assert "every scorer run failed, so nothing was measured" in allowed.stdout


def test_columns_can_be_mapped_by_hand(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "custom.csv"
    data.write_text("ask,reply,note\nWhat is up?,The sky,x\n")
    missing = scorelab(env, "run", data, "--scorer", "tone-scorer")
    assert_one_line_error(missing, "No input column found")
    completed = scorelab(
        env,
        "run",
        data,
        "--scorer",
        "tone-scorer",
        "--input-column",
        "ask",
        "--output-column",
        "reply",
        "--json",
        tmp_path / "r.json",
    )
    assert completed.returncode == 0, completed.stderr
    item = json.loads((tmp_path / "r.json").read_text())["items"][0]
    assert (item["input"], item["output"], item["metadata"]) == (
        "What is up?",
        "The sky",
        {"note": "x"},
    )
    assert_one_line_error(
        scorelab(env, "run", data, "--scorer", "tone-scorer", "--input-column", "ask"),
        "name it with --output-column",
    )
    assert_one_line_error(
        scorelab(
            env,
            "run",
            data,
            "--scorer",
            "tone-scorer",
            "--input-column",
            "nope",
            "--output-column",
            "reply",
        ),
        "The mapping names column 'nope' as the input column",
    )


def test_scorers_lists_the_catalog(env: dict[str, str]) -> None:
    completed = scorelab(env, "scorers")
    assert completed.returncode == 0
    assert "keyword-coverage-scorer" in completed.stdout and "checks.includes" in completed.stdout
    catalog = json.loads(scorelab(env, "scorers", "--json").stdout)
    assert any(entry["id"] == "tone-scorer" for entry in catalog)


def test_scorers_help_leaves_out_the_options_only_python_can_give(env: dict[str, str]) -> None:
    text = scorelab(env, "scorers").stdout
    assert "--scorer option context (list[str], default None)" in text
    assert "context_extractor" not in text and "get_context" not in text
    catalog = {e["id"]: e for e in json.loads(scorelab(env, "scorers", "--json").stdout)}
    options = {o["name"]: o for o in catalog["context-precision-scorer"]["options"]}
    assert options["context_extractor"]["codeOnly"] and not options["context"]["codeOnly"]


def test_bad_input_and_usage_exit_2_with_one_line(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    assert_one_line_error(
        scorelab(env, "run", tmp_path / "missing.csv", "--scorer", "x"), "missing.csv: no such file"
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("id,question,answer\n1,q,\n")
    assert_one_line_error(
        scorelab(env, "run", bad, "--scorer", "tone-scorer"),
        "bad.csv: Row 1: the output (column 'answer') is empty",
    )
    assert_one_line_error(
        scorelab(env, "run", tmp_path / "data.txt", "--scorer", "x"), "no such file"
    )
    (tmp_path / "data.txt").write_text("x")
    assert_one_line_error(
        scorelab(env, "run", tmp_path / "data.txt", "--scorer", "tone-scorer"),
        "Unknown file type '.txt'",
    )
    assert_one_line_error(
        scorelab(env, "run", data_file, "--scorer", "nope"), "Unknown scorer 'nope'"
    )
    assert_one_line_error(
        scorelab(
            env, "run", data_file, "--scorer", "tone-scorer", "--threshold", "tone-scorer=1.5"
        ),
        "between 0 and 1",
    )
    assert_one_line_error(
        scorelab(env, "run", data_file, "--scorer", "tone-scorer", "--threshold", "other=0.5"),
        "no such scorer in this run",
    )
    assert_one_line_error(
        scorelab(env, "run", data_file, "--scorer", "checks.includes={oops"), "not valid JSON"
    )
    for share in ("1.5", "-0.1", "5%", "nan"):
        assert_one_line_error(
            scorelab(env, "run", data_file, "--scorer", "tone-scorer", "--max-failure-rate", share),
            "--max-failure-rate",
            "between 0 and 1",
        )
    assert_one_line_error(
        scorelab(env, "run", data_file, "--scorer", "tone-scorer", "--concurrency", "0"),
        "positive integer",
    )
    assert_one_line_error(scorelab(env, "run", data_file), "--scorer")
    assert_one_line_error(scorelab(env), "required")
    assert_one_line_error(scorelab(env, "fly"), "invalid choice")
    assert_one_line_error(
        scorelab(
            env, "run", data_file, "--scorer", "tone-scorer", "--json", tmp_path / "no" / "dir.json"
        ),
        "cannot write it",
    )


def test_help_exits_0(env: dict[str, str]) -> None:
    completed = scorelab(env, "run", "--help")
    assert completed.returncode == 0 and "--threshold" in completed.stdout
