"""Hostile uploads on the Datasets and Compare pages: no column is guessed, a bomb or a deeply
nested file is a list of problems (never a traceback), and nothing is imported."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

import core.service


def visit(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def upload(app: AppTest, name: str, content: bytes) -> AppTest:
    visit(app, "pages/datasets.py")
    app.file_uploader[0].set_value((name, content, "application/octet-stream"))
    app.run()
    assert not app.exception, app.exception
    return app


def import_button(app: AppTest):  # type: ignore[no-untyped-def]
    return next(b for b in app.button if b.label == "Import dataset")


def errors(app: AppTest) -> str:
    shown = [e.value for e in app.error] + [m.value for m in app.markdown]
    return plain(" ".join(shown))


def test_no_input_or_output_column_is_guessed(app: AppTest) -> None:
    before = len(core.service.get_service().list_datasets())
    upload(app, "cols.csv", b"foo,bar\n1,2\n")
    roles = {s.label: s.value for s in app.selectbox if s.label in ("Input *", "Output *")}
    assert roles == {"Input *": None, "Output *": None}
    assert not any("ready to import" in s.value for s in app.success)
    assert "No input column found" in errors(app) and "No output column found" in errors(app)
    assert import_button(app).disabled is True
    app.selectbox(key=next(s.key for s in app.selectbox if s.label == "Input *")).set_value("foo")
    app.run()
    assert "No output column found" in errors(app)  # still refused with one role chosen
    assert import_button(app).disabled is True
    assert len(core.service.get_service().list_datasets()) == before


def test_a_parquet_bomb_is_refused_without_decoding_it(app: AppTest) -> None:
    indices = pa.array(np.zeros(3_000_000, dtype=np.int32))
    column = pa.DictionaryArray.from_arrays(indices, pa.array(["the same question"]))
    buffer = io.BytesIO()
    pq.write_table(pa.table({"input": column, "output": column}), buffer)
    upload(app, "bomb.parquet", buffer.getvalue())
    assert "over the row limit of 2,000,000" in errors(app)
    assert import_button(app).disabled is True


def test_a_deeply_nested_file_is_a_problem_naming_its_line(app: AppTest) -> None:
    content = b'{"input": "q", "output": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    upload(app, "deep.jsonl", content)
    assert "Line 1: the object is nested deeper than the limit of 100 levels" in errors(app)
    assert import_button(app).disabled is True


def test_a_deeply_nested_experiment_file_is_an_error_on_the_compare_page(app: AppTest) -> None:
    visit(app, "pages/compare.py")
    deep = b'{"name": "x", "items": [{"id": "a", "output": ' + b"[" * 900 + b"]" * 900 + b"}]}"
    app.file_uploader[0].set_value(("deep.json", deep, "application/json"))
    app.run()
    next(b for b in app.button if b.label == "Import").click()
    app.run()
    assert not app.exception, app.exception
    assert any("deep" in e.value and "nested deeper than 128 levels" in e.value for e in app.error)
