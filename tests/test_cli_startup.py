"""The CLI's start-up (issue 21, item 9): the commands that call no judge never import litellm
(`scorelab experiments [--json]`, `scorelab export`, a `scorelab scorers` listing and a refused
`scorelab resume`, which refuses a completed experiment before it resolves any judge key or
reads one from stdin). Each command runs in a child process of its own, which then reports
whether litellm (and the dashboard's drawing libraries) got imported. The speed itself is
measured by bench/cli_startup.py, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import JUDGED, SCRIPT, environment, experiment_id, items_file

from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

# Runs one command of `scorelab` in this process, then prints what it imported.
CHILD = """
import contextlib, io, json, sys
from core.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
loaded = sorted({name.split(".")[0] for name in sys.modules})
ours = sorted(name for name in sys.modules if name.startswith("core."))
print(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
                  "loaded": loaded, "core": ours}))
"""


def child(env: dict[str, str], *arguments: str, stdin: str = "") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *arguments],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, fake_judge: FakeJudge) -> dict[str, str]:
    """A database holding one completed experiment of a judge scorer: its environment, with
    the experiment's id under "ID"."""
    tmp_path = tmp_path_factory.mktemp("startup")
    env = environment(tmp_path)
    env["OPENAI_API_KEY"] = "sk-test-startup"
    data = items_file(tmp_path, ["hello", "hello there", "good morning"])
    command = [
        str(SCRIPT), "run", str(data), "--scorer", JUDGED, "--judge-model", "openai/fake-judge",
        "--api-base", fake_judge.url, "--judge-setting", "num_retries=0", "--no-progress",
    ]  # fmt: skip
    default_responder = fake_judge.responder
    fake_judge.responder = answer_from_schema
    try:
        run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    finally:
        fake_judge.responder = default_responder
        fake_judge.reset()
    assert run.returncode == 0, run.stderr
    return {**env, "ID": experiment_id(run.stdout)}


def test_listing_experiments_imports_no_litellm(judged: dict[str, str]) -> None:
    for arguments in (["experiments"], ["experiments", "--json"]):
        report = child(judged, *arguments)
        assert report["code"] == 0, report
        assert judged["ID"] in report["stdout"]
        assert "litellm" not in report["loaded"], arguments


def test_export_imports_no_litellm(judged: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    report = child(judged, "export", judged["ID"], "--json", "-", "--csv", str(target))
    assert report["code"] == 0, report
    assert judged["ID"] in json.dumps(json.loads(report["stdout"]))
    assert len(target.read_text().splitlines()) >= 4  # a header and the three items
    assert "litellm" not in report["loaded"]


def test_refused_resume_refuses_before_any_judge_key(judged: dict[str, str]) -> None:
    report = child(judged, "resume", judged["ID"])
    assert report["code"] == 2
    assert "is completed: only an experiment stopped part-way" in report["stderr"]
    assert "Judge key" not in report["stdout"]  # no key was resolved
    assert "litellm" not in report["loaded"]


def test_refused_resume_reads_no_key_from_stdin(judged: dict[str, str]) -> None:
    report = child(judged, "resume", judged["ID"], "--api-key-stdin", stdin="")
    assert report["code"] == 2
    assert "is completed" in report["stderr"], report["stderr"]  # not "no key on stdin"
    assert "litellm" not in report["loaded"]


def test_listing_starts_without_the_drawing_and_upload_libraries(judged: dict[str, str]) -> None:
    report = child(judged, "experiments", "--json")
    assert report["code"] == 0
    assert not {"plotly", "pandas", "alembic", "litellm"} & set(report["loaded"])


def test_export_json_sums_the_judge_usage_per_prompt_step(judged: dict[str, str]) -> None:
    report = child(judged, "export", judged["ID"], "--json", "-")
    assert report["code"] == 0, report
    summary = json.loads(report["stdout"])["summary"]
    steps = summary["judgeUsageBySteps"]
    assert {(entry["scorerId"], entry["step"]) for entry in steps} == {
        (JUDGED, "analyze"),
        (JUDGED, "generateReason"),
    }
    assert all(entry["runs"] == 3 and entry["judgeCalls"] == 3 for entry in steps)
    assert sum(entry["judgeCalls"] for entry in steps) == summary["judgeCalls"]
    assert (
        sum(entry["usage"]["inputTokens"] for entry in steps)
        == (summary["judgeUsage"]["inputTokens"])
    )


def test_listing_and_a_refused_resume_read_through_the_driver_alone(
    judged: dict[str, str],
) -> None:
    """The quick path (core/storage/listing.py): no SQLAlchemy, no scorers, no engine."""
    for arguments in (["experiments"], ["experiments", "--json"], ["resume", judged["ID"]]):
        report = child(judged, *arguments)
        assert judged["ID"] in report["stdout"] + report["stderr"], arguments
        for heavy in ("sqlalchemy", "sqlmodel", "alembic", "rich", "rapidfuzz", "litellm"):
            assert heavy not in report["loaded"], (arguments, heavy)


def test_export_json_and_csv_read_through_the_driver_alone(
    judged: dict[str, str], tmp_path: Path
) -> None:
    """The quick export read (core/storage/export_reads.py): no SQLAlchemy, no sqlmodel, no
    Alembic, no drawing library, no litellm, for the JSON and CSV files."""
    target = tmp_path / "out.csv"
    report = child(judged, "export", judged["ID"], "--json", "-", "--csv", str(target))
    assert report["code"] == 0, report
    assert json.loads(report["stdout"])["experimentId"] == judged["ID"]
    assert len(target.read_text().splitlines()) >= 4
    for heavy in ("sqlalchemy", "sqlmodel", "alembic", "plotly", "pandas", "litellm"):
        assert heavy not in report["loaded"], heavy


def test_html_export_imports_no_litellm(judged: dict[str, str], tmp_path: Path) -> None:
    """The report's estimated cost is priced from litellm's bundled table, read as a file
    (core/judge/pricing.py): writing the report never imports litellm."""
    target = tmp_path / "report.html"
    report = child(judged, "export", judged["ID"], "--html", str(target))
    assert report["code"] == 0, report
    page = target.read_text(encoding="utf-8")
    assert "Estimated cost (an estimate, not a bill)" in page
    for heavy in ("litellm", "sqlalchemy", "sqlmodel", "alembic", "plotly"):
        assert heavy not in report["loaded"], heavy


def test_html_export_starts_without_pandas_numpy_or_the_scorers(
    judged: dict[str, str], tmp_path: Path
) -> None:
    """The report is shaped in plain Python (core/reporting/table_rows.py, the SVG charts) and
    its "Compares" column read from the scorers' table (core/scorers/metadata.py): no pandas,
    no NumPy, no scorer module, no engine. The report still has its charts and comparisons."""
    target = tmp_path / "report.html"
    report = child(judged, "export", judged["ID"], "--html", str(target))
    assert report["code"] == 0, report
    page = target.read_text(encoding="utf-8")
    assert '<div class="svg-charts" id="chart-scores"><svg' in page
    assert f"<tr><td>{JUDGED}</td><td>output only</td>" in page  # what the scorer compares
    for heavy in ("pandas", "numpy", "scipy", "plotly", "litellm", "sqlalchemy"):
        assert heavy not in report["loaded"], heavy
    scorers = [name for name in report["core"] if name.startswith("core.scorers.")]
    assert scorers == ["core.scorers.metadata"]
    for room in ("core.scoring", "core.experiments.engine", "core.judge.call"):
        assert room not in report["core"], room
