"""New experiment's Ray setting reaches the service: a bad address is refused on the page, by
name, and nothing starts (runs on a cluster: tests/ray)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import core.service

ROWS = b"question,answer\nWhat is Python?,A programming language.\n"


def test_a_bad_ray_address_is_refused_on_the_page_and_starts_nothing(app: AppTest) -> None:
    app.switch_page("pages/new_experiment.py")
    app.run()
    shared = core.service.get_service()
    dataset = shared.import_dataset("ray.csv", ROWS)
    app.run()
    app.selectbox(key="new_experiment.dataset").set_value(dataset.id)
    app.multiselect(key="new_experiment.scorers").set_value(["tone-scorer"])
    app.run()
    app.text_input(key="new_experiment.ray_address").input("http://head:8265")
    app.run()
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()

    assert not app.exception, app.exception
    errors = " ".join(e.value for e in app.error)
    assert "is not a Ray address" in errors and "head\\:8265" in errors, errors  # markdown-escaped
    assert shared.list_experiments() == []
