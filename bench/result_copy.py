"""What the foreign key `scorer_results.experiment_id -> experiments.id` costs a batch of
results (issue 22): `result_rows.insert_rows` of N rows in one transaction, with the key and
without it, alternately, on PostgreSQL (and SQLite: `PRAGMA foreign_keys` on and off).

    python bench/result_copy.py --database-url postgresql://.../db [--rows 100000] [--rounds 3]
        [--no-sqlite] [--no-postgres] [--indexes]

PostgreSQL works in a fresh schema of that database (dropped at the end); the key is added or
dropped before each measure and the table emptied (TRUNCATE). Printed per measure: wall time,
the server backend's CPU time (its /proc/<pid>/stat: the server runs on this machine) and this
process's CPU time; then the medians and their ratios to the first variant's. `--indexes`
adds, on PostgreSQL, the table without its foreign key and without `ix_scorer_results_aggregates`,
without the unique key, and without both (what each index costs the server per row COPYed; the
pages need both).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy

from core.records import ColumnMapping, DatasetItem, ScorerSpec
from core.run_results import database_json
from core.storage import Store
from core.storage.result_rows import insert_rows
from core.storage.tables import AGGREGATE_COLUMNS

_FK = "scorer_results_experiment_id_fkey"
_TICK = os.sysconf("SC_CLK_TCK")


def rows_of(experiment_id: str, count: int) -> list[tuple[Any, ...]]:
    """Rows as a code scorer's run writes them (result without the item's texts)."""
    return [
        (
            experiment_id,
            f"q{n}",
            "keyword-coverage-scorer",
            (n % 97) / 96,
            "null",
            database_json({"score": (n % 97) / 96, "runId": str(uuid.UUID(int=n))}),
            0,
            None,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            0,
            True,
            None,
        )
        for n in range(count)
    ]


def experiment(store: Store) -> str:
    dataset = store.save_dataset(
        name="copy",
        file_name="copy.csv",
        format="csv",
        fingerprint="c" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=[DatasetItem(id="q0", input="q", output="a")],
    )
    return store.create_experiment(
        name="copy",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=["keyword-coverage-scorer"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=8,
    ).id


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


_UNIQUE = "scorer_results_experiment_id_item_id_scorer_id_key"  # 0001's, as PostgreSQL names it

POSTGRES_VARIANTS = {
    "with FK": (True, True, True),
    "without FK": (False, True, True),
    "no aggregates ix": (False, False, True),
    "no unique key": (False, True, False),
    "primary key only": (False, False, False),
    "aggregates INCLUDE": (False, "include", True),
}
"""Per variant: (the foreign key, `ix_scorer_results_aggregates`, the unique key) present; the
last has that index keyed on its first four columns, the sums' columns `INCLUDE`d (PostgreSQL
11+: not compared, kept in the leaves only)."""


def postgres_round(engine: sqlalchemy.Engine, rows: list[tuple[Any, ...]], variant: str) -> tuple:
    fk, aggregates, unique = POSTGRES_VARIANTS[variant]
    with engine.begin() as connection:  # the table emptied, then given the variant's objects
        connection.exec_driver_sql("TRUNCATE scorer_results")
        connection.exec_driver_sql(f"ALTER TABLE scorer_results DROP CONSTRAINT IF EXISTS {_FK}")
        connection.exec_driver_sql(
            f"ALTER TABLE scorer_results DROP CONSTRAINT IF EXISTS {_UNIQUE}"
        )
        connection.exec_driver_sql("DROP INDEX IF EXISTS ix_scorer_results_aggregates")
        if fk:
            connection.exec_driver_sql(
                f"ALTER TABLE scorer_results ADD CONSTRAINT {_FK} FOREIGN KEY (experiment_id) "
                "REFERENCES experiments (id)"
            )
        if unique:
            connection.exec_driver_sql(
                f"ALTER TABLE scorer_results ADD CONSTRAINT {_UNIQUE} "
                "UNIQUE (experiment_id, item_id, scorer_id)"
            )
        if aggregates == "include":
            connection.exec_driver_sql(
                "CREATE INDEX ix_scorer_results_aggregates ON scorer_results "
                f"({', '.join(AGGREGATE_COLUMNS[:4])}) INCLUDE ({', '.join(AGGREGATE_COLUMNS[4:])})"
            )
        elif aggregates:
            connection.exec_driver_sql(
                "CREATE INDEX ix_scorer_results_aggregates ON scorer_results "
                f"({', '.join(AGGREGATE_COLUMNS)})"
            )
    with engine.connect() as connection:
        pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        connection.rollback()
        server, client, wall = backend_cpu(pid), time.process_time(), time.perf_counter()
        with connection.begin():
            written = insert_rows(connection, rows)
        wall = time.perf_counter() - wall
        client = time.process_time() - client
        server = backend_cpu(pid) - server
    assert written == len(rows), written
    return wall, server, client


def sqlite_round(engine: sqlalchemy.Engine, rows: list[tuple[Any, ...]], variant: str) -> tuple:
    fk = variant == "with FK"
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM scorer_results")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"PRAGMA foreign_keys={'ON' if fk else 'OFF'}")
        connection.commit()  # outside a transaction, where the pragma takes effect
        client, wall = time.process_time(), time.perf_counter()
        with connection.begin():
            written = insert_rows(connection, rows)
        wall = time.perf_counter() - wall
        client = time.process_time() - client
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        connection.commit()
    assert written == len(rows), written
    return wall, None, client


def alternate(label: str, measure: Any, variants: list[str], rounds: int) -> None:
    """Each variant once per round, the order rotated from round to round."""
    found: dict[str, list[tuple]] = {variant: [] for variant in variants}
    for round_ in range(rounds):
        shift = round_ % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            wall, server, client = measure(variant)
            found[variant].append((wall, server, client))
            cpu = "" if server is None else f"  server CPU {server:5.2f} s"
            print(
                f"  {label} round {round_ + 1} {variant:<16}  wall {wall:5.2f} s{cpu}  "
                f"client CPU {client:5.2f} s  load {Path('/proc/loadavg').read_text().split()[0]}"
            )
    for index, name in ((0, "wall"), (1, "server CPU"), (2, "client CPU")):
        medians = {
            variant: statistics.median(m[index] for m in found[variant])
            for variant in variants
            if all(m[index] is not None for m in found[variant])
        }
        if len(medians) < 2:
            continue
        first = medians[variants[0]]
        shown = ", ".join(f"{v} {t:.2f} s ({t / first:.2f}x)" for v, t in medians.items())
        print(f"  {label} median {name}: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL database of yours")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--variants", help="PostgreSQL: these variants, comma-separated")
    parser.add_argument(
        "--indexes", action="store_true", help="PostgreSQL: also without each index (no FK)"
    )
    arguments = parser.parse_args()
    print(f"{arguments.rows:,} result rows per transaction, {arguments.rounds} rounds")
    if not arguments.no_postgres:
        variants = list(POSTGRES_VARIANTS)[: None if arguments.indexes else 2]
        if arguments.variants:
            variants = arguments.variants.split(",")
            unknown = [v for v in variants if v not in POSTGRES_VARIANTS]
            if unknown:
                parser.error(
                    f"--variants: unknown {unknown[0]!r} (known: {list(POSTGRES_VARIANTS)})"
                )
        postgres(arguments.database_url, arguments.rows, variants, arguments.rounds)
    if not arguments.no_sqlite:
        with tempfile.TemporaryDirectory() as folder:
            store = Store(f"sqlite:///{Path(folder) / 'copy.db'}")
            rows = rows_of(experiment(store), arguments.rows)
            measure = partial(sqlite_round, store.engine, rows)
            alternate("SQLite", measure, ["with FK", "without FK"], arguments.rounds)
            store.close()


def postgres(url: str, count: int, variants: list[str], rounds: int) -> None:
    base = url.replace("postgresql://", "postgresql+psycopg://", 1)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sqlalchemy.create_engine(base)
    with admin.begin() as connection:
        connection.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        separator = "&" if "?" in base else "?"
        store = Store(f"{base}{separator}options=-csearch_path%3D{schema}")
        rows = rows_of(experiment(store), count)
        alternate("PostgreSQL", partial(postgres_round, store.engine, rows), variants, rounds)
        store.close()
    finally:
        with admin.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


if __name__ == "__main__":
    main()
