"""Every URL parameter of every page, fed hostile values (issue 19, hostile finding 2): a link
that is not a number, is huge, negative, NaN or infinite, unicode, a control character, an
id of another experiment or of nothing, is parsed, clamped or ignored, and the page draws
without an exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from grid_rows import grid  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    f"pages/{path.name}" for path in (ROOT / "pages").glob("*.py") if path.name != "__init__.py"
)
PARAMS = [
    # experiment page: the grid, its filters, the drill-down, slices, the label column
    "experiment", "scorer", "min", "max", "failed", "q", "sort", "page", "hide", "mcol", "mval",
    "item", "slice", "label", "tab",
    # compare, review
    "baseline", "candidates", "vs", "pos",
]  # fmt: skip
HOSTILE = [
    "x",
    "1e309",
    "-1e309",
    "NaN",
    "inf",
    "-5",
    "99999999999999999999",
    "9" * 5000,
    "0.5,0.7",
    "",
    "日本語\u202e:material/bolt:",
    "a\x00b",
    "'; DROP TABLE experiments; --",
    "asc:nope",
]


@pytest.fixture
def experiments(app: AppTest) -> tuple[str, str]:
    service = core.service.get_service()
    data = b"id,question,answer,category\n" + b"".join(
        b"i%d,question %d,right answer %d,c%d\n" % (n, n, n, n % 2) for n in range(6)
    )
    dataset = service.import_dataset("u.csv", data)
    spec = ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
    ids = []
    for name in ("one", "two"):
        started = service.start_experiment(
            ExperimentConfig(name=name, dataset_id=dataset.id, scorers=[spec])
        )
        assert service.wait(started, timeout=60).status == "completed"
        ids.append(started)
    return ids[0], ids[1]


def visit_every_page(params: dict[str, str]) -> None:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for page in PAGES:
        app.query_params.clear()
        for name, value in params.items():
            app.query_params[name] = value
        app.switch_page(page)
        app.run()
        assert not app.exception, (page, params, app.exception)


@pytest.mark.parametrize("value", HOSTILE)
def test_every_parameter_of_every_page_takes_a_hostile_value(
    experiments: tuple[str, str], value: str
) -> None:
    one, _two = experiments
    visit_every_page({"experiment": one, **{name: value for name in PARAMS[1:]}})


def test_ids_of_other_or_no_experiments_are_ignored(experiments: tuple[str, str]) -> None:
    one, two = experiments
    # The experiment page of one, with parameters naming the other experiment and its items.
    visit_every_page(
        {name: two for name in PARAMS} | {"experiment": one, "baseline": two, "candidates": one}
    )
    for value in ("nope", "x" * 5000, "", f"{one},{two},{one}"):
        visit_every_page({name: value for name in PARAMS})


def test_a_column_named_with_quotes_slices_and_filters_on_the_page(app: AppTest) -> None:
    """Issue 19, hostile finding 4: a column named `a"b` is accepted at import, and the
    experiment page slices and filters by it (the link names it) without an error."""
    service = core.service.get_service()
    column = 'a"b'
    data = b'id,question,answer,"a""b"\n' + b"".join(
        b"i%d,question %d,right answer %d,v%d\n" % (n, n, n, n % 2) for n in range(6)
    )
    dataset = service.import_dataset("quoted.csv", data)
    spec = ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
    started = service.start_experiment(ExperimentConfig(dataset_id=dataset.id, scorers=[spec]))
    assert service.wait(started, timeout=60).status == "completed"
    assert column in service.metadata_columns(started)
    assert {s.value: s.items for s in service.slices(started, column)} == {"v0": 3, "v1": 3}
    app.query_params["experiment"] = started
    app.query_params["slice"] = column
    app.query_params["mcol"] = column
    app.query_params["mval"] = ["v1"]
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]


def test_bidi_controls_do_not_reach_the_grid_or_the_drill_down(app: AppTest) -> None:
    """Issue 19, hostile finding 3: a right-to-left override in an item's id, texts and
    metadata is shown as its escape in the grid's cells and the drill-down."""
    service = core.service.get_service()
    spoof = "invoice\u202efdp.exe"
    data = (
        "id,question,answer,category\n"
        + "".join(f"{spoof}{n},{spoof} q,right {spoof},{spoof}\n" for n in range(3))
    ).encode()
    dataset = service.import_dataset("bidi.csv", data)
    spec = ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
    started = service.start_experiment(ExperimentConfig(dataset_id=dataset.id, scorers=[spec]))
    assert service.wait(started, timeout=60).status == "completed"
    app.query_params["experiment"] = started
    app.query_params["item"] = f"{spoof}0"
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    table = grid(app).value
    cells = " ".join(str(v) for v in table.to_numpy().ravel())
    assert "\u202e" not in cells and "invoice\\u202efdp.exe" in cells
    shown = " ".join(str(e.value) for e in [*app.markdown, *app.code, *app.caption])
    assert "\u202e" not in shown
    assert "invoice\\u202efdp.exe" in shown.replace("\\\\", "\\")
