"""The pages' widgets, each alone in an AppTest script of its own (AppTest.from_function): the
scorer option inputs, the label-column picker, the experiment filters, the dataset mapping form.

Each script imports its widget from the page module; importing a page draws nothing (the
router runs its `main()`), so only the widget is on screen. A script function runs as the
source of its own file, without this module's imports: its annotations use builtins only."""

from __future__ import annotations

from typing import Any

import pytest
from grid_rows import open_filters  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ResultQuery, ScorerCatalogEntry

PAYLOAD_COLUMN = "[x](http://example.com) :red[warning] $x^2$"


def entry(scorer_id: str) -> ScorerCatalogEntry:
    return next(e for e in core.service.scorer_catalog() if e.id == scorer_id)


# ---- pages/ui/options.py ----


def options_app(entry: object, preset: object) -> None:
    import streamlit as st

    from pages.ui.options import option_inputs

    options, problems = option_inputs(entry, "t", preset)
    st.session_state["options"] = options
    st.session_state["problems"] = problems


def run_options(scorer_id: str, preset: dict[str, Any] | None = None) -> AppTest:
    app = AppTest.from_function(options_app, args=(entry(scorer_id), preset), default_timeout=30)
    app.run()
    assert not app.exception, app.exception
    return app


def test_a_choice_option_is_a_selectbox_of_its_choices() -> None:
    app = run_options("keyword-coverage-scorer")
    (box,) = app.selectbox
    assert box.label == "reference"
    assert box.options == ["input", "ground_truth"]
    assert box.value == "input"  # the catalog's default
    assert app.session_state["options"] == {}  # the default is not repeated
    box.set_value("ground_truth")
    app.run()
    assert app.session_state["options"] == {"reference": "ground_truth"}
    assert app.session_state["problems"] == []


def test_a_preset_starts_the_choice_and_counts_as_chosen() -> None:
    app = run_options("keyword-coverage-scorer", {"reference": "ground_truth"})
    assert app.selectbox[0].value == "ground_truth"
    assert app.session_state["options"] == {"reference": "ground_truth"}


def test_each_option_type_gets_its_widget() -> None:
    app = run_options("content-similarity-scorer")
    assert [b.label for b in app.selectbox] == ["reference"]
    assert [c.label for c in app.checkbox] == ["ignore_case", "ignore_whitespace"]
    app.checkbox(key="t.content-similarity-scorer.ignore_case").uncheck()
    app.run()
    assert app.session_state["options"] == {"ignore_case": False}


def test_a_bad_regex_is_a_problem_not_an_option() -> None:
    app = run_options("checks.matches")
    app.text_input(key="t.checks.matches.pattern").input("([unclosed")
    app.run()
    assert app.session_state["options"] == {}
    (problem,) = app.session_state["problems"]
    assert problem.startswith("Check: matches · pattern: not a valid regular expression")


def test_lists_are_one_per_line_and_json_is_checked() -> None:
    app = run_options("faithfulness-scorer")
    app.text_area(key="t.faithfulness-scorer.context").input("first fact\n\n second fact \n")
    app.run()
    assert app.session_state["options"]["context"] == ["first fact", "second fact"]
    app = run_options("context-relevance-scorer")
    app.text_area(key="t.context-relevance-scorer.penalties").input("{not json")
    app.run()
    assert any("not valid JSON (line 1" in p for p in app.session_state["problems"])


def test_code_only_options_get_no_widget() -> None:
    app = run_options("hallucination-scorer")
    keys = [w.key for w in [*app.text_area, *app.number_input]]
    assert "t.hallucination-scorer.get_context" not in keys
    assert "t.hallucination-scorer.context" in keys


# ---- pages/experiment.py: the label-column picker ----


def label_app(columns: list[str]) -> None:
    import streamlit as st

    from pages.experiment import pick_label_column

    st.session_state["chosen"] = pick_label_column(columns)


def run_label(columns: list[str], **params: str) -> AppTest:
    app = AppTest.from_function(label_app, args=(columns,), default_timeout=30)
    for name, value in params.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception, app.exception
    return app


def url(app: AppTest, name: str) -> Any:
    value = app.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_the_label_column_named_like_a_verdict_is_preselected_and_put_in_the_url() -> None:
    app = run_label(["topic", "Human verdict", "grader_score"])
    assert app.selectbox[0].options == ["none", "topic", "Human verdict", "grader_score"]
    assert app.session_state["chosen"] == "Human verdict"
    assert url(app, "label") == "Human verdict"


def test_the_url_chooses_the_label_column_or_none() -> None:
    assert run_label(["topic", "verdict"], label="topic").session_state["chosen"] == "topic"
    assert run_label(["topic", "verdict"], label="").session_state["chosen"] is None
    unknown = run_label(["topic", "verdict"], label="gone")
    assert unknown.session_state["chosen"] == "verdict"  # the suggestion, as without a link


def test_picking_a_label_column_writes_the_url_and_a_payload_name_stays_as_is() -> None:
    app = run_label(["topic", PAYLOAD_COLUMN])
    assert app.session_state["chosen"] is None  # nothing is named like a label
    assert PAYLOAD_COLUMN in app.selectbox[0].options  # option labels are plain text
    app.selectbox[0].set_value(PAYLOAD_COLUMN)
    app.run()
    assert app.session_state["chosen"] == PAYLOAD_COLUMN
    assert url(app, "label") == PAYLOAD_COLUMN
    app.selectbox[0].set_value(None)
    app.run()
    assert app.session_state["chosen"] is None and url(app, "label") == ""


# ---- pages/ui/grid.py: the filters ----


def filters_app(scorer_ids: list[str]) -> None:
    import streamlit as st

    from pages.ui.grid_filters import render_filters

    # No experiment: no metadata filter (its values are read from the experiment).
    st.session_state["filters"] = render_filters(scorer_ids, [])


def run_filters(**params: str) -> AppTest:
    app = AppTest.from_function(filters_app, args=(["tone", "overlap"],), default_timeout=30)
    for name, value in params.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception, app.exception
    return app


def test_the_filters_start_open_and_say_so_in_the_url() -> None:
    app = run_filters()
    query = app.session_state["filters"]
    assert query == ResultQuery(page=1, page_size=50)
    assert query.scorer_ids == [] and query.score_range is None and not query.failed_only
    assert url(app, "min") == "0" and url(app, "max") == "1" and url(app, "failed") == "0"
    assert url(app, "sort") == "position" and url(app, "page") == "1"


def test_the_filters_come_from_a_link() -> None:
    app = run_filters(
        scorer="overlap,unknown",
        min="0.25",
        max="0.5",
        failed="1",
        q="paris",
        sort="desc:tone",
        page="3",
    )
    query = app.session_state["filters"]
    assert query.scorer_ids == ["overlap"]  # an unknown scorer in the link is dropped
    assert query.score_range == (0.25, 0.5)
    assert query.failed_only and query.search == "paris"
    assert (query.sort, query.sort_scorer, query.page) == ("score_desc", "tone", 3)


def filtered(app: AppTest) -> str | None:
    """What the shut "Filters" box says it filters (None: nothing said)."""
    said = [c.value for c in app.caption if c.value.startswith("Filtered: ")]
    return said[0].removeprefix("Filtered: ") if said else None


def test_the_filters_box_starts_shut_and_says_what_it_filters() -> None:
    app = run_filters()
    assert [e.label for e in app.expander] == ["Filters"] and filtered(app) is None
    assert not app.slider and not app.checkbox  # its widgets drawn only when open
    app = run_filters(scorer="overlap,unknown", min="0.25", max="0.5", failed="1")
    assert filtered(app) == "score 0.25–0.5 on overlap · failed only"
    assert app.session_state["filters"].score_range == (0.25, 0.5)  # applied while shut
    assert app.session_state["filters"].scorer_ids == ["overlap"]
    app = run_filters(scorer="tone")
    assert filtered(app) == "scored by tone"
    app = run_filters(min="0.9", max="0.1")  # reversed in a link: put in order
    assert filtered(app) == "score 0.1–0.9 on any scorer"
    open_filters(app)
    assert filtered(app) is None  # open: the widgets say it
    assert app.slider(key="experiment.range").value == (0.1, 0.9)
    app.checkbox(key="experiment.failed").check()
    app.run()
    assert app.checkbox(key="experiment.failed").value  # still open after a change in it
    assert app.session_state["filters"].failed_only and url(app, "failed") == "1"
    app.session_state["experiment.filters_open"] = False  # shut again: the filters stay
    app.run()
    assert not app.checkbox
    assert app.session_state["filters"].failed_only and url(app, "failed") == "1"
    assert filtered(app) == "score 0.1–0.9 on any scorer · failed only"


def test_a_bad_page_or_sort_in_a_link_falls_back() -> None:
    app = run_filters(sort="sideways:tone", page="-2")
    query = app.session_state["filters"]
    assert (query.sort, query.sort_scorer, query.page) == ("position", None, 1)
    app = run_filters(page="many")
    assert app.session_state["filters"].page == 1


def test_changed_filters_go_to_the_url_and_back_to_the_first_page() -> None:
    app = run_filters(page="4")
    assert app.session_state["filters"].page == 4
    open_filters(app)
    assert app.session_state["filters"].page == 4  # opening the box changes no filter
    app.multiselect(key="experiment.scorers").set_value(["tone"])
    app.slider(key="experiment.range").set_range(0.1, 0.9)
    app.text_input(key="experiment.search").input("capital")
    app.selectbox(key="experiment.sort").set_value("asc:overlap")
    app.run()
    query = app.session_state["filters"]
    assert query.scorer_ids == ["tone"] and query.search == "capital"
    assert query.score_range == pytest.approx((0.1, 0.9))
    assert (query.sort, query.sort_scorer, query.page) == ("score_asc", "overlap", 1)
    assert url(app, "scorer") == "tone" and url(app, "q") == "capital"
    assert (url(app, "min"), url(app, "max")) == ("0.1", "0.9")
    assert url(app, "sort") == "asc:overlap" and url(app, "page") == "1"
    app.number_input(key="experiment.page").set_value(2)
    app.run()
    assert app.session_state["filters"].page == 2 and url(app, "page") == "2"


# ---- pages/datasets.py: the mapping form ----


def mapping_app(parsed: object) -> None:
    import streamlit as st

    from pages.datasets import mapping_editor

    st.session_state["mapping"] = mapping_editor(parsed, "file")


def run_mapping(data: bytes) -> AppTest:
    parsed = core.service.get_service().read_upload("table.csv", data)
    app = AppTest.from_function(mapping_app, args=(parsed,), default_timeout=30)
    app.run()
    assert not app.exception, app.exception
    return app


def roles(app: AppTest) -> dict[str, Any]:
    return {box.label: box.value for box in app.selectbox}


TABLE = f'question,answer,expected,"{PAYLOAD_COLUMN}"\nq,a,e,m\n'.encode()


def test_the_mapping_form_proposes_roles_from_the_column_names(fresh_service: None) -> None:
    app = run_mapping(TABLE)
    assert roles(app) == {
        "Input *": "question",
        "Output *": "answer",
        "Ground truth": "expected",
        "Id": "(none)",
    }
    mapping = app.session_state["mapping"]
    assert (mapping.input, mapping.output, mapping.ground_truth, mapping.id) == (
        "question",
        "answer",
        "expected",
        None,
    )
    assert mapping.metadata == [PAYLOAD_COLUMN]
    # The required roles offer no "(none)"; the payload column name is an option as it is.
    output = app.selectbox(key="datasets.mapping.file.output")
    assert "(none)" not in output.options and PAYLOAD_COLUMN in output.options


def test_the_metadata_caption_shows_a_column_name_escaped(fresh_service: None) -> None:
    app = run_mapping(TABLE)
    (caption,) = [c.value for c in app.caption]
    assert caption.startswith("Other columns kept as metadata: ")
    assert "[x](http" not in caption and r"\[x\]\(http" in caption  # no link, no colour
    assert r"\:red\[warning\]" in caption and r"\$x^2\$" in caption


def test_remapping_moves_the_other_columns_to_metadata(fresh_service: None) -> None:
    app = run_mapping(TABLE)
    app.selectbox(key="datasets.mapping.file.output").set_value(PAYLOAD_COLUMN)
    app.selectbox(key="datasets.mapping.file.ground_truth").set_value("(none)")
    app.run()
    mapping = app.session_state["mapping"]
    assert mapping.output == PAYLOAD_COLUMN and mapping.ground_truth is None
    assert mapping.metadata == ["answer", "expected"]
