"""Issue 21 items 1, 6 and 8 in AppTest: the experiment page's views kept in the URL, the
drill-down beside the grid with previous/next item, the verdict on the whole item (stored,
exported, imported), the reviewer's name kept in a cookie, and the New experiment page's
duplicate-start guard."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from grid_rows import click_row, grid, open_filters  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.service import ReviewError, Service
from core.service.views import WHOLE_ITEM, experiment_html, experiment_json_text, results_csv

DATA = b"id,question,answer,category\n" + b"".join(
    b"i%03d,question %d,%s %d,%s\n"
    % (n, n, b"right" if n % 2 else b"wrong", n, [b"Law", b"Health"][n % 2])
    for n in range(30)
)
SCORERS = ("completeness-scorer", "textual-difference-scorer")
TAB = "experiment.tab"


@pytest.fixture
def experiment_id(app: AppTest) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset("layout.csv", DATA)
    started = service.start_experiment(
        ExperimentConfig(
            name="layout run",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=s) for s in SCORERS],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def show(app: AppTest, experiment_id: str, **params: str) -> AppTest:
    app.query_params.clear()
    app.query_params["experiment"] = experiment_id
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    return app


def url(app: AppTest, name: str) -> Any:
    value = app.query_params.get(name)
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def button(app: AppTest, label: str) -> Any:
    (found,) = [b for b in app.button if b.label == label]
    return found


def opened(app: AppTest) -> str | None:
    items = [c.value for c in app.caption if c.value.startswith("Item ")]
    return items[0].removeprefix("Item ") if items else None


def grid_shown(app: AppTest) -> bool:
    return any(e.proto.id.endswith("-experiment.grid") for e in app.get("bidi_component"))


def histograms(app: AppTest) -> list[str]:
    """The Distributions view's SVG of histograms, as drawn (an HTML block of st.markdown)."""
    return [m.value for m in app.markdown if m.value.startswith('<div class="score-histograms')]


def test_one_view_at_a_time_kept_in_the_url(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id)
    assert app.segmented_control(key=TAB).value == "results"
    assert url(app, "tab") == "results"
    assert grid_shown(app) and not histograms(app)
    assert not [s for s in app.selectbox if s.key == "experiment.slice"]  # Slices not drawn
    app.segmented_control(key=TAB).set_value("distributions")
    app.run()
    assert not app.exception, app.exception
    assert url(app, "tab") == "distributions"
    assert len(histograms(app)) == 1 and not grid_shown(app)
    assert not app.get("plotly_chart")  # one SVG, no plotly.js to mount
    assert next(m.label for m in app.metric) == "Items"  # the summary stays on top
    app.segmented_control(key=TAB).set_value("slices")
    app.run()
    assert url(app, "tab") == "slices" and app.selectbox(key="experiment.slice")
    show(app, experiment_id, tab="themes")  # a link to a view opens it
    assert app.segmented_control(key=TAB).value == "themes"
    assert any(t.label == "Find themes" for t in app.toggle)


def test_old_links_open_the_view_they_ask_for(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id, slice="category")  # a slice link from before the views
    assert app.segmented_control(key=TAB).value == "slices"
    table = next(d.value for d in app.dataframe if "missing" in d.value.columns)
    assert set(table["value"]) == {"Law", "Health"}
    show(app, experiment_id, item="i004", hide="input")  # an item link: Results, item open
    assert app.segmented_control(key=TAB).value == "results"
    assert opened(app) == "i004"
    assert "input" not in grid(app).columns
    open_filters(app)
    assert app.multiselect(key="experiment.hide").value == ["input"]
    show(app, experiment_id, tab="nonsense")
    assert app.segmented_control(key=TAB).value == "results"


def test_the_drilldown_steps_to_the_next_and_previous_item(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id)
    assert opened(app) is None
    click_row(app, 0)
    assert opened(app) == "i000" and url(app, "item") == "i000"
    assert button(app, "Previous item").disabled  # the page's first item
    button(app, "Next item").click()
    app.run()
    assert not app.exception, app.exception
    assert opened(app) == "i001" and url(app, "item") == "i001"
    button(app, "Next item").click()
    app.run()
    button(app, "Previous item").click()
    app.run()
    assert opened(app) == "i001"
    assert url(app, "tab") == "results"


def test_the_last_item_of_the_page_has_no_next(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id, item="i029")
    assert opened(app) == "i029"
    assert button(app, "Next item").disabled and not button(app, "Previous item").disabled
    grid_ids = list(grid(app).value["item_id"])
    assert grid_ids[-1] == "i029"


def test_next_and_previous_cross_the_grid_pages(app: AppTest) -> None:
    service = core.service.get_service()
    rows = b"".join(b"p%03d,question %d,answer %d\n" % (n, n, n) for n in range(120))
    dataset = service.import_dataset("paged.csv", b"id,question,answer\n" + rows)
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id=SCORERS[0])])
    )
    assert service.wait(started, timeout=60).status == "completed"
    show(app, started, item="p049")  # page 1's last row (50 a page)
    assert not button(app, "Next item").disabled
    button(app, "Next item").click()
    app.run()
    assert not app.exception, app.exception
    assert opened(app) == "p050" and url(app, "item") == "p050" and url(app, "page") == "2"
    assert app.number_input(key="experiment.page").value == 2
    assert grid(app).value["item_id"].iloc[0] == "p050"  # the grid shows that page
    button(app, "Previous item").click()  # page 2's first row: page 1's last item
    app.run()
    assert opened(app) == "p049" and url(app, "page") == "1"
    assert grid(app).value["item_id"].iloc[-1] == "p049"
    assert app.number_input(key="experiment.page").value == 1


def test_a_verdict_on_the_whole_item_is_stored_with_the_reviewer(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id, item="i003")
    app.text_input(key="review.name.field").input("Ana")
    app.run()
    app.session_state["experiment.item_verdict"] = True  # a click on its expander
    app.run()
    key = f"review.{experiment_id}.i003.item"
    app.text_area(key=f"{key}.note").input("the answer is plainly right")
    button(app, "✓ Item is right").click()
    app.run()
    assert not app.exception, app.exception
    (saved,) = core.service.get_service().reviews(experiment_id, "i003")
    assert (saved.scorer_id, saved.verdict, saved.reviewer) == (WHOLE_ITEM, "right", "Ana")
    assert saved.note == "the answer is plainly right" and saved.score is None
    assert "the answer is plainly right" in [t.value for t in app.text]
    marks = dict(zip(grid(app).value["item_id"], grid(app).value["reviewed"], strict=True))
    assert marks["i003"] == "item ✓"
    app.segmented_control(key=TAB).set_value("reviews")
    app.run()
    table = next(d.value for d in app.dataframe if "judged" in d.value.columns)
    assert list(table["judged"]) == ["whole item"] and list(table["reviewer"]) == ["Ana"]


def test_the_whole_item_verdict_is_exported_and_imported(app: AppTest, experiment_id: str) -> None:
    service = core.service.get_service()
    service.save_review(experiment_id, "i002", WHOLE_ITEM, "wrong", note="off topic", reviewer="Bo")
    service.save_review(experiment_id, "i002", SCORERS[0], "right", reviewer="Bo")
    with pytest.raises(ReviewError, match="whole item takes no score"):
        service.save_review(experiment_id, "i002", WHOLE_ITEM, "right", score=0.5)
    exported = experiment_json_text(service.load_experiment(experiment_id))
    reviews = json.loads(exported)["reviews"]
    assert {(r["scorerId"], r["verdict"]) for r in reviews} == {
        (WHOLE_ITEM, "wrong"),
        (SCORERS[0], "right"),
    }
    detail = service.load_experiment(experiment_id)
    rows = list(csv.DictReader(io.StringIO(results_csv(detail))))
    verdicts = {
        (r["itemId"], r["scorerId"]): (r["itemVerdict"], r["itemReviewNotes"]) for r in rows
    }
    assert verdicts[("i002", SCORERS[1])] == ("wrong", "Bo: off topic")  # on each of its rows
    assert verdicts[("i001", SCORERS[0])] == ("", "")
    report = experiment_html(detail)
    assert "<td>whole item</td><td class=num>0</td><td class=num>1</td>" in report
    assert "<b>whole item</b> on item i002" in report
    copy = service.import_experiment_json(exported.encode(), name="copy")
    back = {(r.scorer_id, r.verdict, r.note) for r in service.reviews(copy)}
    assert back == {(WHOLE_ITEM, "wrong", "off topic"), (SCORERS[0], "right", "")}
    # The item verdict is no scorer's label: the agreement with the reviews ignores it.
    agreement = service.review_agreement(copy)
    assert [entry.scorer_id for entry in agreement.scorers] == list(SCORERS)


def test_the_typed_name_is_written_to_the_session_cookie(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id, item="i001")
    app.text_input(key="review.name.field").input("Zoë </script>")
    app.run()
    scripts = [h.proto.body for h in app.get("html") if "scorelab_reviewer" in h.proto.body]
    assert len(scripts) == 1
    assert "'scorelab_reviewer=' + \"Zo%C3%AB%20%3C%2Fscript%3E\"" in scripts[0]
    app.run()  # unchanged: not written again
    assert not [h for h in app.get("html") if "scorelab_reviewer" in h.proto.body]


def test_the_name_comes_back_from_the_cookie(
    app: AppTest, experiment_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pages.ui.review as review

    monkeypatch.setattr(review, "_cookie", lambda: "Zo%C3%AB")
    show(app, experiment_id, item="i001")
    assert app.text_input(key="review.name.field").value == "Zoë"
    app.session_state["experiment.item_verdict"] = True  # the whole item's verdict opened
    app.run()
    key = f"review.{experiment_id}.i001.item"
    assert app.text_area(key=f"{key}.note")
    button(app, "✗ Item is wrong").click()
    app.run()
    (saved,) = core.service.get_service().reviews(experiment_id, "i001")
    assert saved.reviewer == "Zoë"


# ---- the New experiment page: no duplicate runs ----


def new_experiment(app: AppTest) -> AppTest:
    app.switch_page("pages/new_experiment.py")
    app.run()
    assert not app.exception, app.exception
    dataset = next(d.id for d in core.service.get_service().list_datasets() if d.name == "faq")
    app.selectbox(key="new_experiment.dataset").set_value(dataset)
    app.multiselect(key="new_experiment.scorers").set_value(["completeness-scorer"])
    app.run()
    return app


@pytest.fixture
def faq(app: AppTest) -> str:
    data = b"question,answer\n" + b"".join(b"q%d,a%d\n" % (n, n) for n in range(5))
    return core.service.get_service().import_dataset("faq.csv", data).id


def test_a_twin_of_a_running_experiment_asks_first(
    app: AppTest, faq: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = core.service.get_service()
    new_experiment(app)
    button(app, "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    first = app.session_state["new_experiment.last_started"]
    service.wait(first, timeout=60)
    # As if it were still running (a five-item run ends before the test can click again).
    real = Service.running_experiments
    monkeypatch.setattr(
        Service, "running_experiments", lambda self: [*real(self), first] if first else real(self)
    )
    count = len(service.list_experiments())
    button(app, "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    assert len(service.list_experiments()) == count  # nothing started
    assert any("is running with this same configuration" in w.value for w in app.warning)
    assert button(app, "Start experiment").disabled  # waits for the answer
    button(app, "Don't start").click()
    app.run()
    assert not any("same configuration" in w.value for w in app.warning)
    assert not button(app, "Start experiment").disabled
    assert len(service.list_experiments()) == count
    button(app, "Start experiment").click()
    app.run()
    button(app, "Start anyway").click()
    app.run()
    assert not app.exception, app.exception
    assert len(service.list_experiments()) == count + 1
    assert app.session_state["new_experiment.last_started"] != first


def test_another_configuration_starts_without_asking(
    app: AppTest, faq: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = core.service.get_service()
    new_experiment(app)
    button(app, "Start experiment").click()
    app.run()
    first = app.session_state["new_experiment.last_started"]
    service.wait(first, timeout=60)
    monkeypatch.setattr(Service, "running_experiments", lambda self: [first])
    app.multiselect(key="new_experiment.scorers").set_value(["textual-difference-scorer"])
    app.run()
    button(app, "Start experiment").click()
    app.run()
    assert not any("same configuration" in w.value for w in app.warning)
    assert app.session_state["new_experiment.last_started"] != first


def test_the_progress_is_drawn_under_the_start_button(app: AppTest, faq: str) -> None:
    new_experiment(app)
    button(app, "Start experiment").click()
    app.run()
    started = app.session_state["new_experiment.last_started"]
    core.service.get_service().wait(started, timeout=60)
    app.run()
    labels = [e.type for e in app.main]
    texts = [getattr(e, "label", None) or getattr(e, "value", None) for e in app.main]
    start_at = next(n for n, t in enumerate(texts) if t == "Start experiment")
    finished_at = next(
        n for n, t in enumerate(texts) if isinstance(t, str) and "Experiment finished" in t
    )
    assert finished_at > start_at, labels


def test_the_whole_item_verdict_is_drawn_only_when_opened_and_kept_open(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id, item="i002")
    verdicts = [e for e in app.expander if e.label.startswith("Verdict on the whole item")]
    assert len(verdicts) == 1  # its expander is drawn (shut)
    assert not [b for b in app.button if b.label.endswith("Item is right")]  # shut: no form
    assert not [t for t in app.text_area if t.key and t.key.endswith(".item.note")]
    app.session_state["experiment.item_verdict"] = True  # a click on its expander
    app.run()
    assert not app.exception, app.exception
    assert button(app, "✓ Item is right") and button(app, "✗ Item is wrong")
    app.button(key="experiment.next").click().run()  # the next item: still open
    assert not app.exception, app.exception
    assert opened(app) == "i003" and button(app, "✓ Item is right")
    app.session_state["experiment.item_verdict"] = False  # shut again
    app.run()
    assert not [b for b in app.button if b.label.endswith("Item is right")]


def test_the_drilldown_draws_a_step_and_the_metadata_only_when_opened(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id, item="i003")
    steps = [e for e in app.expander if "·" in e.label]
    assert steps, "the open scorer's steps are listed"
    shut = len(app.code)
    assert not app.json  # the metadata expander is shut: its JSON not drawn
    key = f"experiment.step.{SCORERS[0]}.0.False"
    app.session_state[key] = True  # a click on the first step's expander
    app.session_state["experiment.metadata"] = True
    app.run()
    assert not app.exception, app.exception
    assert len(app.code) > shut  # its result (and prompt) drawn now
    assert app.json and app.json[0].value is not None
    # Kept open for the next item (the same scorer's first step).
    app.button(key="experiment.next").click().run()
    assert not app.exception, app.exception
    assert len(app.code) > shut and app.json
