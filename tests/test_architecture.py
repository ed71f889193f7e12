"""The layers hold: `import core` is light and the import contracts pass."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

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


# ---- the contracts have no holes ---------------------------------------------------------

CONTRACT_SOURCES_EXCEPT = {
    "Only core.judge talks to litellm": "core.judge",
    "Only core.storage talks to the database": "core.storage",
}


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _top_level_modules() -> set[str]:
    found = set()
    for path in (ROOT / "core").iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"core.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").exists():
            found.add(f"core.{path.name}")
    return found


@pytest.mark.parametrize("name", sorted(CONTRACT_SOURCES_EXCEPT))
def test_the_forbidden_contracts_cover_every_other_module_of_core(name: str) -> None:
    contract = _contracts()[name]
    assert contract.get("as_packages") is False  # so the root package is a module of its own
    expected = {"core"}
    for module in _top_level_modules() - {CONTRACT_SOURCES_EXCEPT[name]}:
        expected.add(module)
        if (ROOT / module.replace(".", "/")).is_dir():
            expected.add(f"{module}.**")
    assert set(contract["source_modules"]) == expected


PAGES_MAY_IMPORT = {
    "core.service",
    "core.records",
    "core.run_results",
    "core.record_base",
    "core.errors",
}


def test_the_pages_contract_forbids_every_other_module_of_core() -> None:
    (contract,) = [c for n, c in _contracts().items() if n.startswith("Pages reach the core")]
    assert contract.get("as_packages") is False  # so `from core import ...` is caught
    assert set(contract["source_modules"]) == {"pages", "pages.**"}
    expected = {"core"}
    for module in _top_level_modules() - PAGES_MAY_IMPORT:
        expected.add(module)
        if (ROOT / module.replace(".", "/")).is_dir():
            expected.add(f"{module}.**")
    forbidden = {m for m in contract["forbidden_modules"] if m == "core" or m.startswith("core.")}
    assert forbidden == expected
    assert {"sqlmodel", "sqlalchemy", "litellm"} <= set(contract["forbidden_modules"])


def test_the_cli_contract_forbids_every_other_module_of_core() -> None:
    """The CLI may import what pages may (core.service, the records, core.errors) and itself."""
    (contract,) = [c for n, c in _contracts().items() if n.startswith("The CLI reaches the core")]
    assert contract.get("as_packages") is False  # so `from core import ...` is caught
    assert set(contract["source_modules"]) == {"core.cli", "core.cli.**"}
    expected = {"core"}
    for module in _top_level_modules() - PAGES_MAY_IMPORT - {"core.cli"}:
        expected.add(module)
        if (ROOT / module.replace(".", "/")).is_dir():
            expected.add(f"{module}.**")
    forbidden = {m for m in contract["forbidden_modules"] if m == "core" or m.startswith("core.")}
    assert forbidden == expected
    assert {"sqlmodel", "sqlalchemy", "litellm"} <= set(contract["forbidden_modules"])


BREAKS = [
    ("The core never imports Streamlit", "core/scorers/bias.py", "import streamlit"),
    ("Only core.judge talks to litellm", "core/scorers/bias.py", "import litellm"),
    ("Only core.judge talks to litellm", "core/__init__.py", "import litellm"),
    ("Only core.judge talks to litellm", "core/_sync.py", "import openai"),
    ("Only core.storage talks to the database", "core/reporting/tables.py", "import sqlalchemy"),
    ("Only the Ray backend talks to Ray", "core/experiments/jobs.py", "import ray"),
    ("Layers of the core, top to bottom", "core/scoring/scorer.py", "import core.service"),
    ("Pages reach the core through core.service", "pages/home.py", "import core.storage"),
    ("The CLI reaches the core through core.service", "core/cli/run.py", "import core.reporting"),
    (
        "The CLI reaches the core through core.service",
        "core/cli/_progress.py",
        "from core.experiments.engine import MAX_CONCURRENCY",
    ),
    (
        "Pages reach the core through core.service",
        "pages/home.py",
        "from core import create_scorer",
    ),
    ("Pages reach the core through core.service", "pages/ui/text.py", "import core.judge.secrets"),
    (
        "Pages reach the core through core.service",
        "pages/scorers.py",
        "import core.dashboard_access",
    ),
    (
        "Dataset import: the pipeline on top",
        "core/datasets/_cell_values.py",
        "import core.datasets.upload",
    ),
    (
        "Dataset import reads tables into records",
        "core/datasets/library.py",
        "import core.testing.fake_judge",
    ),
    ("What crosses the border runs no scorer", "core/exchange/exports.py", "import core.scorers"),
    ("Records by subject", "core/records/datasets.py", "import core.records.experiments"),
]


@pytest.mark.parametrize(("contract", "path", "line"), BREAKS)
def test_each_contract_fails_when_broken(
    tmp_path: Path, contract: str, path: str, line: str
) -> None:
    """A forbidden import planted in a copy of the code breaks the contract meant to stop it."""
    for name in ("core", "pages"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / path
    target.write_text(target.read_text() + f"\n{line}  # planted by the test\n")
    lint_imports = Path(sys.executable).with_name("lint-imports")
    completed = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert completed.returncode != 0, completed.stdout
    (name,) = [n for n in _contracts() if n.startswith(contract)]
    summary = " ".join(completed.stdout.split())  # long names wrap in the report
    assert f"{name} BROKEN" in summary, completed.stdout
    others = [n for n in _contracts() if n != name]
    assert all(f"{n} KEPT" in summary for n in others), completed.stdout  # only that one
