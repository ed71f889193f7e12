"""The Datasets page's "Open a Mastra store" section (pages/ui/mastra.py), through AppTest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from mastra_maker import MadeStore
from streamlit.testing.v1 import AppTest

import core.service

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("SCORELAB_DATABASE_URL", f"sqlite:///{tmp_path / 'scorelab.db'}")
    monkeypatch.setattr(core.service, "_service", None)
    st.cache_resource.clear()
    test = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    test.run()
    test.switch_page("pages/datasets.py")
    test.run()
    assert not test.exception, test.exception
    yield test
    st.cache_resource.clear()


def open_store(app: AppTest, location: str) -> None:
    app.text_input(key="datasets.mastra.location").set_value(location)
    next(b for b in app.button if b.label == "Open").click()
    app.run()
    assert not app.exception, app.exception


def test_open_a_mastra_store_then_import_the_chosen_ones(
    app: AppTest, made_store: MadeStore
) -> None:
    open_store(app, made_store.location)
    table = next(d.value for d in app.dataframe if "Kind" in d.value.columns)
    rows = {(r.Kind, r.Name): r for r in table.itertuples()}
    assert rows[("dataset", "truthfulqa-sample")].Items == made_store.summary["items"]
    assert rows[("experiment", "baseline answers")].Scores == 4 * made_store.summary["items"]
    assert rows[("live agent", "qa-agent")].Scores == 1
    experiments = app.multiselect(key="datasets.mastra.experiments")
    experiments.set_value(made_store.summary["experiments"][:1])
    app.run()
    next(b for b in app.button if b.label == "Import the chosen ones").click()
    app.run()
    assert not app.exception, app.exception
    assert any("2 new experiments" in s.value for s in app.success)  # and the live one
    names = {e.name for e in core.service.get_service().list_experiments()}
    assert names == {"baseline answers", "Live scores of agent qa-agent"}
    next(b for b in app.button if b.label == "Import the chosen ones").click()
    app.run()
    assert any("0 new experiments" in s.value and "0 scores" in s.value for s in app.success)


def test_a_bad_store_is_an_error_on_the_page(app: AppTest, tmp_path: Path) -> None:
    open_store(app, str(tmp_path / "nothing.db"))
    assert any("does not exist" in e.value for e in app.error)
    assert not any(b.label == "Import the chosen ones" for b in app.button)
