"""The HTML report built a page of items at a time (`write_experiment_html`, what `scorelab
export --html` writes) is the report of the whole experiment, byte for byte: plain and
gzip-compressed, with failures in memory, judge executions, reviews and hostile text, for
any page size; and its data is streamed (written in pieces, never the whole payload at once)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from core.exchange.html import experiment_html, write_experiment_html
from core.records import ExperimentDetail, Review

from ._records import build_detail

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def pages(detail: ExperimentDetail, size: int) -> Iterator[ExperimentDetail]:
    """The experiment's items `size` at a time, each page with its items' runs."""
    for start in range(0, max(len(detail.items), 1), size):
        items = detail.items[start : start + size]
        ids = {item.id for item in items}
        yield detail.model_copy(
            update={
                "items": items,
                "results": [r for r in detail.results if r.item_id in ids],
                "failures": [f for f in detail.failures if f.item_id in ids],
                "reviews": [],  # the report takes every review apart
            }
        )


def reviewed(detail: ExperimentDetail) -> ExperimentDetail:
    items = [item.id for item in detail.items]
    reviews = [
        Review(
            experiment_id=detail.info.id,
            item_id=items[-1],
            scorer_id=detail.info.scorer_ids[0],
            verdict="wrong",
            note="<b>late</b> page",
            reviewer="ann",
            created_at=AT,
            updated_at=AT,
        ),
        Review(
            experiment_id=detail.info.id,
            item_id=items[0],
            scorer_id="*",
            verdict="right",
            reviewer="bob",
            created_at=AT,
            updated_at=AT,
        ),
    ]
    return detail.model_copy(update={"reviews": reviews})


@pytest.mark.parametrize("size", [1, 2, 1_000])
@pytest.mark.parametrize("compress_over", [100, 2_000_000], ids=["gzip", "plain"])
def test_a_report_built_by_pages_is_the_whole_report(size: int, compress_over: int) -> None:
    detail = reviewed(build_detail())
    assert detail.failures and detail.failures_in_memory and len(detail.items) > 2
    whole = experiment_html(detail, generated_at=AT, compress_over=compress_over)
    pieces: list[str] = []
    advanced: list[int] = []
    write_experiment_html(
        pieces.append,
        detail.info,
        pages(detail, size),
        reviews=detail.reviews,
        generated_at=AT,
        compress_over=compress_over,
        advance=advanced.append,
    )
    assert "".join(pieces) == whole
    assert sum(advanced) == len(detail.items)
    assert len(advanced) == -(-len(detail.items) // size)
    if compress_over == 100:
        assert 'data-encoding="gzip+base64"' in whole
    assert "late</b>" not in whole and "&lt;b&gt;late&lt;/b&gt; page" in whole


def test_an_experiment_without_items_gives_the_same_report() -> None:
    detail = build_detail().model_copy(update={"items": [], "results": [], "failures": []})
    out = io.StringIO()
    write_experiment_html(out.write, detail.info, pages(detail, 5), generated_at=AT)
    assert out.getvalue() == experiment_html(detail, generated_at=AT)
    out = io.StringIO()
    write_experiment_html(out.write, detail.info, [], generated_at=AT)  # no page at all
    unknown = detail.model_copy(update={"failures_in_memory": False})  # no page says
    assert out.getvalue() == experiment_html(unknown, generated_at=AT)


def test_the_data_is_written_in_pieces() -> None:
    """No piece holds the whole payload: it is copied from the spooled pages in chunks."""
    detail = build_detail()
    pieces: list[str] = []
    write_experiment_html(pieces.append, detail.info, pages(detail, 1), generated_at=AT)
    data_start = next(n for n, piece in enumerate(pieces) if 'id="report-data"' in piece)
    assert len(pieces) - data_start >= 4  # the opening tag, the pages' data, the closing tag
