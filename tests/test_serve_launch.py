"""`scorelab serve` starts Streamlit with the legacy file-based pages off (the `pages/` folder
beside app.py would otherwise show Streamlit's own page list on a fresh server's first paint),
and the project's settings (no file watcher) apply from any folder it is started in."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager

from core.cli import serve

ROOT = Path(__file__).resolve().parents[1]


def test_serve_runs_streamlit_through_the_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[list[str]] = []
    monkeypatch.setattr(serve.subprocess, "call", lambda command, env: called.append(command) or 0)
    arguments = argparse.Namespace(database_url=None, streamlit_args=["--server.port", "8999"])
    assert serve._serve(arguments) == 0
    (command,) = called
    assert command[:3] == [sys.executable, "-c", serve.STREAMLIT_MAIN]
    assert command[3:5] == ["run", str(ROOT / "app.py")]
    assert command[-2:] == ["--server.port", "8999"]


def test_the_launcher_turns_the_legacy_pages_off_before_streamlit_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import streamlit.web.cli

    seen: list[bool | None] = []

    def fake_main(prog_name: str) -> int:
        seen.append(PagesManager.uses_pages_directory)
        # A session's pages manager, as the server makes one: it must not switch it back on.
        PagesManager(str(ROOT / "app.py"))
        seen.append(PagesManager.uses_pages_directory)
        return 0

    monkeypatch.setattr(streamlit.web.cli, "main", fake_main)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    with pytest.raises(SystemExit) as stopped:
        exec(serve.STREAMLIT_MAIN, {})
    assert stopped.value.code == 0
    assert seen == [False, False]


def test_no_file_watcher_when_started_from_another_folder(tmp_path: Path) -> None:
    """Streamlit reads the app's own .streamlit/config.toml, whatever the working folder."""
    probe = (
        "from streamlit import config\n"
        f"config._main_script_path = {str(ROOT / 'app.py')!r}\n"
        "config.get_config_options(force_reparse=True)\n"
        "print(config.get_option('server.fileWatcherType'), config.get_option('server.runOnSave'))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == ["none", "False"]
