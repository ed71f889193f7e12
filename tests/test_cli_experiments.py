"""`scorelab experiments` and `scorelab export` end to end (subprocesses): the table and its
JSON, the files of a stored experiment written as `scorelab run` writes them, and the errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_cli import assert_one_line_error, data_file, env, scorelab

__all__ = ["data_file", "env"]  # fixtures, imported for their use here

KEY = "sk-export-canary-8f3a1c77d2"
"""A judge key the exporting process holds (and the experiment's name mentions)."""


def run(env: dict[str, str], data: Path, *more: str | Path) -> subprocess.CompletedProcess[str]:
    completed = scorelab(env, "run", data, "--scorer", "keyword-coverage-scorer", *more)
    assert completed.returncode == 0, completed.stderr
    return completed


def experiment_id(completed: subprocess.CompletedProcess[str]) -> str:
    """The id from the summary's first line, `Experiment ID (NAME): STATUS`."""
    return completed.stdout.split()[1]


def test_experiments_lists_each_one_in_an_aligned_table(
    env: dict[str, str], data_file: Path
) -> None:
    first = experiment_id(run(env, data_file, "--name", "plain"))
    second = experiment_id(run(env, data_file, "--name", "red \x1b[31mtext\x1b[0m"))
    completed = scorelab(env, "experiments")
    assert completed.returncode == 0, completed.stderr
    header, *rows = completed.stdout.splitlines()
    assert header.split() == [
        "id",
        "name",
        "dataset",
        "status",
        "items",
        "succeeded",
        "failed",
        "started",
        "finished",
    ]
    assert len(rows) == 2 and {first, second} == {row.split()[0] for row in rows}
    escaped = next(row for row in rows if row.startswith(second))
    assert "\x1b" not in completed.stdout and "red \\x1b[31mtext\\x1b[0m" in escaped
    for row in rows:  # each column starts where its header does
        for column in ("dataset", "status", "started"):
            start = header.index(column)
            assert row[start - 2 : start] == "  " and row[start] != " ", (column, row)
        assert " completed " in row and "  qa  " in row  # the dataset, named after its file
    # The counts, right-aligned under their headers: 3 items, 3 runs succeeded, none failed.
    for column, value in (("items", "3"), ("succeeded", "3"), ("failed", "0")):
        end = header.index(column) + len(column)
        assert all(row[end - len(value) : end] == value for row in rows), column


def test_experiments_json_is_a_list_of_camel_case_objects(
    env: dict[str, str], data_file: Path
) -> None:
    assert json.loads(scorelab(env, "experiments", "--json").stdout) == []
    made = experiment_id(run(env, data_file, "--name", "listed"))
    (entry,) = json.loads(scorelab(env, "experiments", "--json").stdout)
    from core.service import Service

    service = Service(env["SCORELAB_DATABASE_URL"])
    info = service.get_experiment(made)
    service.store.close()
    assert entry == {
        "id": made,
        "name": "listed",
        "datasetId": info.dataset_id,
        "datasetName": info.dataset_name,
        "status": "completed",
        "items": 3,
        "succeeded": 3,
        "failed": 0,
        "createdAt": info.created_at.isoformat(),
        "startedAt": info.started_at.isoformat() if info.started_at else None,
        "finishedAt": info.finished_at.isoformat() if info.finished_at else None,
    }
    assert entry["finishedAt"] is not None


def test_an_empty_database_says_so(env: dict[str, str]) -> None:
    completed = scorelab(env, "experiments")
    assert completed.returncode == 0 and "No experiments yet" in completed.stdout


def test_export_writes_the_files_run_writes(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    ran = run(env, data_file, "--json", tmp_path / "run.json", "--csv", tmp_path / "run.csv")
    made = experiment_id(ran)
    out = tmp_path / "out"
    out.mkdir()
    completed = scorelab(
        env,
        "export",
        made,
        "--json",
        out / "e.json",
        "--csv",
        out / "e.csv",
        "--html",
        out / "e.html",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "" and completed.stderr == ""
    exported, original = (
        json.loads((where).read_text()) for where in (out / "e.json", tmp_path / "run.json")
    )
    # Only the process that ran the experiment held its failed runs; the file says so.
    assert original["summary"].pop("failuresInMemory") is True
    assert exported["summary"].pop("failuresInMemory") is False
    assert exported == original
    assert (out / "e.csv").read_bytes() == (tmp_path / "run.csv").read_bytes()
    html = (out / "e.html").read_text()
    assert made in html and "default-src 'none'" in html
    assert sorted(p.name for p in out.iterdir()) == ["e.csv", "e.html", "e.json"]  # no temp


def test_export_to_stdout(env: dict[str, str], data_file: Path, tmp_path: Path) -> None:
    made = experiment_id(run(env, data_file, "--json", tmp_path / "run.json"))
    completed = scorelab(env, "export", made, "--json", "-")
    assert completed.returncode == 0, completed.stderr
    exported, original = (
        json.loads(completed.stdout),
        json.loads((tmp_path / "run.json").read_text()),
    )
    assert exported["items"] == original["items"] and exported["name"] == original["name"]
    assert not (Path.cwd() / "-").exists()
    csv_out = scorelab(env, "export", made, "--csv", "-", "--json", tmp_path / "e.json")
    assert csv_out.stdout.startswith("itemId,") and (tmp_path / "e.json").exists()


def test_export_masks_every_key_the_process_holds(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    made = experiment_id(run(env, data_file, "--name", f"leaked {KEY}"))
    holding = {**env, "OPENAI_API_KEY": KEY}
    completed = scorelab(holding, "export", made, "--json", tmp_path / "e.json")
    assert completed.returncode == 0, completed.stderr
    text = (tmp_path / "e.json").read_text()
    assert KEY not in text and json.loads(text)["name"] == "leaked ***"
    listed = scorelab(holding, "experiments", "--json").stdout
    assert KEY not in listed and json.loads(listed)[0]["name"] == "leaked ***"


def test_export_refuses_an_unknown_id_and_bad_usage(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    assert_one_line_error(
        scorelab(env, "export", "no-such-id", "--json", tmp_path / "e.json"),
        "no experiment 'no-such-id'",
        "scorelab experiments",
    )
    assert not (tmp_path / "e.json").exists()
    made = experiment_id(run(env, data_file))
    assert_one_line_error(scorelab(env, "export", made), "nothing to write")
    assert_one_line_error(
        scorelab(env, "export", made, "--json", "-", "--csv", "-"), "only one file can go to stdout"
    )
    assert_one_line_error(
        scorelab(env, "export", made, "--json", tmp_path / "no" / "e.json"), "cannot write it"
    )
    assert_one_line_error(scorelab(env, "export"), "EXPERIMENT_ID")


def test_run_refuses_stdout_for_an_export(env: dict[str, str], data_file: Path) -> None:
    assert_one_line_error(
        scorelab(env, "run", data_file, "--scorer", "tone-scorer", "--json", "-"),
        "prints its summary on stdout",
        "scorelab export",
    )


@pytest.mark.parametrize("command", ["experiments", "export"])
def test_help_names_the_command(env: dict[str, str], command: str) -> None:
    completed = scorelab(env, command, "--help")
    assert completed.returncode == 0 and "--json" in completed.stdout
