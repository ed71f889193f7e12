"""What the tests of `scorelab resume` and of the spend options share: the console script run
in a subprocess on this checkout's code, a JSONL file of items, a judge scorer whose calls per
item the catalog says, and readers of what the command printed and stored."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).with_name("scorelab")
ROOT = Path(__file__).resolve().parents[1]
JUDGED = "toxicity-scorer"
"""A catalog scorer with LLM-judge steps (the fake judge answers them from their schema)."""


def environment(tmp_path: Path) -> dict[str, str]:
    """The console script's environment: this checkout's `core` first, a database and a judge
    cache of the test's own."""
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": python_path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "SCORELAB_JUDGE_CACHE": str(tmp_path / "judge-cache"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def scorelab(
    env: dict[str, str], *arguments: str | Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, arguments)],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
    )


def items_file(tmp_path: Path, outputs: list[str]) -> Path:
    path = tmp_path / "items.jsonl"
    rows = [{"id": f"i{n}", "input": "Say hello", "output": o} for n, o in enumerate(outputs)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def judge_calls_per_item(scorer_id: str = JUDGED) -> int:
    """The judge calls one item costs the scorer, as the catalog counts its prompt steps."""
    from core.records import ScorerSpec
    from core.scorers import PREBUILT
    from core.scorers.catalog import ScorerCatalog

    calls = ScorerCatalog(PREBUILT).judge_calls_per_item([ScorerSpec(scorer_id=scorer_id)])
    assert calls > 0
    return calls


def experiment_id(stdout: str) -> str:
    """The id in the summary's first line, `Experiment ID (NAME): STATUS`."""
    found = re.search(r"^Experiment (\S+) \(", stdout, re.MULTILINE)
    assert found, stdout
    return found.group(1)


def experiments(env: dict[str, str]) -> list[dict[str, Any]]:
    """`scorelab experiments --json`."""
    listed = scorelab(env, "experiments", "--json")
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


def assert_one_line_error(completed: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert completed.returncode == 2, (completed.stdout, completed.stderr)
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorelab: error: "), completed.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
