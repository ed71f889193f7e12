"""`scorelab run`'s judge keys in a real subprocess (scorelab issue 11, points 1 and 7): the
key each server receives (the fake judge records the Authorization header), the "Judge key:"
line printed before the run, keys given without the command line, and an echoed provider key
masked in the output and in every file written."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from key_canary import CANARY, KEY_VARIABLES, ROWS, SCORER, echoing_judge

from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

SCRIPT = Path(sys.executable).with_name("scorelab")
ROOT = Path(__file__).resolve().parents[1]
TYPED = "sk-typed-on-stdin-000042"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: this checkout's code, a fresh database, OPENAI_API_KEY set to
    the canary and no other judge key."""
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    environ = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    return {
        **environ,
        "PYTHONPATH": python_path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": CANARY,
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    path.write_bytes(ROWS)
    return path


def scorelab(
    env: dict[str, str], *arguments: str | Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, arguments)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        input=stdin,
    )


def judge_run(
    env: dict[str, str], data_file: Path, judge: FakeJudge, *extra: str | Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return scorelab(
        env,
        "run",
        data_file,
        "--scorer",
        SCORER,
        "--judge-model",
        "openai/fake-judge",
        "--api-base",
        judge.url,
        "--judge-setting",
        "num_retries=0",
        "--concurrency",
        "1",
        "--no-progress",
        *extra,
        stdin=stdin,
    )


def database_text(tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "cli.db") as connection:
        # Every stored table; the search index's FTS5 table holds no text of its own (its
        # trigrams are in its shadow tables, read here like the others) and cannot be scanned.
        query = (
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
        tables = [row[0] for row in connection.execute(query)]
        return "\n".join(
            repr(row) for table in tables for row in connection.execute(f'SELECT * FROM "{table}"')
        )


def test_a_provider_key_never_reaches_an_untrusted_base(
    env: dict[str, str], data_file: Path, judge_server: FakeJudge
) -> None:
    judge_server.responder = answer_from_schema
    completed = judge_run(env, data_file, judge_server)
    assert completed.returncode == 0, completed.stderr
    assert judge_server.authorizations and set(judge_server.authorizations) == {"Bearer no-key"}
    first = completed.stdout.splitlines()[0]
    assert first.startswith("Judge key: none (the server gets a placeholder); OPENAI_API_KEY")


def test_a_trusted_base_gets_the_provider_key(
    env: dict[str, str], data_file: Path, judge_server: FakeJudge
) -> None:
    judge_server.responder = answer_from_schema
    origin = judge_server.url.removesuffix("/v1")
    env["SCORELAB_TRUSTED_API_BASES"] = origin
    completed = judge_run(env, data_file, judge_server)
    assert completed.returncode == 0, completed.stderr
    assert set(judge_server.authorizations) == {f"Bearer {CANARY}"}
    assert completed.stdout.splitlines()[0] == (
        f"Judge key: OPENAI_API_KEY for {origin} (trusted in SCORELAB_TRUSTED_API_BASES)"
    )


def test_the_scorelab_key_goes_to_the_api_base(
    env: dict[str, str], data_file: Path, judge_server: FakeJudge
) -> None:
    judge_server.responder = answer_from_schema
    env["SCORELAB_JUDGE_API_KEY"] = "sk-scorelab-cli-0042"
    completed = judge_run(env, data_file, judge_server)
    assert completed.returncode == 0, completed.stderr
    assert set(judge_server.authorizations) == {"Bearer sk-scorelab-cli-0042"}
    origin = judge_server.url.removesuffix("/v1")
    assert completed.stdout.splitlines()[0] == f"Judge key: SCORELAB_JUDGE_API_KEY for {origin}"


@pytest.mark.parametrize("how", ["env", "stdin"])
def test_a_key_given_for_the_run_is_sent_and_never_stored(
    env: dict[str, str], data_file: Path, judge_server: FakeJudge, tmp_path: Path, how: str
) -> None:
    judge_server.responder = echoing_judge()  # it echoes the key it gets
    out = tmp_path / "out.json"
    if how == "env":
        env["MY_PROXY_KEY"] = TYPED
        completed = judge_run(
            env, data_file, judge_server, "--api-key-env", "MY_PROXY_KEY", "--json", out
        )
    else:
        completed = judge_run(
            env, data_file, judge_server, "--api-key-stdin", "--json", out, stdin=TYPED + "\n"
        )
    assert completed.returncode == 1, completed.stderr  # two runs failed, as the judge said
    assert set(judge_server.authorizations) == {f"Bearer {TYPED}"}
    origin = judge_server.url.removesuffix("/v1")
    assert completed.stdout.splitlines()[0] == (
        f"Judge key: the one typed here (not stored), sent to {origin}"
    )
    shown = [completed.stdout, completed.stderr, out.read_text(), database_text(tmp_path)]
    assert not [text for text in shown if TYPED in text]


def test_an_echoed_provider_key_is_masked_in_the_output_and_every_file(
    env: dict[str, str], data_file: Path, judge_server: FakeJudge, tmp_path: Path
) -> None:
    env["SCORELAB_TRUSTED_API_BASES"] = judge_server.url.removesuffix("/v1")
    judge_server.responder = echoing_judge()
    files = {kind: tmp_path / f"report.{kind}" for kind in ("json", "html", "csv")}
    options = [part for kind, path in files.items() for part in (f"--{kind}", path)]
    completed = judge_run(env, data_file, judge_server, *options)
    assert completed.returncode == 1, completed.stderr
    assert set(judge_server.authorizations) == {f"Bearer {CANARY}"}  # it did get the key
    texts = {
        "stdout": completed.stdout,
        "stderr": completed.stderr,
        **{kind: path.read_text() for kind, path in files.items()},
        "database": database_text(tmp_path),
    }
    assert {name: CANARY in text for name, text in texts.items()} == dict.fromkeys(texts, False)
    assert "scorelab: warning: 2 scorer run(s) failed" in completed.stderr
    assert "***" in completed.stderr + texts["json"]


def test_help_says_which_key_goes_where(env: dict[str, str]) -> None:
    completed = scorelab(env, "run", "--help")
    assert completed.returncode == 0
    text = " ".join(completed.stdout.split())
    for fragment in (
        "--api-key-env NAME",
        "--api-key-stdin",
        "SCORELAB_TRUSTED_API_BASES",
        "SCORELAB_JUDGE_API_KEY set that key",
        "none: the server gets a placeholder key",
        "Judge key: OPENAI_API_KEY (the provider's own endpoint)",
        "allowed: temperature, top_p",
    ):
        assert fragment in text, fragment


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        (["--api-key-env", "NOT_SET_ANYWHERE"], ["--api-key-env NOT_SET_ANYWHERE: that"]),
        (["--api-key-stdin"], ["--api-key-stdin: standard input holds no key"]),
        (
            ["--judge-setting", "api_key=sk-in-a-setting-00"],
            ["Judge setting 'api_key' is not allowed", "Allowed: temperature"],
        ),
        (
            ["--judge-setting", "vertex_credentials={}"],
            ["Judge setting 'vertex_credentials' is not allowed"],
        ),
    ],
)
def test_bad_key_options_exit_2_with_one_line(
    env: dict[str, str],
    data_file: Path,
    judge_server: FakeJudge,
    arguments: list[str],
    fragments: list[str],
) -> None:
    completed = judge_run(env, data_file, judge_server, *arguments)
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorelab: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "sk-in-a-setting-00" not in completed.stderr
    assert judge_server.call_count == 0


def test_an_api_base_with_a_password_is_refused_without_repeating_it(
    env: dict[str, str], data_file: Path
) -> None:
    completed = scorelab(
        env,
        "run",
        data_file,
        "--scorer",
        SCORER,
        "--judge-model",
        "openai/fake-judge",
        "--api-base",
        "http://lab:hunter2-password@127.0.0.1:9/v1",
    )
    assert completed.returncode == 2
    assert "must not hold a user name or password" in completed.stderr
    assert "hunter2" not in completed.stderr + completed.stdout
