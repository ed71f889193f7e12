"""An HTML report made inside a Streamlit session has the report's own colours: Streamlit's
plotly theme (its `#000001`… placeholders) never reaches the charts, which are inline SVG
drawn by core/exchange/svg_charts.py (issue 21)."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from core.exchange.svg_charts import PALETTE


def make_report_in_a_session() -> None:
    from datetime import UTC, datetime

    import plotly.graph_objects as go
    import streamlit as st

    from core.exchange.html import experiment_html
    from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, ScorerOutcome

    st.plotly_chart(go.Figure(go.Bar(x=[1], y=[1])))  # the dashboard's theme is in use
    info = ExperimentInfo(
        id="e",
        name="coloured",
        dataset_id="d",
        dataset_fingerprint="fp",
        scorer_ids=["s"],
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    items = [DatasetItem(id=f"i{n}") for n in range(12)]
    results = [
        ScorerOutcome(item_id=f"i{n}", scorer_id="s", status="success", score=n / 11)
        for n in range(12)
    ]
    detail = ExperimentDetail(
        info=info, items=items, results=results, failures=[], failures_in_memory=True
    )
    st.session_state["report"] = experiment_html(detail)


def test_a_report_made_in_a_streamlit_session_keeps_its_colours() -> None:
    app = AppTest.from_function(make_report_in_a_session, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    report: str = app.session_state["report"]
    charts = report[report.index('<section id="charts">') :]
    colours = set(re.findall(r'(?:fill|stroke)="(#[0-9a-fA-F]{6})"', charts))
    assert PALETTE[0] in colours
    assert colours <= {*PALETTE, "#1f2328", "#59636e", "#d6d9de"}, colours
    assert not re.search(r"#0000[0-9a-f]{2}", report, re.IGNORECASE)  # no theme placeholder
    assert len(charts.split("<rect")) - 1 >= 10  # the histogram's bars drawn
