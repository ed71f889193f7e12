"""Dataset import: every format, the mapping, and every bad input named with its place."""

from __future__ import annotations

import io
import json
import pickle

import pandas as pd
import pytest
from pydantic import ValidationError

from core.datasets import _csv_reader
from core.datasets._csv_reader import read_csv
from core.datasets.upload import (
    DEFAULT_SIZE_LIMIT_BYTES,
    ImportLimits,
    MappedUpload,
    dataset_fingerprint,
    propose_mapping,
    read_dataset,
    read_upload,
)
from core.records import ColumnMapping, ImportReport

ROWS = [
    {"id": "q1", "question": "What is 2+2?", "answer": "4", "expected": "4", "topic": "math"},
    {
        "id": "q2",
        "question": "Capital of France?",
        "answer": "Paris",
        "expected": "Paris",
        "topic": "geo",
    },
]


def csv_bytes(rows: list[dict], sep: str = ",") -> bytes:
    return pd.DataFrame(rows).to_csv(index=False, sep=sep).encode()


def codes(report: ImportReport) -> list[str]:
    return [p.code for p in report.problems]


def mapped(file_name: str, data: bytes, mapping: ColumnMapping | None = None) -> MappedUpload:
    """The file read once and mapped: its report and its items."""
    return read_upload(file_name, data).map(mapping)


def assert_two_items(upload: MappedUpload) -> None:
    report, items = upload.report, upload.items()
    assert report.ok, report.problems
    assert [i.id for i in items] == ["q1", "q2"]
    first = items[0]
    assert (first.input, first.output, first.ground_truth) == ("What is 2+2?", "4", "4")
    assert first.metadata == {"topic": "math"}
    assert report.mapping_used == ColumnMapping(
        id="id", input="question", output="answer", ground_truth="expected", metadata=["topic"]
    )


# ---- each format ----


def test_csv() -> None:
    upload = mapped("qa.csv", csv_bytes(ROWS))
    report = upload.report
    assert report.format == "csv" and report.row_count == 2
    assert report.columns == ["id", "question", "answer", "expected", "topic"]
    assert report.preview[0]["question"] == "What is 2+2?"
    assert report == read_dataset("qa.csv", csv_bytes(ROWS))
    assert_two_items(upload)


def test_tsv_and_semicolon_csv() -> None:
    assert_two_items(mapped("qa.tsv", csv_bytes(ROWS, sep="\t")))
    assert_two_items(mapped("qa.csv", csv_bytes(ROWS, sep=";")))


def test_jsonl() -> None:
    data = "\n".join(json.dumps(r) for r in ROWS).encode()
    upload = mapped("qa.jsonl", data)
    assert upload.report.format == "jsonl"
    assert_two_items(upload)


def test_json_array() -> None:
    upload = mapped("qa.json", json.dumps(ROWS).encode())
    assert upload.report.format == "json"
    assert_two_items(upload)


def test_xlsx() -> None:
    buffer = io.BytesIO()
    pd.DataFrame(ROWS).to_excel(buffer, index=False)
    upload = mapped("qa.xlsx", buffer.getvalue())
    assert upload.report.format == "xlsx"
    assert_two_items(upload)


def test_parquet() -> None:
    buffer = io.BytesIO()
    pd.DataFrame(ROWS).to_parquet(buffer, index=False)
    upload = mapped("qa.parquet", buffer.getvalue())
    assert upload.report.format == "parquet"
    assert_two_items(upload)


def test_same_content_same_fingerprint_across_formats() -> None:
    csv_upload = mapped("qa.csv", csv_bytes(ROWS))
    csv_report = csv_upload.report
    json_report = read_dataset("qa.json", json.dumps(ROWS).encode())
    assert csv_report.fingerprint == json_report.fingerprint
    assert csv_report.fingerprint == dataset_fingerprint(csv_upload.items())
    changed = [dict(ROWS[0], answer="5"), ROWS[1]]
    assert read_dataset("qa.csv", csv_bytes(changed)).fingerprint != csv_report.fingerprint


def large_rows(count: int) -> list[dict]:
    """Enough rows for the fingerprint to be hashed in a worker thread, over several pyarrow
    chunks, with padded ids, non-ASCII text and some empty ground truths."""
    return [
        {
            "id": f" row-{n:05d} ",
            "question": f"Question {n}: how do I set option {n}? " + "détail " * (n % 7),
            "answer": f"Set option {n}, then restart (≤ {n % 9} s).",
            "expected": "" if n % 5 == 0 else f"Set option {n}.",
            "topic": ["api", "billing", "python"][n % 3],
        }
        for n in range(count)
    ]


def test_large_files_fingerprint_the_same_across_formats() -> None:
    rows = large_rows(25_000)
    csv_upload = mapped("big.csv", csv_bytes(rows))
    csv_report, items = csv_upload.report, csv_upload.items()
    assert csv_report.ok, csv_report.problems[:3]
    assert csv_report.fingerprint == dataset_fingerprint(items)
    as_json = [dict(r, expected=r["expected"] or None) for r in rows]  # CSV has no null
    json_report = read_dataset("big.json", json.dumps(as_json).encode())
    assert json_report.fingerprint == csv_report.fingerprint
    assert items[0].id == "row-00000" and items[0].ground_truth is None


def test_a_problem_in_a_large_file_stops_the_fingerprint() -> None:
    rows = large_rows(25_000)
    rows[-1]["id"] = rows[0]["id"]
    upload = mapped("big.csv", csv_bytes(rows))
    report = upload.report
    assert codes(report) == ["duplicate_id"]
    assert report.problems[0].message == (
        "Duplicate id 'row-00000' (column 'id') in row 1 and row 25000"
    )
    assert report.fingerprint is None and upload.items() == []


def test_unicode_whitespace_is_empty() -> None:
    data = "question,answer\nq,a\nq,\u2003\u3000\nq,\u00a0 x\n".encode()
    report = read_dataset("f.csv", data)
    assert [p.message for p in report.problems] == ["Row 2: the output (column 'answer') is empty"]


def test_json_values_keep_their_shape_and_mastra_metadata_is_spread() -> None:
    rows = [
        {
            "input": [{"role": "user", "content": "hi"}],
            "output": {"role": "assistant", "content": "hello"},
            "groundTruth": None,
            "metadata": {"difficulty": "easy"},
        }
    ]
    item = mapped("chat.jsonl", json.dumps(rows[0]).encode()).items()[0]
    assert item.id == "1"
    assert item.input == [{"role": "user", "content": "hi"}]
    assert item.output == {"role": "assistant", "content": "hello"}
    assert item.ground_truth is None
    assert item.metadata == {"difficulty": "easy"}


def test_numeric_ids_from_a_spreadsheet_become_text() -> None:
    buffer = io.BytesIO()
    pd.DataFrame(
        [{"id": 1, "input": "a", "output": "b"}, {"id": 2, "input": "c", "output": "d"}]
    ).to_excel(buffer, index=False)
    assert [i.id for i in mapped("n.xlsx", buffer.getvalue()).items()] == ["1", "2"]


def test_items_are_numbered_without_an_id_column() -> None:
    items = mapped("x.csv", b"prompt,completion\na,b\nc,d\n").items()
    assert [i.id for i in items] == ["1", "2"]


# ---- mapping ----


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        (["Question", "Response", "Ground Truth"], ("Question", "Response", "Ground Truth")),
        (["prompt", "completion", "__expected"], ("prompt", "completion", "__expected")),
        (["query", "output", "reference"], ("query", "output", "reference")),
        (["input", "answer", "target", "groundTruth"], ("input", "answer", "groundTruth")),
    ],
)
def test_propose_mapping(columns: list[str], expected: tuple[str, str, str]) -> None:
    mapping = propose_mapping(columns)
    assert mapping is not None
    assert (mapping.input, mapping.output, mapping.ground_truth) == expected
    used = set(expected)
    assert mapping.metadata == [c for c in columns if c not in used]


def test_propose_mapping_needs_input_and_output() -> None:
    assert propose_mapping(["input", "notes"]) is None


def test_explicit_mapping() -> None:
    data = b"a,b,c,d\nx1,y1,z1,w1\nx2,y2,z2,w2\n"
    mapping = ColumnMapping(id="d", input="b", output="a", ground_truth="c", metadata=[])
    upload = mapped("f.csv", data, mapping)
    assert upload.report.proposed_mapping is None
    assert upload.report.mapping_used == mapping
    assert upload.items()[0].model_dump(by_alias=False) == {
        "id": "w1",
        "input": "y1",
        "output": "x1",
        "ground_truth": "z1",
        "metadata": {},
    }


def test_missing_mapped_column() -> None:
    mapping = ColumnMapping(input="question", output="reply")
    upload = mapped("f.csv", b"question,answer\nq,a\n", mapping)
    assert codes(upload.report) == ["missing_column"]
    problem = upload.report.problems[0]
    assert problem.column == "reply"
    assert "'reply'" in problem.message and "'question', 'answer'" in problem.message
    assert upload.items() == []


def test_no_input_or_output_column() -> None:
    report = read_dataset("f.csv", b"foo,bar\n1,2\n")
    assert codes(report) == ["no_input_column", "no_output_column"]
    assert "question" in report.problems[0].message


# ---- bad input ----


def test_empty_output_names_row_and_column() -> None:
    data = b"question,answer\n" + b"q,a\n" * 16 + b"q17,\n"
    upload = mapped("f.csv", data)
    report = upload.report
    assert codes(report) == ["empty_output"]
    problem = report.problems[0]
    assert problem.message == "Row 17: the output (column 'answer') is empty"
    assert (problem.row, problem.column) == (17, "answer")
    assert upload.items() == [] and report.fingerprint is None


def test_empty_input_in_jsonl_says_line() -> None:
    data = b'{"input": "a", "output": "b"}\n\n{"input": " ", "output": "c"}\n'
    report = read_dataset("f.jsonl", data)
    assert [p.message for p in report.problems] == ["Line 3: the input (key 'input') is empty"]
    assert report.problems[0].row == 3


def test_many_empty_rows_are_summed_up() -> None:
    data = b"question,answer\n" + b"q,\n" * 50
    report = read_dataset("f.csv", data)
    assert len(report.problems) == 21
    assert report.problems[-1].message == "30 more rows where the output (column 'answer') is empty"


def test_duplicate_ids_list_the_rows() -> None:
    data = b"id,question,answer\na,q,x\nb,q,x\na,q,x\nc,q,x\na,q,x\n"
    report = read_dataset("f.csv", data)
    assert codes(report) == ["duplicate_id"]
    assert report.problems[0].message == "Duplicate id 'a' (column 'id') in row 1, row 3 and row 5"


def test_empty_id() -> None:
    report = read_dataset("f.csv", b"id,question,answer\n,q,a\n")
    assert [p.message for p in report.problems] == ["Row 1: the id (column 'id') is empty"]


def test_csv_row_with_too_many_fields() -> None:
    report = read_dataset("f.csv", b"question,answer\nq,a\nq,a,extra\nq,a\n")
    assert codes(report) == ["malformed_row"]
    assert report.problems[0].message == "Row 2 (line 3): 3 fields, but the header has 2"
    assert report.problems[0].row == 2


def test_csv_row_with_too_few_fields() -> None:
    report = read_dataset("f.csv", b"id,question,answer\n1,q,a\n2,q\n")
    assert [p.message for p in report.problems] == [
        "Row 2 (line 3): 2 fields, but the header has 3"
    ]


def test_csv_blank_row_in_the_middle_but_not_at_the_end() -> None:
    report = read_dataset("f.csv", b"question,answer\nq,a\n\nq,a\n\n\n")
    assert [p.message for p in report.problems] == ["Row 2 is blank"]
    assert read_dataset("f.csv", b"question,answer\nq,a\n\n\n").ok


def test_csv_unterminated_quote() -> None:
    report = read_dataset("f.csv", b'question,answer\n"q,a\n')
    assert codes(report) == ["malformed_file"]
    assert report.problems[0].message.startswith("The file is not valid CSV")


def test_csv_duplicate_header() -> None:
    report = read_dataset("f.csv", b"question,answer,answer\nq,a,b\n")
    assert report.problems[0].message == (
        "Column 'answer' appears 2 times in the header (columns 2 and 3)"
    )


def test_bad_encoding_names_byte_and_line() -> None:
    data = "question,answer\nq,a\ncafé,b\n".encode("latin-1")
    report = read_dataset("f.csv", data)
    assert codes(report) == ["bad_encoding"]
    assert "byte 0xE9" in report.problems[0].message
    assert "(line 3)" in report.problems[0].message


def test_utf8_bom_and_utf16_are_read() -> None:
    assert read_dataset("f.csv", b"\xef\xbb\xbfquestion,answer\nq,a\n").columns == [
        "question",
        "answer",
    ]
    assert read_dataset("f.csv", "question,answer\nq,a\n".encode("utf-16")).ok


def test_jsonl_bad_json_on_line_n() -> None:
    data = b'{"input": "a", "output": "b"}\n{"input": "a", "output": }\n[1]\n'
    report = read_dataset("f.jsonl", data)
    assert [p.message for p in report.problems] == [
        "Line 2: not valid JSON (Expecting value at column 26)",
        "Line 3: expected a JSON object, found an array",
    ]
    assert [p.row for p in report.problems] == [2, 3]


def test_json_not_an_array_of_objects() -> None:
    assert read_dataset("f.json", b'{"input": "a"}').problems[0].message == (
        "The JSON file must hold an array of objects, but it holds an object"
    )
    report = read_dataset("f.json", b'[{"input": "a", "output": "b"}, "text"]')
    assert report.problems[0].message == "Item 2 (line 1): expected an object, found a string"
    assert codes(read_dataset("f.json", b"[{")) == ["malformed_file"]


def test_empty_files() -> None:
    for name in ("f.csv", "f.jsonl", "f.json"):
        assert codes(read_dataset(name, b"")) == ["empty_file"], name
    assert read_dataset("f.csv", b"question,answer\n").problems[0].message == (
        "The file has no data rows"
    )


def test_corrupt_binary_formats() -> None:
    xlsx = read_dataset("f.xlsx", b"not a zip")
    assert codes(xlsx) == ["unreadable_file"]
    assert "not a readable .xlsx workbook" in xlsx.problems[0].message
    assert codes(read_dataset("f.parquet", b"PAR1 nope")) == ["unreadable_file"]


def test_file_over_the_size_limit_says_both_sizes() -> None:
    report = read_dataset("f.csv", b"question,answer\n" + b"q,a\n" * 600, size_limit_bytes=1024)
    assert codes(report) == ["file_too_large"]
    assert report.problems[0].message == ("The file is 2.4 KB, over the size limit of 1 KB")
    assert DEFAULT_SIZE_LIMIT_BYTES == 200 * 1024 * 1024


def test_unknown_format_lists_the_supported_ones() -> None:
    report = read_dataset("notes.txt", b"hello")
    assert codes(report) == ["unknown_format"]
    assert report.problems[0].message == (
        "Unknown file type '.txt' for 'notes.txt': supported are .csv, .tsv, .jsonl, .ndjson, "
        ".json, .xlsx, .parquet"
    )
    assert "save the workbook as .xlsx" in read_dataset("old.xls", b"x").problems[0].message


def test_report_survives_json_round_trip() -> None:
    report = read_dataset("f.csv", b"question,answer\nq,\n")
    again = ImportReport.model_validate_json(report.model_dump_json())
    assert again == report


# ---- parse once, map many times ----


def test_one_parse_serves_every_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    parses = []

    def counting_reader(data: bytes, limits: ImportLimits):  # type: ignore[no-untyped-def]
        parses.append(len(data))
        return read_csv(data, limits)

    # The readers are looked up in their module at each read (imported on first use).
    monkeypatch.setattr(_csv_reader, "read_csv", counting_reader)
    data = b"a,b,c\nx1,y1,z1\nx2,y2,\n"
    by_b = ColumnMapping(input="a", output="b", metadata=["c"])
    by_c = ColumnMapping(input="a", output="c", metadata=["b"])
    parsed = read_upload("f.csv", data)
    assert parsed.columns == ["a", "b", "c"] and parsed.proposed_mapping is None
    first, second, again = parsed.map(by_b), parsed.map(by_c), parsed.map(by_b)
    assert len(parses) == 1
    assert [i.output for i in first.items()] == ["y1", "y2"]
    assert [p.message for p in second.report.problems] == [
        "Row 2: the output (column 'c') is empty"
    ]
    assert second.items() == []
    assert again.report == first.report and again.items() == first.items()
    # The same reports as reading the file again for each mapping.
    assert first.report == read_dataset("f.csv", data, by_b)
    assert second.report == read_dataset("f.csv", data, by_c)
    assert parsed.map().report == read_dataset("f.csv", data)


def test_an_unreadable_file_maps_to_its_read_problem() -> None:
    parsed = read_upload("f.json", b"[{")
    assert parsed.table is None and parsed.columns == [] and parsed.row_count == 0
    mapped_upload = parsed.map(ColumnMapping(input="a", output="b"))
    assert codes(mapped_upload.report) == ["malformed_file"]
    assert mapped_upload.report.format == "json" and mapped_upload.items() == []


def test_a_report_is_plain_data() -> None:
    """No function rides on the record: it pickles and copies like any other value."""
    report = read_dataset("qa.csv", csv_bytes(ROWS))
    assert report.ok and report.fingerprint
    assert pickle.loads(pickle.dumps(report)) == report
    with pytest.raises(ValidationError):
        report.fingerprint = "changed"  # type: ignore[misc]


def test_jsonl_duplicate_keys_and_non_finite_numbers_are_problems() -> None:
    """Issue 19: a duplicate key, NaN and Infinity are reported with their line and key, not
    silently changed (the last value kept, NaN made null, Infinity made a string)."""
    data = (
        b'{"input": "a", "output": "b"}\n'
        b'{"input": "a", "output": "b", "input": "c"}\n'
        b'{"input": "a", "output": NaN}\n'
        b'{"input": "a", "output": "b", "score": -Infinity, "meta": {"x": [1, Infinity]}}\n'
    )
    report = read_dataset("f.jsonl", data)
    assert not report.ok
    assert [(p.code, p.row, p.message) for p in report.problems] == [
        (
            "duplicate_key",
            2,
            "Line 2: key 'input' appears 2 times in one object (only one value can be kept)",
        ),
        (
            "non_finite_number",
            3,
            "Line 3: the value of key 'output' is NaN, which is not a JSON number",
        ),
        # an inner object is read (and reported) before the object holding it
        (
            "non_finite_number",
            4,
            "Line 4: the value of key 'x' is Infinity, which is not a JSON number",
        ),
        (
            "non_finite_number",
            4,
            "Line 4: the value of key 'score' is -Infinity, which is not a JSON number",
        ),
    ]


def test_json_array_duplicate_keys_and_non_finite_numbers_are_problems() -> None:
    data = b'[{"input": "a", "output": "b"},\n {"input": "a", "output": "b", "output": "c"},\n'
    data += b' {"input": Infinity, "output": "b"}]'
    report = read_dataset("f.json", data)
    assert [(p.code, p.row, p.message) for p in report.problems] == [
        (
            "duplicate_key",
            2,
            "Item 2 (line 2): key 'output' appears 2 times in one object "
            "(only one value can be kept)",
        ),
        (
            "non_finite_number",
            3,
            "Item 3 (line 3): the value of key 'input' is Infinity, which is not a JSON number",
        ),
    ]
    assert read_dataset("f.json", b'[{"input": "NaN", "output": "Infinity"}]').ok
