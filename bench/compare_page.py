"""Compare's first visit at scale (issue 22 point 5, issue 21's N = 3): a database of three
experiments of `--items` items × `--scorers` code-scorer results each (written through the
store, scores on a grid of ninths, as keyword coverage gives), then the Compare page rendered
by AppTest with its caches dropped first: baseline + one candidate, then baseline + two.

    python bench/compare_page.py [--items 10000] [--scorers 5] [--database PATH]

Also times what the page reads: an experiment loaded whole (`Service.load_experiment`, what
Compare read before) against what it reads now (`Service.compare_sides`). Targets: the first
visit < 1 s at 10,000 × 5 (issue 22), N = 3 < 1 s at 817 × 5 and < 2 s at 10,000 × 5
(issue 21). Quote the figures with the load average printed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec  # noqa: E402
from core.storage import Store  # noqa: E402


def build(database: str, items: int, scorers: int) -> list[str]:
    """A dataset of `items` and three finished experiments of `scorers` scorers on it."""
    store = Store(database)
    dataset = store.save_dataset(
        name="compare",
        file_name="compare.csv",
        format="csv",
        fingerprint="c" * 64,
        columns=["id", "question", "answer", "category"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[
            [
                DatasetItem.model_construct(
                    id=f"q{n:05d}",
                    input=f"Question {n} about topic {n % 97}?",
                    output=f"An answer {n} of some length, words words words.",
                    ground_truth=None,
                    metadata={"category": f"cat-{n % 38:02d}"},
                )
                for n in range(items)
            ]
        ],
    )
    ids = [f"scorer-{k}" for k in range(scorers)]
    made = []
    for seed in (1, 2, 3):
        rng = random.Random(seed)
        experiment = store.create_experiment(
            name=f"run {seed}",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
            scorer_ids=ids,
            judge_model=None,
            api_base=None,
            judge_settings={},
            concurrency=8,
        )
        store.add_results(
            experiment.id,
            [
                ScorerOutcome(
                    item_id=f"q{n:05d}",
                    scorer_id=scorer_id,
                    status="success",
                    score=rng.randint(0, 9) / 9,
                    reason=f"reason {n}",
                    result={"score": 0.5, "runId": f"{seed}-{n}-{scorer_id}"},
                    duration_ms=1,
                )
                for n in range(items)
                for scorer_id in ids
            ],
        )
        store.finish_experiment(experiment.id, "completed")
        made.append(experiment.id)
    store.close()
    return made


def time_page(database: str, experiment_ids: list[str]) -> None:
    os.environ["SCORELAB_DATABASE_URL"] = database
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import core.service

    core.service._service = None
    st.cache_resource.clear()
    shared = core.service.get_service()
    started = time.perf_counter()
    shared.load_experiment(experiment_ids[0])
    print(f"  one experiment loaded whole (before):      {time.perf_counter() - started:6.2f} s")
    if hasattr(shared, "compare_sides"):
        started = time.perf_counter()
        shared.compare_sides(experiment_ids[:1])
        print(
            f"  one experiment read for Compare (now):     {time.perf_counter() - started:6.2f} s"
        )
    runs = (
        ("warm-up (imports; not a figure)", experiment_ids[2:3]),
        ("N = 2", experiment_ids[1:2]),
        ("N = 3", experiment_ids[1:]),
    )
    for label, candidates in runs:
        st.cache_resource.clear()
        app = AppTest.from_file(str(ROOT / "pages" / "compare.py"), default_timeout=600)
        app.query_params["baseline"] = experiment_ids[0]
        app.query_params["candidates"] = ",".join(candidates)
        started = time.perf_counter()
        app.run()
        seconds = time.perf_counter() - started
        assert not app.exception, app.exception
        started = time.perf_counter()
        app.run()
        again = time.perf_counter() - started
        print(
            f"  Compare first visit, {label}:               {seconds:6.2f} s (rerun {again:.2f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--database", help="a SQLite file to build (kept) or reuse")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(arguments.database or Path(folder) / "compare.db")
        database = f"sqlite:///{path}"
        if path.exists():
            store = Store(database)
            ids = [info.id for info in sorted(store.list_experiments(), key=lambda i: i.name)]
            store.close()
        else:
            started = time.perf_counter()
            ids = build(database, arguments.items, arguments.scorers)
            print(f"built in {time.perf_counter() - started:.1f} s")
        load = os.getloadavg()
        print(
            f"Compare at {arguments.items:,} items × {arguments.scorers} scorers "
            f"(SQLite; AppTest; load average {load[0]:.2f} {load[1]:.2f})"
        )
        time_page(database, ids)


if __name__ == "__main__":
    main()
