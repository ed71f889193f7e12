"""core.reporting's names are imported on first use: each one is what it names, whichever of
its submodules was imported first (a fresh interpreter per case)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import core.reporting


@pytest.mark.parametrize("first", ["core.reporting.compare", "core.reporting.tables"])
def test_every_name_is_itself_after_a_submodule_import(first: str) -> None:
    code = (
        f"import {first}\n"
        "import types, core.reporting as r\n"
        "bad = [n for n in r.__all__ if isinstance(getattr(r, n), types.ModuleType)]\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_compare_is_the_function() -> None:
    module = importlib.import_module("core.reporting.compare")
    assert core.reporting.compare is module.compare
    assert callable(core.reporting.compare)
