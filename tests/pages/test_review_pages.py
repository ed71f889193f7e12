"""The review widget in the experiment's drill-down and the Review queue page, on a real
experiment of code scorers (docs/review.md)."""

from __future__ import annotations

import pytest
from grid_rows import SCORE_REVIEW, open_score_review, open_scorer_tab
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec

DATA = (
    b"id,question,answer,expected\n"
    b"a,what is up,the sky is up,the sky\n"
    b"b,hello there,hello there,hello\n"
    b"c,big cat,small dog,big cat\n"
)
SCORERS = ("completeness-scorer", "textual-difference-scorer")


@pytest.fixture
def experiment_id(app: AppTest) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset("review.csv", DATA)
    started = service.start_experiment(
        ExperimentConfig(
            name="review run",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=s) for s in SCORERS],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def show(app: AppTest, page: str, experiment_id: str, **params: str) -> AppTest:
    app.query_params["experiment"] = experiment_id
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def form_key(experiment_id: str, item: str, scorer: str) -> str:
    return f"review.{experiment_id}.{item}.{scorer}"


def button(app: AppTest, label: str, index: int = 0):  # type: ignore[no-untyped-def]
    return [b for b in app.button if b.label == label][index]


def test_the_drilldown_saves_a_review_with_the_typed_name(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/experiment.py", experiment_id, item="c")
    # Shut, its label says what it holds; the form is drawn only when opened.
    (shut,) = [e for e in app.expander if e.label.startswith("Review this score")]
    assert "no review yet" in plain(shut.label)
    assert not [b for b in app.button if b.label == "✗ Score is wrong"]
    app.text_input(key="review.name.field").input("Ana")
    open_score_review(app)
    assert any("No review of this score yet" in c.value for c in app.caption)
    key = form_key(experiment_id, "c", SCORERS[0])
    app.number_input(key=f"{key}.score").set_value(0.25)
    app.text_area(key=f"{key}.note").input("misses the point")
    button(app, "✗ Score is wrong").click()
    app.run()
    assert not app.exception, app.exception
    (saved,) = core.service.get_service().reviews(experiment_id, "c")
    assert (saved.scorer_id, saved.verdict, saved.score) == (SCORERS[0], "wrong", 0.25)
    assert (saved.note, saved.reviewer) == ("misses the point", "Ana")
    text = plain(" ".join(m.value for m in app.markdown))
    assert "wrong" in text and "would give 0.25" in text and "Ana" in text
    assert "misses the point" in [t.value for t in app.text]
    # Kept open for the next item, whose label counts its own reviews.
    (opened,) = [e for e in app.expander if e.label.startswith("Review this score")]
    assert "1 review · yours: wrong" in plain(opened.label)
    app.query_params["item"] = "b"
    app.run()
    assert [b for b in app.button if b.label == "✗ Score is wrong"]
    (other,) = [e for e in app.expander if e.label.startswith("Review this score")]
    assert "no review yet" in plain(other.label)
    app.session_state[SCORE_REVIEW] = False  # shut again: no form
    app.run()
    assert not [b for b in app.button if b.label == "✗ Score is wrong"]


def test_an_unsigned_review_is_anonymous_and_saving_again_updates_it(
    app: AppTest, experiment_id: str
) -> None:
    show(app, "pages/experiment.py", experiment_id, item="a")
    open_score_review(app)
    assert len([b for b in app.button if b.label == "✓ Score is right"]) == 1  # the open tab's
    open_scorer_tab(app, experiment_id, 1)  # the second scorer's tab: its review open too
    button(app, "✓ Score is right").click()
    app.run()
    button(app, "✗ Score is wrong").click()
    app.run()
    assert not app.exception, app.exception
    (saved,) = core.service.get_service().reviews(experiment_id, "a")
    assert (saved.scorer_id, saved.verdict, saved.reviewer) == (SCORERS[1], "wrong", "anonymous")
    button(app, "Delete my review").click()
    app.run()
    assert core.service.get_service().reviews(experiment_id, "a") == []


def test_the_queue_walks_the_items_with_next_and_previous_in_the_url(
    app: AppTest, experiment_id: str
) -> None:
    order = [e.item_id for e in core.service.get_service().review_queue(experiment_id)]
    show(app, "pages/review.py", experiment_id)
    # Previous / Next are the page's first buttons.
    assert [b.label for b in app.button][:2] == ["← Previous", "Next →"]
    assert button(app, "← Previous").disabled
    seen = []
    for index, item_id in enumerate(order):
        seen.append(app.query_params["pos"])
        text = plain(" ".join(m.value for m in app.markdown))
        assert "Why here:" in text and f"**Item {item_id}**" in text
        if index < len(order) - 1:
            button(app, "Next →").click()
            app.run()
            assert not app.exception, app.exception
    assert [p if isinstance(p, str) else p[0] for p in seen] == ["1", "2", "3"]
    assert button(app, "Next →").disabled
    button(app, "← Previous").click()
    app.run()
    assert app.query_params["pos"] in ("2", ["2"])


def test_a_link_with_a_position_opens_that_item_and_a_bad_one_is_clamped(
    app: AppTest, experiment_id: str
) -> None:
    order = [e.item_id for e in core.service.get_service().review_queue(experiment_id)]
    show(app, "pages/review.py", experiment_id, pos="3")
    assert f"**Item {order[2]}**" in plain(" ".join(m.value for m in app.markdown))
    show(app, "pages/review.py", experiment_id, pos="99")
    assert app.query_params["pos"] in ("3", ["3"])
    show(app, "pages/review.py", experiment_id, pos="x")
    assert app.query_params["pos"] in ("1", ["1"])


def test_a_review_from_the_queue_is_stored_and_the_order_recomputed_on_demand(
    app: AppTest, experiment_id: str
) -> None:
    first = core.service.get_service().review_queue(experiment_id)[0].item_id
    show(app, "pages/review.py", experiment_id)
    button(app, "✓ Score is right").click()
    app.run()
    assert not app.exception, app.exception
    (saved,) = core.service.get_service().reviews(experiment_id)
    assert saved.item_id == first and saved.verdict == "right"
    # The walk keeps its order until asked: the reviewed item is still first.
    assert f"**Item {first}**" in plain(" ".join(m.value for m in app.markdown))
    button(app, "Recompute the order").click()
    app.run()
    text = plain(" ".join(m.value for m in app.markdown))
    assert f"**Item {first}**" not in text


def test_the_agreement_panel_offers_the_reviews_as_labels(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/experiment.py", experiment_id, tab="agreement")
    assert any("no score was reviewed yet" in c.value for c in app.caption)
    assert not [s for s in app.selectbox if s.label == "Label column"]
    service = core.service.get_service()
    for item_id in ("a", "b", "c"):
        service.save_review(experiment_id, item_id, SCORERS[1], "right")
    show(app, "pages/experiment.py", experiment_id, tab="agreement")
    app.selectbox(key="experiment.label").set_value(":reviews")
    app.run()
    assert not app.exception, app.exception
    assert app.query_params["label"] in (":reviews", [":reviews"])
    texts = [plain(t.value) for t in app.text]  # what a reader sees (word joiners dropped)
    assert any(
        t.startswith("Labels from the reviews (human verdicts): 3 items labelled") for t in texts
    )
    table = app.dataframe[0].value
    reviewed = table[table.iloc[:, 0].astype(str).str.contains(SCORERS[1])]
    assert len(reviewed) == 1 and reviewed["n"].item() == 3
    assert reviewed["AUC"].item() == 1.0  # "right" everywhere: the scores rank their labels
    # One verdict flipped: the panel follows the reviews, not a stale cache.
    service.save_review(experiment_id, "b", SCORERS[1], "wrong")
    app.run()
    table = app.dataframe[0].value
    reviewed = table[table.iloc[:, 0].astype(str).str.contains(SCORERS[1])]
    assert reviewed["AUC"].item() < 1.0


def test_the_grid_marks_each_reviewed_score(app: AppTest, experiment_id: str) -> None:
    from grid_rows import grid

    service = core.service.get_service()
    service.save_review(experiment_id, "a", SCORERS[0], "right", reviewer="Ana")
    service.save_review(experiment_id, "c", SCORERS[1], "wrong", reviewer="Ana")
    show(app, "pages/experiment.py", experiment_id)
    frame = grid(app).value
    frame = frame.data if hasattr(frame, "data") else frame  # a Styler carries its frame
    marks = dict(zip(frame["item_id"], frame["reviewed"], strict=True))
    assert marks["a"] == f"{SCORERS[0]} ✓"
    assert marks["c"] == f"{SCORERS[1]} ✗"
    assert marks["b"] in (None, "") or marks["b"] != marks["b"]  # unreviewed: empty (or NaN)


HOSTILE = "**x** :material/home:"
"""A name a dataset or a scorer's options may give, read as bold text and an icon by Markdown."""


def test_a_label_column_named_like_markdown_is_shown_literally(app: AppTest) -> None:
    service = core.service.get_service()
    rows = "".join(
        f"i{n},question {n},answer {n},{'true' if n % 2 else 'false'}\n" for n in range(6)
    )
    dataset = service.import_dataset("labels.csv", f"id,question,answer,{HOSTILE}\n{rows}".encode())
    started = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="completeness-scorer")]
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    show(app, "pages/experiment.py", started, tab="agreement", label=HOSTILE)
    shown = [plain(t.value) for t in app.text if "Labels from" in t.value]
    assert shown and shown[0].startswith(f"Labels from column {HOSTILE}: 6 items labelled")
    # Nowhere drawn as Markdown unescaped: no bold, no icon.
    markdown = [m.value for m in [*app.markdown, *app.caption, *app.info, *app.warning]]
    assert not [m for m in markdown if "**x**" in m or ":material/home:" in m]


def test_the_grid_column_help_shows_a_scorer_id_literally(app: AppTest) -> None:

    from grid_rows import grid

    service = core.service.get_service()
    dataset = service.import_dataset("review.csv", DATA)
    spec = ScorerSpec(scorer_id="checks.includes", options={"value": "sky", "id": HOSTILE})
    started = service.start_experiment(ExperimentConfig(dataset_id=dataset.id, scorers=[spec]))
    assert service.wait(started, timeout=60).status == "completed"
    show(app, "pages/experiment.py", started)
    columns = grid(app).data["columns"]
    helps = [c["help"] for c in columns if "red 0" in c["help"]]
    assert len(helps) == 1
    # The tooltip is a title (plain text): the id as typed, no icon's shortcode left to read.
    assert helps[0].replace("\u2060", "").startswith(HOSTILE)
    assert ":material/home:" not in helps[0]  # the word joiner after its colon
    (header,) = [c["label"] for c in columns if c["kind"] == "score"]
    assert header.replace("\u2060", "") == HOSTILE
