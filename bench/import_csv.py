"""Dataset import speed: `read_dataset` (parse + mapping + validation + fingerprint) of a
100k-row CSV, next to a bare `pandas.read_csv` of the same file.

    python bench/import_csv.py [--rows 100000] [--repeat 15]

Target: import + validation within 2x the bare read. Also shown: the preview of another mapping
of the file already parsed (what the Datasets page does when the mapping changes), building the
100k items (done lazily, only when a dataset is stored) and the whole import into an SQLite
store, and, to see where the time goes, the two costs `read_dataset` cannot avoid: pyarrow's
parse of the file into text columns, and BLAKE3 over as many bytes as the content fingerprint
hashes (the fingerprint is one BLAKE3 stream, so it can only start once the parse is done; it
runs while the rows are checked).
"""

from __future__ import annotations

import argparse
import csv
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from core.datasets.upload import read_dataset, read_upload
from core.service import Service


def write_csv(path: Path, rows: int) -> None:
    rng = random.Random(7)
    topics = ["billing", "api", "python", "webhooks", "security"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "answer", "expected", "topic"])
        for n in range(rows):
            writer.writerow(
                [
                    f"item-{n:06d}",
                    f"How do I configure option {n} for the {rng.choice(topics)} module?",
                    f"Set option {n} in the settings file, then restart the service; "
                    f"it takes effect at once (über-fast, ≤ {rng.randint(1, 9)} s).",
                    f"Set option {n} in the settings and restart.",
                    rng.choice(topics),
                ]
            )


def best(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fastest, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest, value


def interleaved(
    first: Callable[[], Any], second: Callable[[], Any], repeat: int
) -> tuple[list[float], list[float]]:
    """Seconds per run of each, alternating (after one warm-up run of each)."""
    first(), second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for function, spent in ((first, times[0]), (second, times[1])):
            started = time.perf_counter()
            function()
            spent.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dataset.csv"
        write_csv(path, arguments.rows)
        size_mb = path.stat().st_size / 1e6
        # Interleaved, so both see the same load on a shared machine.
        bare_times, our_times = interleaved(
            lambda: pd.read_csv(path),
            lambda: read_dataset(path.name, path.read_bytes()),
            arguments.repeat,
        )
        bare, ours = min(bare_times), min(our_times)
        ratios = sorted(o / b for o, b in zip(our_times, bare_times, strict=True))
        report = read_dataset(path.name, path.read_bytes())
        assert report.ok and report.row_count == arguments.rows, report.problems[:3]
        as_text, _ = best(
            lambda: pd.read_csv(path, dtype=str, keep_default_na=False), arguments.repeat
        )
        parse, _ = best(lambda: _arrow_text_columns(path), arguments.repeat)
        # The fingerprint hashes the mapped text plus an 8-byte length per value and column.
        hashed = path.read_bytes() + bytes(8 * arguments.rows * 5)
        digest, _ = best(lambda: blake3.blake3(hashed).hexdigest(), arguments.repeat)
        parsed = read_upload(path.name, path.read_bytes())
        remap, _ = best(lambda: parsed.map(report.mapping_used).report, arguments.repeat)
        items, _ = best(lambda: parsed.map().items(), 1)
        service = Service(f"sqlite:///{Path(folder) / 'bench.db'}")
        stored, _ = best(lambda: service.import_dataset(path.name, path.read_bytes()), 1)
        service.store.close()
    print(f"{arguments.rows:,} rows, {size_mb:.1f} MB; best of {arguments.repeat} (interleaved)")
    print(f"  pandas.read_csv (bare, default dtypes)      {bare:7.3f} s")
    print(f"  pandas.read_csv (dtype=str, no NA)          {as_text:7.3f} s")
    print(f"  read_dataset (import + validation)          {ours:7.3f} s")
    print(f"  ratio to the bare read (target <= 2x)       {ours / bare:7.1f}x  (best to best)")
    print(
        f"  ratio, run by run: median {ratios[len(ratios) // 2]:.1f}x, "
        f"range {ratios[0]:.1f}-{ratios[-1]:.1f}x"
    )
    print(f"  ratio to read_csv(dtype=str)                {ours / as_text:7.1f}x")
    print(f"  unavoidable: pyarrow's parse to text        {parse:7.3f} s")
    print(f"  unavoidable: BLAKE3 of the hashed bytes     {digest:7.3f} s")
    print(f"  re-mapping the parsed file (no second parse) {remap:7.3f} s")
    print(f"  ... plus building the items (lazy)          {items:7.3f} s")
    print(f"  whole import into SQLite (Service)          {stored:7.3f} s")


def _arrow_text_columns(path: Path) -> pa.Table:
    """The parse `read_dataset` does: every column as text, quoted newlines allowed."""
    with path.open("rb") as handle:
        names = next(csv.reader([handle.readline().decode()]))
    return pa_csv.read_csv(
        pa.BufferReader(path.read_bytes()),
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pa_csv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
        convert_options=pa_csv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False
        ),
    )


if __name__ == "__main__":
    main()
