"""Memory and time of big dataset files: a 1,000,000-row CSV (~71 MB of realistic question and
answer texts), the same rows as JSON Lines and as Parquet, each (a) imported with
`Service.import_dataset` into a fresh SQLite file and (b) run whole with
`scorelab run FILE --scorer keyword-coverage-scorer` (a code scorer: no judge, so the figures
are the import, the engine, the result writer and the summary).

    python bench/big_inputs.py [--rows 1000000] [--formats csv,jsonl,parquet]
                               [--scorer keyword-coverage-scorer] [--no-run]
                               [--code-root PATH]

Every measurement runs in its own subprocess; its peak resident memory is that process's
`VmHWM` (/proc/self/status, read at exit), its time the wall clock around it. The fixed base is
the peak of the same subprocess on a 10-row file of the same format (the interpreter and the
libraries it imports). Target (docs/datasets.md, "Limits"): peak < 4 x the file's size + the
base, and <= 600 MB for the 71 MB CSV, for the import and for the run. For Parquet, whose file
is an eighth of its data, the file's size is taken as its data's (the CSV's): the values are
held decoded while they are checked. Sizes are printed in MiB (the CSV is 67.8 MiB, 71 MB).

`--code-root` measures another checkout of scorelab (e.g. the commit before a change, unpacked
with `git archive`); the generated files and the measuring code stay the same.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024

_SUBJECTS = (
    "the invoice",
    "my password",
    "the API key",
    "a webhook",
    "the export",
    "my plan",
    "the report",
    "a refund",
    "the SDK",
    "2FA",
    "my email",
    "the team",
)
_VERBS = ("reset", "rotate", "cancel", "renew", "get", "change", "verify", "enable", "move")
_PLACES = ("Settings", "Billing", "the CLI", "Admin", "Profile", "the API")


def rows(count: int) -> list[tuple[str, str, str, str]]:
    """`count` rows of (id, input, output, expected): short support questions and answers,
    ~71 bytes a row as CSV, with enough variety that no column is one repeated value."""
    rng = random.Random(11)
    made = []
    for n in range(count):
        verb, subject, place = rng.choice(_VERBS), rng.choice(_SUBJECTS), rng.choice(_PLACES)
        made.append(
            (
                f"q{n:07d}",
                f"How can I {verb} {subject}?",
                f"Use {place} to {verb} it.",
                f"{verb.capitalize()} it.",
            )
        )
    return made


HEADER = ("id", "input", "output", "expected")


def write_files(folder: Path, count: int, formats: list[str]) -> dict[str, Path]:
    data = rows(count)
    written: dict[str, Path] = {}
    if "csv" in formats:
        path = written["csv"] = folder / "big.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(HEADER)
            writer.writerows(data)
    if "jsonl" in formats:
        path = written["jsonl"] = folder / "big.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for row in data:
                handle.write(json.dumps(dict(zip(HEADER, row, strict=True))) + "\n")
    if "parquet" in formats:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = written["parquet"] = folder / "big.parquet"
        columns = list(zip(*data, strict=True)) if data else [()] * len(HEADER)
        table = pa.table(
            {name: pa.array(col, pa.string()) for name, col in zip(HEADER, columns, strict=True)}
        )
        pq.write_table(table, path, row_group_size=100_000)
    return written


_RUNNER = """
import atexit, os, runpy, sys, time

def peak():
    # VmHWM: this process's own high-water mark (ru_maxrss would also count the parent's
    # pages the child held between fork and exec).
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM"))
    with open(os.environ["BENCH_PEAK_FILE"], "w") as out:
        out.write(kb)

atexit.register(peak)
if sys.argv[1] == "import":
    from pathlib import Path
    from core.service import Service
    path = Path(sys.argv[2])
    try:
        info = Service(sys.argv[3]).import_dataset(path.name, path.read_bytes())
    except Exception as error:
        print(f"import failed: {type(error).__name__}: {error}")
        sys.exit(3)
    print(f"{info.item_count} items")
else:
    sys.argv = ["scorelab", *sys.argv[2:]]
    runpy.run_module("core.cli", run_name="__main__")
"""


@dataclass(frozen=True)
class Measured:
    peak_mb: float
    seconds: float
    ok: bool
    note: str


def measure(arguments: list[str], env: dict[str, str]) -> Measured:
    """Run the runner with `arguments` in a subprocess: its peak RSS and wall time."""
    with tempfile.TemporaryDirectory() as folder:
        peak_file = Path(folder) / "peak"
        output = Path(folder) / "output"
        with output.open("w") as sink:
            started = time.perf_counter()
            code = subprocess.call(
                [sys.executable, "-c", _RUNNER, *arguments],
                env={**env, "BENCH_PEAK_FILE": str(peak_file)},
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            seconds = time.perf_counter() - started
        lines = output.read_text().strip().splitlines()
        peak_mb = int(peak_file.read_text()) / 1024 if peak_file.exists() else float("nan")
    ok = code in (0, 1)  # 1: a threshold or failed runs, still a whole run
    note = "" if ok else f"exit {code}: {lines[-1] if lines else ''}"
    return Measured(peak_mb, seconds, ok, note)


def environment(code_root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code_root)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.pop("SCORELAB_DATABASE_URL", None)
    return env


def run_command(path: Path, database: str, scorer: str) -> list[str]:
    return [
        "run",
        "--database-url",
        database,
        "run",
        str(path),
        "--scorer",
        scorer,
        "--no-progress",
    ]


def import_command(path: Path, database: str) -> list[str]:
    return ["import", str(path), database]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--formats", default="csv,jsonl,parquet")
    parser.add_argument("--scorer", default="keyword-coverage-scorer")
    parser.add_argument("--no-run", action="store_true", help="measure the imports only")
    parser.add_argument("--code-root", type=Path, default=ROOT)
    arguments = parser.parse_args()
    formats = [f.strip() for f in arguments.formats.split(",") if f.strip()]
    env = environment(arguments.code_root.resolve())
    print(
        f"code: {arguments.code_root.resolve()}; {arguments.rows:,} rows; scorer {arguments.scorer}"
    )
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        big = write_files(folder, arguments.rows, formats)
        small_folder = folder / "small"
        small_folder.mkdir()
        small = write_files(small_folder, 10, formats)
        header = f"{'':<9}{'what':<8}{'file MiB':>9}{'peak MiB':>9}{'target MiB':>11}{'s':>8}"
        print(header)
        data_mb = _csv_size(folder, arguments.rows) / MB
        for fmt in formats:
            size_mb = big[fmt].stat().st_size / MB
            steps = [("import", import_command)]
            if not arguments.no_run:
                steps.append(("run", lambda p, d: run_command(p, d, arguments.scorer)))
            for what, command in steps:
                base = measure(command(small[fmt], _database(folder, f"b-{fmt}-{what}")), env)
                got = measure(command(big[fmt], _database(folder, f"{fmt}-{what}")), env)
                # A compressed file (Parquet) decodes to its data: that is what must fit.
                target = 4 * max(size_mb, data_mb) + base.peak_mb
                if fmt == "csv":
                    target = min(target, 600.0)
                verdict = "ok" if got.ok and got.peak_mb <= target else "OVER"
                print(
                    f"{fmt:<9}{what:<8}{size_mb:9.1f}{got.peak_mb:9.0f}{target:11.0f}"
                    f"{got.seconds:8.1f}  {verdict} (base {base.peak_mb:.0f} MiB)"
                    f"{'  ' + got.note if got.note else ''}"
                )


def _csv_size(folder: Path, rows: int) -> int:
    """The rows' size as CSV: what a compressed format decodes to."""
    csv_file = folder / "big.csv"
    if not csv_file.exists():
        write_files(folder, rows, ["csv"])
    return csv_file.stat().st_size


def _database(folder: Path, name: str) -> str:
    return f"sqlite:///{folder / (name + '.db')}"


if __name__ == "__main__":
    main()
