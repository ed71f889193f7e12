"""A million results: an experiment of 1,000,000 items x 1 code scorer run end to end on SQLite,
and the result pages read at that size (docs/storage.md, Reading a large experiment).

    python bench/million_results.py [--items 1000000] [--scorer keyword-coverage-scorer]
                                    [--skip-run] [--direct] [--database-url URL]
                                    [--run-database-url URL] [--no-pages] [--rounds N]

1. **Bare runs/s**: the code scorer's `run_sync` over 20,000 distinct pairs, in a fresh
   interpreter (cold caches, as the run's are), after a warm-up on 2,000 pairs of its own.
2. **End to end** (in a subprocess of its own, for its peak RSS, `VmHWM`): the CSV of `--items`
   rows imported with `Service.import_dataset`, then the experiment run by the Service (engine,
   result writer, SQLite) until every result is stored. Targets (issue 22): the run proper
   (start to every result stored) at >= 80% of the bare runs/s, the whole command (import
   included) at >= 50%; peak RSS under 1 GiB. This machine's speed drifts by up to a third
   within minutes: each run is measured between two bare measures, against their mean, and
   `--rounds N` repeats it (a new dataset each round) and gives the median ratio.
3. **Pages** (AppTest, in this process): the experiment detail, Failures and Judge usage pages,
   each on its first render (its cached aggregates dropped first) and on a change: a score
   filter, a text search, the last page, the sort by score on the detail page, a rerun on the
   others, with the wall time and this process's CPU time (what a loaded machine skews
   less: the page runs in this process, the database too on SQLite). Target: each under
   0.5 s at 1,000,000 results on SQLite. The search's needle, "paris river", is in one item of
   ten: the index's worst case (a rare needle is answered from a handful of matches). The
   page starts building its dataset's search index in the background when it opens; the first
   search, right after, reads the texts while it is built; the bench then waits for the index
   (printing when it was whole) and searches again.

`--skip-run` times the pages only, their results written directly through the store (one code
scorer's outcomes, scores spread over 0..1): faster than a run when only the pages are wanted.
`--direct` does the same after the end-to-end run (not on its database). `--database-url` puts
the page bench's results in another database (e.g. PostgreSQL from `.ci/postgres.sh`); the
end-to-end run is on SQLite unless `--run-database-url URL` (PostgreSQL) says otherwise;
`--no-pages` stops after it. Besides wall-clock ratios (which a loaded machine skews), the run
reports its CPU per run in the scoring interpreter against the bare scorer's, and the CPU of
the writer's own process (core/storage/writer_process.py). `--database-url URL --experiment
ID` times the pages of an experiment already there.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.records import (  # noqa: E402
    ColumnMapping,
    DatasetItem,
    ScorerOutcome,
    ScorerSpec,
)
from core.service import Service  # noqa: E402
from core.storage import Store  # noqa: E402

GIB = 1024**3
WORDS = ("python", "paris", "protocol", "database", "river", "planet", "engine", "music")
BARE_PAIRS = 20_000
SAME_PAIRS_AT_MOST = 200_000
PAGE_TARGET_S = 0.5

_RUNNER = """
import os, sys, time
from core.records import ExperimentConfig, ScorerSpec
from core.service import Service

def peak_kb():
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmHWM")))

def cpu(times):  # this interpreter's CPU seconds, and its children's (the writer's process)
    return times.user + times.system, times.children_user + times.children_system

database, csv_path, scorer = sys.argv[1:4]
service = Service(database)
started, before = time.perf_counter(), cpu(os.times())
dataset = service.import_dataset("million.csv", open(csv_path, "rb").read())
imported, at_import = time.perf_counter() - started, cpu(os.times())
started = time.perf_counter()
experiment_id = service.start_experiment(
    ExperimentConfig(name="million", dataset_id=dataset.id,
                     scorers=[ScorerSpec(scorer_id=scorer)], concurrency=8)
)
final = service.wait(experiment_id)
ran, at_end = time.perf_counter() - started, cpu(os.times())
stored = service.store.result_count(experiment_id)
print(dataset.item_count, imported, ran, stored, final.status, peak_kb(), experiment_id,
      at_import[0] - before[0], at_end[0] - at_import[0], at_end[1] - at_import[1])
"""


def row(n: int) -> tuple[str, str, str]:
    rng = random.Random(n)
    words = " ".join(rng.choice(WORDS) for _ in range(8))
    return (f"q{n}", f"Tell me about {words} ({n})?", f"An answer on {words} number {n}.")


def write_csv(path: Path, items: int) -> None:
    with path.open("w") as out:
        out.write("id,question,answer\n")
        for n in range(items):
            out.write(",".join(row(n)) + "\n")


def bare_runs(scorer_id: str, count: int = BARE_PAIRS) -> tuple[float, float]:
    """The bare scorer's runs/s and its CPU microseconds per run, over `count` distinct pairs,
    in a fresh interpreter of their own (`_BARE_RUNNER`): cold caches, as the run's are."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = subprocess.run(
        [sys.executable, "-c", _BARE_RUNNER, scorer_id, str(count)],
        env=env,
        capture_output=True,
        text=True,
    )
    if output.returncode:
        raise SystemExit(f"the bare measure failed:\n{output.stderr[-3000:]}")
    runs_s, cpu_us = output.stdout.split()[-2:]
    return float(runs_s), float(cpu_us)


_BARE_RUNNER = """
import sys, time
from bench.million_results import row
from core.records import ScorerSpec
from core.service import Service

scorer_id, count = sys.argv[1], int(sys.argv[2])
scorer = Service("sqlite://").build_scorer(ScorerSpec(scorer_id=scorer_id), None)
# The warm-up (the scorer's first runs load its lexicons) on pairs of its own: a timed pair
# seen in it would be answered from the scorer's caches, as no item of the run is.
for _, question, answer in map(row, range(count, count + 2000)):
    scorer.run_sync(input=question, output=answer)
pairs = [row(n) for n in range(count)]
started, cpu = time.perf_counter(), time.process_time()
for _, question, answer in pairs:
    scorer.run_sync(input=question, output=answer)
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
print(len(pairs) / elapsed, 1e6 * cpu / len(pairs))
"""


_COLD_RUNNER = """
import sys, time
from core.records import ScorerSpec
from core.service import Service

scorer = Service("sqlite://").build_scorer(ScorerSpec(scorer_id=sys.argv[1]), None)
started = time.process_time()
scorer.run_sync(input="Tell me about python paris river (1)?", output="An answer on paris.")
print(time.process_time() - started)
"""


def first_run_cpu(scorer_id: str) -> float:
    """The CPU seconds of the scorer's first run in a fresh interpreter: what it loads once
    (keyword coverage's lexicons: lemminflect, numpy), paid by the end-to-end run's
    interpreter and left out of the bare figures by their warm-up."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = subprocess.run(
        [sys.executable, "-c", _COLD_RUNNER, scorer_id],
        env=env,
        capture_output=True,
        text=True,
    )
    if output.returncode:
        raise SystemExit(f"the first-run measure failed:\n{output.stderr[-3000:]}")
    return float(output.stdout.split()[-1])


def end_to_end(
    folder: Path, items: int, scorer_id: str, database: str | None = None, rounds: int = 1
) -> tuple[str, str]:
    """The CSV imported and run in a subprocess, on SQLite in `folder` (or `database`),
    `rounds` times, each run between two bare measures (the machine's speed drifts: the
    ratio is taken against the mean of the two around it)."""
    csv_path = folder / "million.csv"
    write_csv(csv_path, items)
    backend = (database or "sqlite").split(":", 1)[0]
    print(f"end to end on {backend}: {items:,} items x 1 code scorer ({scorer_id})")
    print(f"  CSV {csv_path.stat().st_size / 2**20:,.1f} MiB")
    bare_before = bare_runs(scorer_id)
    ratios: list[tuple[float, float]] = []
    experiment_id = ""
    for round_number in range(1, rounds + 1):
        url = database or f"sqlite:///{folder / f'million-{round_number}.db'}"
        figures = _run_subprocess(url, csv_path, scorer_id)
        bare_after = bare_runs(scorer_id)
        print(f" round {round_number} of {rounds}")
        ratios.append(_report_round(figures, bare_before, bare_after))
        bare_before, database_used, experiment_id = bare_after, url, figures[6]
    # How a scorer that caches per word costs more per run over many distinct items (its
    # caches grow, the collector walks them): the bare loop over as many pairs as the run.
    same = min(items, SAME_PAIRS_AT_MOST)
    _, same_cpu = bare_runs(scorer_id, same)
    print(f"  bare over {same:,} pairs      CPU {same_cpu:.1f} us/run")
    cold = first_run_cpu(scorer_id)
    print(
        f"  scorer's first run {cold:5.2f} s CPU (loaded once, in the run's time) = "
        f"{1e6 * cold / items:.1f} us/run"
    )
    if rounds > 1:
        runs = sorted(run for run, _ in ratios)
        wholes = sorted(whole for _, whole in ratios)
        print(
            f"  median of {rounds} rounds: run / bare {runs[rounds // 2]:.0%} "
            f"(each: {', '.join(f'{run:.0%}' for run, _ in ratios)}), whole / bare "
            f"{wholes[rounds // 2]:.0%}"
        )
    return database_used, experiment_id


def _run_subprocess(database: str, csv_path: Path, scorer_id: str) -> list[str]:
    """`_RUNNER`'s figures: the CSV imported and run on `database` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = subprocess.run(
        [sys.executable, "-c", _RUNNER, database, str(csv_path), scorer_id],
        env=env,
        capture_output=True,
        text=True,
    )
    if output.returncode:
        raise SystemExit(f"the end-to-end run failed:\n{output.stderr[-3000:]}")
    return output.stdout.split()


def _report_round(
    figures: list[str], before: tuple[float, float], after: tuple[float, float]
) -> tuple[float, float]:
    """Print one round's figures against the bare measures around it; returns its run / bare
    and whole / bare."""
    count, imported, ran, stored, status, peak_kb, _ = figures[:7]
    import_cpu, run_cpu, writer_cpu = (float(value) for value in figures[7:])
    bare = (before[0] + after[0]) / 2
    bare_cpu = (before[1] + after[1]) / 2
    runs = int(stored) / float(ran)
    load = os.getloadavg()[0]
    print(f"  load average  {load:8.1f} (wall-clock ratios below are only as good as it is low)")
    rows_s = int(count) / float(imported)
    print(
        f"  import        {float(imported):8.1f} s   {rows_s:9,.0f} rows/s   CPU {import_cpu:.1f} s"
    )
    print(f"  run (stored)  {float(ran):8.1f} s   {runs:9,.0f} runs/s   status {status}")
    per_run = 1e6 * run_cpu / max(int(stored), 1)
    print(
        f"  run CPU       {per_run:8.1f} us/run in the scoring interpreter, "
        f"{1e6 * writer_cpu / max(int(stored), 1):.1f} us/run in the writer's process"
    )
    print(
        f"  bare run_sync                 {bare:9,.0f} runs/s   CPU {bare_cpu:.1f} us/run "
        f"(before the run {before[0]:,.0f}, after {after[0]:,.0f} runs/s)"
    )
    print(f"  bare CPU / run CPU {bare_cpu / per_run:5.0%}   (the scoring interpreter's share)")
    verdict = "ok" if runs >= 0.8 * bare else "MISSED"
    print(f"  run / bare    {runs / bare:8.0%}   (target >= 80%: {verdict})")
    whole = int(stored) / (float(imported) + float(ran))
    verdict = "ok" if whole >= 0.5 * bare else "MISSED"
    print(f"  whole / bare  {whole / bare:8.0%}   (import + run; target >= 50%: {verdict})")
    peak = int(peak_kb) * 1024
    verdict = "ok" if peak < GIB else "MISSED"
    print(f"  peak RSS      {peak / 2**20:8,.0f} MiB (target < 1024 MiB: {verdict})")
    return runs / bare, whole / bare


def write_directly(database: str, items: int) -> str:
    """A dataset of `items` and an experiment with one scorer's results, through the store."""
    store = Store(database)
    started = time.perf_counter()
    dataset = store.save_dataset(
        name="million",
        file_name="million.csv",
        format="csv",
        fingerprint="b" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=_item_chunks(items),
    )
    experiment = store.create_experiment(
        name="million (written directly)",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=["keyword-coverage-scorer"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=8,
    )
    for chunk in _outcome_chunks(items):
        store.add_results(experiment.id, chunk)
    store.finish_experiment(experiment.id, "completed")
    print(f"written through the store: {items:,} results in {time.perf_counter() - started:.1f} s")
    store.close()
    return experiment.id


def _item_chunks(items: int) -> Iterator[list[DatasetItem]]:
    for start in range(0, items, 50_000):
        yield [
            DatasetItem.model_construct(id=i, input=q, output=a, ground_truth=None, metadata={})
            for i, q, a in map(row, range(start, min(items, start + 50_000)))
        ]


def _outcome_chunks(items: int) -> Iterator[list[ScorerOutcome]]:
    rng = random.Random(3)
    for start in range(0, items, 50_000):
        yield [
            ScorerOutcome(
                item_id=f"q{n}",
                scorer_id="keyword-coverage-scorer",
                status="success",
                score=rng.random(),
                reason=None,
                result={"score": 0.5, "runId": str(n)},
                duration_ms=0,
            )
            for n in range(start, min(items, start + 50_000))
        ]


def time_pages(database: str, experiment_id: str) -> None:
    os.environ["SCORELAB_DATABASE_URL"] = database
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import core.service
    import pages.ui.data
    from pages.ui.grid_filters import FILTERS_KEY

    core.service._service = None
    st.cache_resource.clear()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.run()
    app.query_params["experiment"] = experiment_id
    kind = database.split(":")[0]
    print(
        f"pages at {Service(database).get_experiment(experiment_id).total_items:,} results "
        f"({kind}; AppTest, each run's wall and CPU time; target < {PAGE_TARGET_S} s; "
        f"load average {os.getloadavg()[0]:.1f})"
    )

    def timed(label: str, action) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        action()
        app.run()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert not app.exception, app.exception
        verdict = "ok" if seconds < PAGE_TARGET_S else "MISSED"
        print(f"  {label:<44}{seconds:7.2f} s  CPU {cpu:5.2f} s  {verdict}")

    def first(page: str):
        def go() -> None:
            # The page's first render computes its aggregates: none kept from an earlier one.
            pages.ui.data._aggregates.clear()
            core.service.get_service().store._settled.clear()
            app.switch_page(page)

        return go

    opened = time.perf_counter()
    timed("experiment detail: first render", first("pages/experiment.py"))
    # The score range is in the grid's Filters box (pages/ui/grid_filters.py), drawn when open.
    timed("  open the Filters box", lambda: app.session_state.__setitem__(FILTERS_KEY, True))
    timed(
        "  filter: score 0.25..0.5", lambda: app.slider(key="experiment.range").set_range(0.25, 0.5)
    )
    building = " (index building)" if kind == "sqlite" else ""
    timed(
        f"  filter: + search 'paris river'{building}",
        lambda: app.text_input(key="experiment.search").input("paris river"),
    )
    if kind == "sqlite":  # PostgreSQL's trigram index is kept by the database itself
        service = core.service.get_service()
        dataset_id = service.get_experiment(experiment_id).dataset_id
        waited = time.perf_counter()
        service.store.results.search_indexer.wait(dataset_id)
        print(
            f"  (the index, built in the background since the page opened: whole "
            f"{time.perf_counter() - opened:.1f} s after it, "
            f"{time.perf_counter() - waited:.1f} s waited here)"
        )
    timed(
        f"  filter: score 0.2..0.5 + search{' (index whole)' if building else ''}",
        lambda: app.slider(key="experiment.range").set_range(0.2, 0.5),
    )
    timed("  filter: search only", lambda: app.slider(key="experiment.range").set_range(0.0, 1.0))
    timed(
        "  no filter, last page",
        lambda: (
            app.text_input(key="experiment.search").input(""),
            app.number_input(key="experiment.page").set_value(10**6),
        ),
    )
    timed(
        "  sort: highest score first",
        lambda: app.selectbox(key="experiment.sort").set_value("desc:keyword-coverage-scorer"),
    )
    timed("failures: first render", first("pages/failures.py"))
    timed("  rerun", lambda: None)
    timed("judge usage: first render", first("pages/judge_usage.py"))
    timed("  rerun", lambda: None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--scorer", default="keyword-coverage-scorer")
    parser.add_argument("--skip-run", action="store_true")
    parser.add_argument("--direct", action="store_true")
    parser.add_argument("--database-url")
    parser.add_argument("--experiment", help="time the pages of this experiment of --database-url")
    parser.add_argument(
        "--run-database-url", help="the end-to-end run on this database (PostgreSQL) instead"
    )
    parser.add_argument("--no-pages", action="store_true", help="the end-to-end run only")
    parser.add_argument(
        "--rounds", type=int, default=1, help="end-to-end runs, each between bare measures"
    )
    arguments = parser.parse_args()
    if arguments.experiment:
        time_pages(arguments.database_url, arguments.experiment)
        return
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        database, experiment_id = "", ""
        if not arguments.skip_run:
            database, experiment_id = end_to_end(
                folder,
                arguments.items,
                arguments.scorer,
                arguments.run_database_url,
                arguments.rounds,
            )
        if arguments.no_pages:
            return
        if arguments.skip_run or arguments.direct or arguments.database_url:
            database = arguments.database_url or f"sqlite:///{folder / 'direct.db'}"
            experiment_id = write_directly(database, arguments.items)
        time_pages(database, experiment_id)


if __name__ == "__main__":
    main()
