"""The layers hold: `import core` is light and the import contracts pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_core_loads_neither_litellm_nor_streamlit() -> None:
    heavy = ("litellm", "streamlit", "sqlmodel", "openai")
    probe = f"import sys, core; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    output = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"


def test_import_contracts_pass() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    completed = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "broken" not in completed.stdout.split("Contracts:")[-1].split("kept")[0]
