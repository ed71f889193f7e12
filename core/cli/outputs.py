"""The export files of an experiment (JSON, CSV, HTML), as `scorelab run` and `scorelab export`
write them: each whole or not at all (through a temporary file beside it), every piece masked
(`masked_export`: no key the process holds reaches a file), JSON and CSV a page of items at a
time, with a progress bar of the items written. `-` writes to stdout instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from core.cli._errors import CliError
from core.cli._progress import Bar
from core.cli._text import printable
from core.records import ExperimentDetail, ExperimentInfo, Review, ScorerUsage

if TYPE_CHECKING:
    from core.service.terminal import LabelAgreement

__all__ = [
    "STDOUT",
    "Export",
    "ExportSource",
    "ReportSource",
    "TextOut",
    "csv_export",
    "html_pages_export",
    "json_export",
    "write_export",
]

STDOUT = Path("-")
"""The path that means standard output (`scorelab export --json -`)."""

JsonObject = dict[str, object]
"""A JSON object, as `json.loads` gives it."""


class TextOut(Protocol):
    """Where an export is written: a text file, or stdout."""

    def write(self, text: str, /) -> int: ...


class ExportSource(Protocol):
    """What the JSON and CSV exports read: the `Service`, or the quick read of one experiment
    through the database driver (`core.service.export_source`), which answers the same."""

    def experiment_pages(self, experiment_id: str) -> Iterator[ExperimentDetail]: ...

    def judge_usage(self, experiment_id: str, *, priced: bool = ...) -> list[ScorerUsage]: ...


class ReportSource(ExportSource, Protocol):
    """What the HTML report reads besides the pages: every review of the experiment."""

    def reviews(self, experiment_id: str) -> list[Review]: ...


@dataclass(frozen=True, slots=True)
class Export:
    """One export file: how to write it, `advance(n)` called after each `n` items written, and
    how many items it holds (None: written in one piece)."""

    kind: str
    write: Callable[[TextOut, Callable[[int], None]], None]
    items: int | None


def json_export(
    service: ExportSource,
    experiment_id: str,
    *,
    total_items: int,
    thresholds: Sequence[JsonObject] | None = None,
    agreement: LabelAgreement | None = None,
) -> Export:
    """`experiment_json` of the whole experiment, written a page of items at a time: the
    document around its `items` (the same for every page) from the first page, then each
    page's items."""
    from core.service.terminal import experiment_json

    def write(out: TextOut, advance: Callable[[int], None]) -> None:
        marker = json.dumps(f"items-{uuid.uuid4().hex}")
        around: JsonObject | None = None
        items = 0
        reviews: list[JsonObject] = []  # each page holds its items' reviews; they follow `items`
        usage = service.judge_usage(experiment_id, priced=False)  # unpriced: no litellm
        for page in service.experiment_pages(experiment_id):
            document = experiment_json(
                page, thresholds=thresholds, agreement=agreement, usage=usage
            )
            reviews += document.get("reviews", [])
            if around is None:
                around = {**document, "items": json.loads(marker)}
                out.write(_json(around).split(marker)[0] + "[")
            page_items: list[JsonObject] = document["items"]
            for item in page_items:
                text = _json(item).replace("\n", "\n    ")
                out.write((",\n    " if items else "\n    ") + text)
                items += 1
            advance(len(page_items))
        assert around is not None  # experiment_pages gives one page at least
        tail = _json({**around, "reviews": reviews}).split(marker)[1]
        out.write(("\n  ]" if items else "]") + tail)

    return Export("json", write, total_items)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def csv_export(service: ExportSource, experiment_id: str, *, total_items: int) -> Export:
    """`results_csv` of the whole experiment, written a page of items at a time (the header
    once: every row has the same columns)."""
    from core.service.terminal import results_csv

    def write(out: TextOut, advance: Callable[[int], None]) -> None:
        header_written = False
        empty = ""
        for page in service.experiment_pages(experiment_id):
            text = results_csv(page)
            advance(len(page.items))
            if not page.results and not page.failures:
                empty = empty or text  # the header of a file without rows
                continue
            out.write(text if not header_written else text.split("\r\n", 1)[1])
            header_written = True
        if not header_written:
            out.write(empty)

    return Export("csv", write, total_items)


def html_pages_export(
    source: ReportSource,
    info: ExperimentInfo,
    *,
    thresholds: Sequence[JsonObject] | None = None,
    agreement: LabelAgreement | None = None,
) -> Export:
    """The HTML report of the whole experiment, built a page of items at a time
    (`write_experiment_html`: the same report as from the whole experiment, in memory bounded
    by a page), with a bar of the items read."""
    from core.service.terminal import write_experiment_html

    def write(out: TextOut, advance: Callable[[int], None]) -> None:
        write_experiment_html(
            out.write,
            info,
            source.experiment_pages(info.id),
            reviews=source.reviews(info.id),
            agreement=agreement,
            thresholds=thresholds,
            advance=advance,
        )

    return Export("html", write, info.total_items)


def write_export(path: Path, export: Export, *, show: bool) -> None:
    """Write `export` to `path` (stdout for `-`), with a bar of the items written."""
    name = "stdout" if path == STDOUT else printable(path.name)
    unit = None if export.items is None else "items"
    with Bar(f"{export.kind} {name}", total=export.items, unit=unit, show=show) as bar:
        written = 0

        def advance(items: int) -> None:
            nonlocal written
            written += items
            bar.update(written)

        if path == STDOUT:
            export.write(_MaskedWriter(sys.stdout), advance)
            sys.stdout.flush()
        else:
            _write_whole(path, lambda out: export.write(out, advance))


def _write_whole(path: Path, write: Callable[[TextOut], None]) -> None:
    """Write `path` through a temporary file beside it, every piece masked: a reader (or a
    crash) never finds a half-written export, and an older file stays until the new one is
    complete."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline="") as out:
            write(_MaskedWriter(out))
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise CliError(f"{path}: cannot write it ({error.strerror or error})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class _MaskedWriter:
    """A text file whose every write has the process's keys masked (`masked_export`); each
    piece written is a whole JSON value, CSV page or HTML report, so no key is cut in two."""

    def __init__(self, out: TextIO) -> None:
        from core.service.terminal import masked_export

        self._out = out
        self._mask = masked_export

    def write(self, text: str) -> int:
        return self._out.write(self._mask(text))
