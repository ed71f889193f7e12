"""Pass/fail on the experiment page: thresholds set in the form are kept with the experiment,
the verdict and the pass rate show above the grid, and the grid has a ✓/✗ column."""

from __future__ import annotations

from grid_rows import grid  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec

DATA = b"id,question,answer\na,q,right\nb,q,right\nc,q,right\nd,q,wrong\n"


def test_thresholds_set_on_the_page(app: AppTest) -> None:
    service = core.service.get_service()
    dataset = service.import_dataset("pf.csv", DATA)
    started = service.start_experiment(
        ExperimentConfig(
            name="pf",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "r"})
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    app.query_params["experiment"] = started
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    assert not [s for s in app.success if "Passed" in s.value]  # no threshold yet
    # The thresholds' editor is shut: its fields not drawn.
    assert not [n for n in app.number_input if (n.key or "").startswith("experiment.pass.")]
    app.session_state["experiment.pass.open"] = True  # a click on its expander
    app.run()
    app.number_input(key="experiment.pass.min.r").set_value(0.8)
    app.button(key="FormSubmitter:experiment.pass.form-Save thresholds").click()
    app.run()
    assert not app.exception, app.exception
    assert core.service.get_service().thresholds(started)["r"].min == 0.8
    (said,) = [e.value for e in app.error if "Failed" in e.value]
    assert "pass rate 75.0% of items" in said and "0.750" in said
    table = grid(app).value
    marks = dict(zip(table["item_id"], table["pass"], strict=True))
    assert [c["kind"] for c in grid(app).data["columns"]][:2] == ["score", "mark"]
    assert marks == {"a": "✓", "b": "✓", "c": "✓", "d": "✗"}
    app.number_input(key="experiment.pass.min.r").set_value(0.7)
    app.button(key="FormSubmitter:experiment.pass.form-Save thresholds").click()
    app.run()
    assert any("Passed" in s.value for s in app.success)
