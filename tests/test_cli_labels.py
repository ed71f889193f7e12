"""`scorelab run --label-column`: the column is checked before anything runs (one line, exit 2,
naming the column or the item), and after the run each scorer's agreement with the labels is
printed and written to the JSON and HTML outputs. Code scorers only: no judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("scorelab")
# checks.includes "right" gives 1 to q1, q2, q4, q6 and q7 and 0 to q3 and q5.
ROWS = (
    "id,question,answer,expected,answer_is_correct,topic\n"
    "q1,Q1,right answer,r,yes,a\n"
    "q2,Q2,right again,r,TRUE,a\n"
    "q3,Q3,wrong answer,r,no,b\n"
    "q4,Q4,right-ish but wrong,r,0,b\n"
    "q5,Q5,wrong again,r,False,c\n"
    "q6,Q6,right,r,1,c\n"
    "q7,Q7,right maybe,r,,c\n"
)
# Labelled: q1..q6. Positives (yes/TRUE/1): q1, q2, q6, all scored 1. Negatives: q3, q5
# scored 0 and q4 scored 1. Pairs: 3 positives x 3 negatives, ties with q4 count one half:
# AUC = (3 * 2 + 3 * 0.5) / 9 = 7.5 / 9. At threshold 1: tp 3, fp 1, tn 2, fn 0; J = 1 - 1/3.
AUC = 7.5 / 9


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(ROOT),  # the checkout under test, whichever one is installed
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "labelled.csv"
    path.write_text(ROWS)
    return path


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


def experiment_count(env: dict[str, str]) -> int:
    from core.service import Service

    service = Service(env["SCORELAB_DATABASE_URL"])
    try:
        return len(service.list_experiments())
    finally:
        service.store.close()


def test_agreement_is_printed_and_written(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    completed = scorelab(
        env,
        "run",
        data_file,
        "--scorer",
        'checks.includes={"value": "right", "id": "has-right"}',
        "--scorer",
        'checks.includes={"value": "zzz", "id": "has-zzz"}',
        "--label-column",
        "answer_is_correct",
        "--json",
        tmp_path / "r.json",
        "--html",
        tmp_path / "r.html",
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert (
        "  labels from column 'answer_is_correct': 6 items labelled, 1 without a label "
        "(left out)" in lines
    )
    report = json.loads((tmp_path / "r.json").read_text())
    agreement = report["labelAgreement"]
    assert list(agreement) == ["has-right", "has-zzz"]
    informative, constant = agreement["has-right"], agreement["has-zzz"]
    assert informative["n"] == 6 and informative["leftOutNoLabel"] == 1
    assert informative["auc"] == pytest.approx(AUC)
    assert informative["aucLow"] <= informative["auc"] <= informative["aucHigh"]
    assert informative["threshold"] == 1.0
    assert informative["youdenJ"] == pytest.approx(2 / 3)
    assert informative["confusion"] == {"tp": 3, "fp": 1, "tn": 2, "fn": 0}
    assert constant["defined"] is False and "same score (0)" in constant["reason"]
    assert report["summary"]["labelAgreement"]["labelColumn"] == "answer_is_correct"

    first = next(line for line in lines if line.startswith("  has-right: label agreement"))
    assert first.startswith(f"  has-right: label agreement (n=6): AUC {AUC:.2f} [")
    assert f"· at threshold 1 (J 0.67): kappa {informative['kappa']:.2f}" in first
    assert "tp/fp/tn/fn 3/1/2/0 · left out: 1 without a label" in first
    second = next(line for line in lines if line.startswith("  has-zzz: label agreement"))
    assert "not defined: the scorer gave every item the same score (0)" in second

    html = (tmp_path / "r.html").read_text()
    assert '<section id="labels"><h2>Agreement with labels</h2>' in html
    assert "answer_is_correct" in html.split('<section id="labels">')[1]


def test_without_the_flag_nothing_about_labels(env: dict[str, str], data_file: Path) -> None:
    completed = scorelab(env, "run", data_file, "--scorer", "tone-scorer")
    assert completed.returncode == 0, completed.stderr
    assert "label agreement" not in completed.stdout


def test_a_bad_label_column_is_refused_before_running(
    env: dict[str, str], data_file: Path, tmp_path: Path
) -> None:
    run = ("run", data_file, "--scorer", "tone-scorer", "--label-column")
    missing = one_line_error(scorelab(env, *run, "nope"))
    assert "labelled.csv: --label-column 'nope': no such column (columns: id, question" in missing
    role = one_line_error(scorelab(env, *run, "answer"))
    assert "--label-column 'answer': it is the output column" in role
    bad = tmp_path / "bad.csv"
    bad.write_text(ROWS.replace("q5,Q5,wrong again,r,False", "q5,Q5,wrong again,r,maybe"))
    value = one_line_error(
        scorelab(env, "run", bad, "--scorer", "tone-scorer", "--label-column", "answer_is_correct")
    )
    assert (
        "bad.csv: --label-column 'answer_is_correct': item 'q5' (row 5): the text 'maybe' is "
        "not a label" in value
    )
    words = one_line_error(scorelab(env, *run, "topic"))
    assert "item 'q1' (row 1): the text 'a' is not a label" in words
    assert experiment_count(env) == 0  # nothing ran


def test_the_verdict_is_printed(env: dict[str, str], tmp_path: Path) -> None:
    rows = ["id,question,answer,expected,ok"]
    rows += [f"r{n},Q,right {n},r,yes" for n in range(4)]
    rows += [f"w{n},Q,wrong {n},r,no" for n in range(4)]
    path = tmp_path / "verdict.csv"
    path.write_text("\n".join(rows) + "\n")
    completed = scorelab(
        env,
        "run",
        path,
        "--scorer",
        'checks.includes={"value": "right", "id": "perfect"}',
        "--scorer",
        'checks.includes={"value": "wrong", "id": "inverted"}',
        "--label-column",
        "ok",
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    perfect = next(line for line in lines if line.startswith("  perfect: label agreement"))
    assert perfect.endswith("· verdict: separates")
    inverted = next(line for line in lines if line.startswith("  inverted: label agreement"))
    assert inverted.endswith("· verdict: inverted")
    verdict = next(line for line in lines if line.startswith("  verdict: "))
    assert "1 of 2 scorers separates the labels" in verdict and "perfect (AUC 1.00)" in verdict
    assert "Ranks wrong answers higher (the interval below 0.5): inverted (AUC 0.00)" in verdict
