"""AppTest fixtures: the dashboard on a fresh SQLite database per test, with the sample data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import core.service

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process-wide service on an empty database (the dashboard imports the samples)."""
    monkeypatch.setenv("SCORELAB_DATABASE_URL", f"sqlite:///{tmp_path / 'scorelab.db'}")
    monkeypatch.setattr(core.service, "_service", None)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def app(fresh_service: None) -> AppTest:
    """The dashboard, first run done."""
    test = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    test.run()
    assert not test.exception, test.exception
    return test
