"""Mastra stores made by Mastra itself: `store_maker/make_store.mjs` run with node against the
pinned `@mastra/*` packages (`store_maker/package-lock.json`; `make test` runs `npm ci` there),
its judge scorer answered by scorelab's fake judge (streamed, as Mastra's judge asks).

Without node or the installed packages the tests here are skipped with a message, except in CI
(CI=true), where that is an error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.testing.fake_judge import FakeJudge, answer_from_schema

MAKER = Path(__file__).parent / "store_maker"


def node_ready() -> str | None:
    """Why the Mastra store maker cannot run here (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (make test installs it with .ci/mastra.sh)"
    if not (MAKER / "node_modules" / "@mastra" / "core").is_dir():
        return f"the Mastra packages are not installed: run `npm ci` in {MAKER}"
    return None


@dataclass(frozen=True)
class MadeStore:
    """A Mastra store the maker wrote, and what it printed about it."""

    location: str
    path: Path | None
    summary: dict[str, Any]


@pytest.fixture(scope="session")
def mastra_judge() -> Iterator[FakeJudge]:
    """A fake judge answering every judge step validly (from the schema each asks for)."""
    judge = FakeJudge(answer_from_schema).start()
    try:
        yield judge
    finally:
        judge.stop()


def make_store(location: str, judge: FakeJudge, items: int | None = None) -> dict[str, Any]:
    """Run the maker against `location` (file:PATH or a PostgreSQL URL); its summary."""
    reason = node_ready()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the Mastra store maker: {reason}")
        pytest.skip(reason)
    command = ["node", "make_store.mjs", "--store", location, "--judge", judge.url]
    if items is not None:
        command += ["--items", str(items)]
    done = subprocess.run(
        command, cwd=MAKER, capture_output=True, text=True, timeout=240, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"make_store.mjs failed:\n{done.stdout}\n{done.stderr}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


@pytest.fixture(scope="session")
def made_store(tmp_path_factory: pytest.TempPathFactory, mastra_judge: FakeJudge) -> MadeStore:
    """One LibSQL store made once per session (copy it before changing it: `store_copy`)."""
    path = tmp_path_factory.mktemp("mastra") / "mastra.db"
    summary = make_store(f"file:{path}", mastra_judge)
    checkpoint(path)
    return MadeStore(f"file:{path}", path, summary)


def checkpoint(path: Path) -> None:
    """Fold the file's write-ahead log into it (Mastra's node process exits without doing so),
    so that copying the one file copies the whole store."""
    import apsw

    connection = apsw.Connection(str(path))
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        connection.close()


@pytest.fixture
def store_copy(made_store: MadeStore, tmp_path: Path) -> MadeStore:
    """A copy of the session's store that a test may change."""
    assert made_store.path is not None
    target = tmp_path / "copy.db"
    shutil.copyfile(made_store.path, target)
    return MadeStore(f"file:{target}", target, made_store.summary)
