"""Hostile and huge dataset files: each limit (rows, decompressed size, cell size, nesting) is
met with a clear problem naming the place, never an exception; what used to crash the importer
(deep nesting, long numbers, CR line ends, big CSV cells, NUL characters) is either read or
refused with its row; large files are read into columns and their items built in chunks."""

from __future__ import annotations

import io
import json

import numpy as np
import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.datasets import _csv_reader
from core.datasets.upload import (
    ImportLimits,
    dataset_fingerprint,
    read_dataset,
    read_upload,
)
from core.records import ImportReport

MB = 1024 * 1024


def codes(report: ImportReport) -> list[str]:
    return [p.code for p in report.problems]


def messages(report: ImportReport) -> list[str]:
    return [p.message for p in report.problems]


def parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def one_value_column(rows: int, value: str) -> pa.DictionaryArray:
    """`rows` times the same value, dictionary-encoded: a few bytes per row on disk."""
    indices = pa.array(np.zeros(rows, dtype=np.int32))
    return pa.DictionaryArray.from_arrays(indices, pa.array([value]))


def workbook(rows: list[list[object]]) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# ---- Parquet bombs ----


def test_a_parquet_file_over_the_row_limit_is_refused_from_its_metadata() -> None:
    column = one_value_column(3_000_000, "same question")
    data = parquet(pa.table({"input": column, "output": column}))
    assert len(data) < 1 * MB  # tiny on disk
    report = read_dataset("bomb.parquet", data)
    assert codes(report) == ["too_many_rows"]
    assert messages(report) == [
        "The file has 3,000,000 rows, over the row limit of 2,000,000; split it into smaller files"
    ]


def test_a_parquet_file_that_decodes_past_the_limit_is_refused_before_decoding() -> None:
    column = one_value_column(20_000, "x" * 1000)  # 20 MB once decoded
    data = parquet(pa.table({"input": column, "output": column}))
    report = read_dataset("bomb.parquet", data, limits=ImportLimits(decompressed_bytes=4 * MB))
    assert codes(report) == ["too_large_decompressed"]
    message = messages(report)[0]
    assert "over the limit of 4 MB" in message and "before decoding them" in message
    assert read_dataset("ok.parquet", data).ok  # within the default limits


def test_numbers_that_decode_past_the_limit_are_refused_from_the_metadata() -> None:
    """Run-length encoding stores a repeated number in a few bytes: the footer's value counts
    say what it decodes to, before anything is read."""
    zeros = pa.array(np.zeros(200_000, dtype=np.int64))
    data = parquet(pa.table({"input": ["q"] * 200_000, "output": ["a"] * 200_000, "n": zeros}))
    assert len(data) < 100_000
    report = read_dataset("ints.parquet", data, limits=ImportLimits(decompressed_bytes=1 * MB))
    assert codes(report) == ["too_large_decompressed"]
    assert "from the file's metadata, before reading it" in messages(report)[0]


def test_a_parquet_value_over_the_cell_limit_names_its_row() -> None:
    data = parquet(pa.table({"input": ["a", "b", "z" * 5000], "output": ["x", "y", "w"]}))
    report = read_dataset("cell.parquet", data, limits=ImportLimits(cell_bytes=1000))
    assert codes(report) == ["cell_too_large"]
    assert messages(report) == [
        "Row 3: the value in column 'input' is 4.9 KB, over the cell limit of 1000 bytes"
    ]
    assert (report.problems[0].row, report.problems[0].column) == (3, "input")


def test_parquet_nulls_nested_values_and_numbers_keep_their_fingerprint() -> None:
    frame = pd.DataFrame(
        {
            "input": ["q1", "q2", "q3"],
            "output": ["a1", "a2", "a3"],
            "expected": ["e1", None, "e3"],
            "n": [1, 2, 3],
            "tags": [["t1"], [], None],
        }
    )
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    upload = read_upload("f.parquet", buffer.getvalue()).map()
    assert upload.report.ok, upload.report.problems
    items = upload.items()
    assert [i.ground_truth for i in items] == ["e1", None, "e3"]
    assert items[0].metadata == {"n": 1, "tags": ["t1"]}
    assert items[2].metadata == {"n": 3, "tags": None}
    assert upload.report.fingerprint == dataset_fingerprint(items)


# ---- workbook bombs ----


def test_a_workbook_over_the_row_limit_is_refused_while_reading() -> None:
    data = workbook([["input", "output"], *([f"q{n}", f"a{n}"] for n in range(150))])
    report = read_dataset("bomb.xlsx", data, limits=ImportLimits(rows=100))
    assert codes(report) == ["too_many_rows"]
    assert messages(report) == [
        "The sheet has more than 100 rows, over the row limit (sheet row 102); split it into "
        "smaller files"
    ]


def test_a_workbook_that_unzips_past_the_limit_is_refused_before_reading() -> None:
    data = workbook([["input", "output"], ["q", "a" * 50_000]])  # compresses to little
    report = read_dataset("bomb.xlsx", data, limits=ImportLimits(decompressed_bytes=20_000))
    assert codes(report) == ["too_large_decompressed"]
    assert messages(report)[0].startswith("The workbook unzips to ")
    assert "over the limit of 19.5 KB (checked before reading it)" in messages(report)[0]


def test_a_workbook_cell_over_the_cell_limit_names_its_row_and_column() -> None:
    data = workbook([["input", "output"], ["q", "a"], ["q", "b" * 3000]])
    report = read_dataset("big.xlsx", data, limits=ImportLimits(cell_bytes=1000))
    assert codes(report) == ["cell_too_large"]
    assert messages(report) == [
        "Row 2 (sheet row 3): the value in column 'output' is 2.9 KB, over the cell limit of "
        "1000 bytes"
    ]


def test_a_workbook_text_far_over_the_cell_limit_is_refused_before_parsing() -> None:
    """openpyxl holds a cell's text whole (twice) before it can be measured: a text over six
    times the limit (more than any escaping explains) is found while unzipping."""
    data = workbook([["input", "output"], ["q", "b" * 20_000]])
    report = read_dataset("big.xlsx", data, limits=ImportLimits(cell_bytes=1000))
    assert codes(report) == ["cell_too_large"]
    message = messages(report)[0]
    assert message.startswith("The workbook's xl/")
    assert "holds a text of more than 5.9 KB, so a value over the cell limit of 1000 bytes" in (
        message
    )


def test_a_workbook_reads_as_pandas_did() -> None:
    """Blank rows in the middle are kept, those at the end are not; an empty or repeated header
    cell is named as pandas names it; whole numbers are integers."""
    data = workbook(
        [
            ["id", "input", "output", None, "id"],
            [1, "a", "x", None, "k"],
            [None],
            [2.0, "b", 3.5],
            [None, None],
        ]
    )
    report = read_dataset("sheet.xlsx", data)
    assert report.columns == ["id", "input", "output", "Unnamed: 3", "id.1"]
    assert report.row_count == 3
    assert report.preview[0] == {
        "id": 1,
        "input": "a",
        "output": "x",
        "Unnamed: 3": None,
        "id.1": "k",
    }
    assert report.preview[2]["id"] == 2 and report.preview[2]["output"] == 3.5
    assert messages(report)[0] == "Row 2 (sheet row 3): the input (column 'input') is empty"


# ---- JSON: nesting and long numbers ----


@pytest.mark.parametrize("depth", [101, 900, 5000])
def test_deeply_nested_json_lines_name_the_line(depth: int) -> None:
    data = (
        b'{"input": "a", "output": "b"}\n'
        + ('{"input": "a", "output": ' + nested(depth) + "}\n").encode()
    )
    report = read_dataset("deep.jsonl", data)
    assert codes(report) == ["too_deeply_nested"]
    assert report.problems[0].row == 2
    assert messages(report)[0].startswith("Line 2: the ")
    assert "nested deeper than the limit of 100 levels" in messages(report)[0]


def test_nesting_up_to_the_limit_is_read() -> None:
    data = ('{"input": "a", "output": ' + nested(100) + "}\n").encode()
    upload = read_upload("deep.jsonl", data).map()
    assert upload.report.ok, upload.report.problems
    assert json.dumps(upload.items()[0].output) == nested(100)


@pytest.mark.parametrize("depth", [900, 5000])
def test_deeply_nested_json_arrays_name_the_item_and_line(depth: int) -> None:
    data = '[{"input": "a", "output": "b"},\n{"input": "a", "output": ' + nested(depth) + "}]"
    report = read_dataset("deep.json", data.encode())
    assert codes(report) == ["too_deeply_nested"]
    assert messages(report)[0].startswith("Item 2 (line 2): ")


def test_a_number_over_4300_digits_names_its_line() -> None:
    data = '{"input": "a", "output": "b"}\n{"input": "a", "output": ' + "9" * 5000 + "}\n"
    report = read_dataset("long.jsonl", data.encode())
    assert messages(report) == [
        "Line 2: a number has 5,000 digits, over the limit of 4,300 that can be read"
    ]
    assert codes(report) == ["number_too_long"]
    report = read_dataset("long.json", ('[{"input": "a", "output": ' + "9" * 5000 + "}]").encode())
    assert messages(report) == [
        "Item 1 (line 1): a number has 5,000 digits, over the limit of 4,300 that can be read"
    ]


def test_json_lines_over_the_row_limit_are_refused_while_reading() -> None:
    data = b'{"input": "a", "output": "b"}\n' * 12
    report = read_dataset("many.jsonl", data, limits=ImportLimits(rows=10))
    assert codes(report) == ["too_many_rows"]
    assert "more than 10 rows" in messages(report)[0] and "line 11" in messages(report)[0]
    assert read_dataset("many.jsonl", data, limits=ImportLimits(rows=12)).ok


def test_a_json_value_over_the_cell_limit_names_its_line_and_key() -> None:
    data = b'{"input": "a", "output": "b"}\n{"input": "a", "output": "' + b"x" * 3000 + b'"}\n'
    report = read_dataset("big.jsonl", data, limits=ImportLimits(cell_bytes=1000))
    assert messages(report) == [
        "Line 2: the value of key 'output' is 2.9 KB, over the cell limit of 1000 bytes"
    ]


# ---- CSV: line ends, big cells, many rows ----


def test_csv_with_cr_only_line_ends_is_read() -> None:
    upload = read_upload("mac.csv", b"id,input,output\rq1,a,b\rq2,c,d\r").map()
    assert upload.report.ok, upload.report.problems
    assert [(i.id, i.input, i.output) for i in upload.items()] == [
        ("q1", "a", "b"),
        ("q2", "c", "d"),
    ]


def test_a_malformed_csv_with_cr_only_line_ends_names_the_row() -> None:
    report = read_dataset("mac.csv", b"input,output\ra,b\rc,d,e\r")
    assert messages(report) == ["Row 2 (line 3): 3 fields, but the header has 2"]


def test_a_quoted_csv_cell_of_3_mb_is_read() -> None:
    big = "word " * (3 * MB // 5 + 1000)
    data = b'id,input,output\nq1,a,"' + big.encode() + b'"\nq2,b,c\n'
    upload = read_upload("big.csv", data).map()
    assert upload.report.ok, upload.report.problems
    assert upload.items()[0].output == big
    malformed = data + b"q3,x\n"  # read again by the csv module, whose own limit is 128 KB
    assert messages(read_dataset("big.csv", malformed)) == [
        "Row 3 (line 4): 2 fields, but the header has 3"
    ]


def test_a_csv_cell_over_the_cell_limit_names_its_row_and_column() -> None:
    data = b'input,output\na,b\nc,"' + b"x" * 3000 + b'"\n'
    report = read_dataset("big.csv", data, limits=ImportLimits(cell_bytes=1000))
    assert codes(report) == ["cell_too_large"]
    assert messages(report) == [
        "Row 2: the value in column 'output' is 2.9 KB, over the cell limit of 1000 bytes"
    ]


def test_csv_rows_over_the_limit_are_refused_but_trailing_blank_lines_are_no_rows() -> None:
    data = b"input,output\n" + b"q,a\n" * 12
    report = read_dataset("many.csv", data, limits=ImportLimits(rows=10))
    assert messages(report) == [
        "The file has 12 rows, over the row limit of 10; split it into smaller files"
    ]
    assert read_dataset("many.csv", data + b"\n\n", limits=ImportLimits(rows=12)).ok


def test_a_large_csv_over_the_row_limit_is_refused_while_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file big enough to have its lines counted first is parsed block by block and refused
    as soon as its rows pass the limit; quoted line breaks do not count as rows."""
    monkeypatch.setattr(_csv_reader, "_COUNT_LINES_FROM_BYTES", 0)
    data = b"input,output\n" + b"q,a\n" * 12
    report = read_dataset("many.csv", data, limits=ImportLimits(rows=10))
    assert codes(report) == ["too_many_rows"]
    assert "more than 10 rows" in messages(report)[0]
    quoted = b"input,output\n" + b'q,"line one\nline two"\n' * 8 + b"\n\n"
    upload = read_upload("quoted.csv", quoted, limits=ImportLimits(rows=10)).map()
    assert upload.report.ok, upload.report.problems
    assert upload.items()[0].output == "line one\nline two"


# ---- NUL characters ----


def test_a_nul_character_in_an_id_names_the_row() -> None:
    report = read_dataset("nul.csv", b"id,input,output\nq1,a,b\nq\x002,c,d\n")
    assert codes(report) == ["nul_character"]
    assert messages(report) == [
        "Row 2: the id (column 'id') holds a NUL character (\\x00), which the database cannot store"
    ]
    assert (report.problems[0].row, report.problems[0].column) == (2, "id")


def test_a_nul_character_anywhere_in_a_json_value_names_the_line() -> None:
    lines = [
        {"input": "a", "output": "b"},
        {"input": "a", "output": "b", "context": {"docs": ["fine", "bad\u0000"]}},
        {"input": "a\u0000", "output": "b"},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    report = read_dataset("nul.jsonl", data)
    assert messages(report) == [
        "Line 3: the input (key 'input') holds a NUL character (\\x00), which the database "
        "cannot store",
        "Line 2: the metadata (key 'context') holds a NUL character (\\x00), which the "
        "database cannot store",
    ]


# ---- read in columns, built in chunks ----


def test_json_lines_are_read_into_text_columns_with_nulls() -> None:
    lines = [
        {"id": f"q{n}", "input": f"question {n}", "output": f"answer {n}", "expected": None}
        if n % 3 == 0
        else {"id": f"q{n}", "input": f"question {n}", "output": f"answer {n}"}
        for n in range(45_000)  # several chunks of the column builder
    ]
    lines[44_999]["late"] = "a key seen last"
    data = "\n".join(json.dumps(line) for line in lines).encode()
    parsed = read_upload("many.jsonl", data)
    assert str(parsed.table.frame["input"].dtype) == "str"  # no Python object per cell
    upload = parsed.map()
    assert upload.report.ok, upload.report.problems
    assert upload.report.columns == ["id", "input", "output", "expected", "late"]
    chunks = list(upload.item_chunks(10_000))
    assert [len(c) for c in chunks] == [10_000] * 4 + [5_000]
    items = [item for chunk in chunks for item in chunk]
    assert items[1].ground_truth is None and items[1].metadata == {"late": None}
    assert items[-1].metadata == {"late": "a key seen last"}
    assert upload.report.fingerprint == dataset_fingerprint(items)
    as_csv = pd.DataFrame(lines).to_csv(index=False).encode()
    csv_report = read_dataset("many.csv", as_csv)
    # CSV has no null: its empty cells are empty texts, another content for metadata.
    assert csv_report.row_count == upload.report.row_count


def test_repeated_ids_are_found_by_sorting_in_a_long_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.datasets import _row_checks

    monkeypatch.setattr(_row_checks, "_SORT_FROM_ROWS", 0)
    distinct = b"id,input,output\n" + b"".join(b"i%d,q,a\n" % n for n in range(50))
    assert read_dataset("ids.csv", distinct).ok
    report = read_dataset("ids.csv", distinct + b"i7,q,a\n")
    assert messages(report) == ["Duplicate id 'i7' (column 'id') in row 8 and row 51"]


def test_the_fingerprint_is_the_same_when_lengths_are_hashed_in_groups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.datasets import _fingerprint

    rows = (b"i%d,question %d,\xc3\xa9 answer %d\n" % (n, n, n) for n in range(40_000))
    data = b"id,input,output\n" + b"".join(rows)  # over a megabyte: several pyarrow chunks
    whole = read_dataset("f.csv", data).fingerprint
    monkeypatch.setattr(_fingerprint, "_LENGTHS_PER_UPDATE", 20_000)
    parsed = read_upload("f.csv", data)
    assert parsed.table.frame["input"].array.__arrow_array__().num_chunks > 1
    upload = parsed.map()
    assert upload.report.fingerprint == whole == dataset_fingerprint(upload.items())


def test_items_without_an_id_column_are_numbered_in_every_chunk() -> None:
    data = b"input,output\n" + b"q,a\n" * 12
    chunks = list(read_upload("f.csv", data).map().item_chunks(5))
    assert [[i.id for i in c] for c in chunks] == [
        ["1", "2", "3", "4", "5"],
        ["6", "7", "8", "9", "10"],
        ["11", "12"],
    ]


def test_an_unexpected_reader_error_is_a_problem_not_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.datasets import _csv_reader

    def broken(data: bytes, limits: ImportLimits) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(_csv_reader, "read_csv", broken)  # looked up at each read
    report = read_dataset("f.csv", b"input,output\na,b\n")
    assert messages(report) == ["The file cannot be read as CSV: values nested too deeply"]
