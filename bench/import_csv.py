"""Dataset import speed: `read_dataset` (parse + mapping + validation + fingerprint) of a
100k-row CSV, next to a bare `pandas.read_csv` of the same file.

    python bench/import_csv.py [--rows 100000] [--repeat 5]

Target: import + validation within 2x the bare read. Also shown: building the 100k items (done
lazily, only when a dataset is stored) and the whole import into an SQLite store.
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

import pandas as pd

from core.experiments.datasets import read_dataset
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dataset.csv"
        write_csv(path, arguments.rows)
        size_mb = path.stat().st_size / 1e6
        bare, _ = best(lambda: pd.read_csv(path), arguments.repeat)
        as_text, _ = best(
            lambda: pd.read_csv(path, dtype=str, keep_default_na=False), arguments.repeat
        )
        ours, report = best(lambda: read_dataset(path.name, path.read_bytes()), arguments.repeat)
        assert report.ok and report.row_count == arguments.rows, report.problems[:3]
        items, _ = best(lambda: read_dataset(path.name, path.read_bytes()).items, 1)
        service = Service(f"sqlite:///{Path(folder) / 'bench.db'}")
        stored, _ = best(lambda: service.import_dataset(path.name, path.read_bytes()), 1)
        service.store.close()
    print(f"{arguments.rows:,} rows, {size_mb:.1f} MB; best of {arguments.repeat}")
    print(f"  pandas.read_csv (bare, default dtypes)      {bare:7.3f} s")
    print(f"  pandas.read_csv (dtype=str, no NA)          {as_text:7.3f} s")
    print(f"  read_dataset (import + validation)          {ours:7.3f} s")
    print(f"  ratio to the bare read (target <= 2x)       {ours / bare:7.1f}x")
    print(f"  ratio to read_csv(dtype=str)                {ours / as_text:7.1f}x")
    print(f"  ... plus building the items (lazy)          {items:7.3f} s")
    print(f"  whole import into SQLite (Service)          {stored:7.3f} s")


if __name__ == "__main__":
    main()
