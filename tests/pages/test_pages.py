"""Every page renders without an exception and with its title; the upload flow reports problems
in plain words and imports nothing until they are fixed."""

from __future__ import annotations

from typing import Any

import pytest
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

import core.service
from core.datasets import _csv_reader

PAGES = {
    "pages/home.py": "Experiments",
    "pages/new_experiment.py": "New experiment",
    "pages/experiment.py": "Experiment detail",
    "pages/failures.py": "Failures",
    "pages/judge_usage.py": "Judge usage",
    "pages/datasets.py": "Datasets",
    "pages/scorers.py": "Scorers",
}


def visit(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.mark.parametrize(("page", "title"), list(PAGES.items()))
def test_every_page_renders_with_its_title(app: AppTest, page: str, title: str) -> None:
    visit(app, page)
    assert [t.value for t in app.title] == [title]


def test_first_start_imports_the_sample_datasets(app: AppTest) -> None:
    names = {info.name for info in core.service.get_service().list_datasets()}
    assert {"support-qa", "geography-quiz"} <= names


def upload(app: AppTest, name: str, content: bytes) -> AppTest:
    visit(app, "pages/datasets.py")
    app.file_uploader[0].set_value((name, content, "text/csv"))
    app.run()
    assert not app.exception, app.exception
    return app


def import_button(app: AppTest):  # type: ignore[no-untyped-def]
    return next(b for b in app.button if b.label == "Import dataset")


def test_upload_proposes_the_mapping_and_imports(app: AppTest) -> None:
    csv = (
        b"question,answer,expected,topic\n"
        b"What is 2+2?,4,4,math\nCapital of France?,Paris,Paris,geo\n"
    )
    upload(app, "quiz.csv", csv)
    chosen = {
        s.label: s.value
        for s in app.selectbox
        if s.label.rstrip(" *") in ("Input", "Output", "Ground truth", "Id")
    }
    assert chosen == {
        "Input *": "question",
        "Output *": "answer",
        "Ground truth": "expected",
        "Id": "(none)",
    }
    assert any("2 rows ready to import" in s.value for s in app.success)
    assert import_button(app).disabled is False
    import_button(app).click()
    app.run()
    assert any("Imported **quiz**: 2 items" in s.value for s in app.success)
    stored = {i.name: i for i in core.service.get_service().list_datasets()}
    assert stored["quiz"].item_count == 2
    assert stored["quiz"].mapping.metadata == ["topic"]


def test_upload_with_problems_lists_them_and_imports_nothing(app: AppTest) -> None:
    csv = b"id,question,answer\n1,What is 2+2?,\n1,Capital?,Paris\n"
    upload(app, "broken.csv", csv)
    problems = " ".join(m.value for m in app.markdown)
    assert "empty" in problems.lower()
    assert "duplicate" in problems.lower() or "more than once" in problems.lower()
    assert any("nothing will be imported" in e.value for e in app.error)
    assert import_button(app).disabled is True
    assert "broken" not in {i.name for i in core.service.get_service().list_datasets()}


def test_changing_the_mapping_revalidates(app: AppTest) -> None:
    csv = b"prompt,response,other\nHello?,,Hi there\nBye?,,See you\n"
    upload(app, "remap.csv", csv)
    assert import_button(app).disabled is True  # 'response' is empty in every row
    output = next(s for s in app.selectbox if s.label == "Output *")
    output.set_value("other")
    app.run()
    assert import_button(app).disabled is False
    assert any("2 rows ready to import" in s.value for s in app.success)


def test_the_upload_is_parsed_once_across_a_mapping_change_and_the_import(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[int] = []
    read_csv = _csv_reader.read_csv

    def counting_reader(data: bytes, limits: Any) -> Any:
        parses.append(len(data))
        return read_csv(data, limits)

    monkeypatch.setattr(_csv_reader, "read_csv", counting_reader)  # looked up at each read
    csv = b"prompt,response,other\nHello?,,Hi there\nBye?,,See you\n"
    upload(app, "once.csv", csv)
    assert import_button(app).disabled is True
    next(s for s in app.selectbox if s.label == "Output *").set_value("other")
    app.run()
    assert any("2 rows ready to import" in s.value for s in app.success)
    import_button(app).click()
    app.run()
    assert any("Imported **once**: 2 items" in s.value for s in app.success)
    assert parses == [len(csv)]  # one parse: the preview, the re-mapped preview, the import
    stored = next(i for i in core.service.get_service().list_datasets() if i.name == "once")
    assert stored.mapping.output == "other"
    items = core.service.get_service().dataset_items(stored.id)
    assert [item.output for item in items] == ["Hi there", "See you"]


def test_another_file_is_parsed_anew(app: AppTest) -> None:
    upload(app, "first.csv", b"question,answer\nq,a\n")
    assert any("1 rows ready to import" in s.value for s in app.success)
    upload(app, "second.csv", b"question,answer\nq,a\nr,\n")
    problem = "Row 2: the output (column 'answer') is empty"
    assert any(problem in plain(m.value) for m in app.markdown)


def test_an_unreadable_file_is_reported_plainly(app: AppTest) -> None:
    upload(app, "latin.csv", "question,answer\nCaf\xe9?,Oui\n".encode("latin-1"))
    assert app.error, "an encoding problem must be shown"
    assert import_button(app).disabled is True
