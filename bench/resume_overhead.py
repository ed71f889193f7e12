"""Resume overhead: an experiment of N items × 1 code scorer through the Service on SQLite, run
whole; then the same experiment with 10% of its pairs missing (their results deleted, status
`cancelled`, as a run stopped part-way leaves it), resumed. The resume reads every item, looks up
the stored pairs a page at a time and runs only the missing ones.

    python bench/resume_overhead.py [--items 20000] [--missing 0.1] [--database-url URL]

The scorer is a trivial code scorer, so the full run is as fast as the service goes and the
resume's fixed costs weigh the most. Target: the resume takes under 15% of the full run's time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import sqlalchemy

from core import Scorer, create_scorer
from core.records import ExperimentConfig, ScorerSpec
from core.scorers import PrebuiltScorer
from core.service import Service
from core.storage.tables import ExperimentRow, ScoreRow


def length_scorer() -> Scorer:
    return create_scorer(id="length", description="bench").generate_score(
        lambda ctx: min(len(str(ctx.run.output)) / 100, 1.0)
    )


CATALOG = {"length": PrebuiltScorer("length", "Length", "bench", length_scorer, False)}


def timed_run(service: Service, dataset_id: str) -> tuple[str, float]:
    started = time.perf_counter()
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset_id, scorers=[ScorerSpec(scorer_id="length")], concurrency=8
        )
    )
    progress = service.wait(experiment_id)
    assert progress.status == "completed", progress
    return experiment_id, time.perf_counter() - started


def stop_part_way(service: Service, experiment_id: str, missing: float) -> int:
    """Delete a random `missing` share of the results and mark the experiment cancelled."""
    results = ScoreRow.__table__
    with service.store.engine.connect() as connection:
        query = sqlalchemy.select(results.c.id).where(results.c.experiment_id == experiment_id)
        ids = [row.id for row in connection.execute(query)]
    dropped = random.Random(13).sample(ids, round(len(ids) * missing))
    experiments = ExperimentRow.__table__
    with service.store.engine.begin() as connection:
        for start in range(0, len(dropped), 500):
            chunk = dropped[start : start + 500]
            connection.execute(sqlalchemy.delete(results).where(results.c.id.in_(chunk)))
        connection.execute(
            sqlalchemy.update(experiments)
            .where(experiments.c.id == experiment_id)
            .values(status="cancelled")
        )
    return len(dropped)


def resumed(service: Service, experiment_id: str, items: int) -> float:
    """Seconds from the resume's call to its last result written."""
    started = time.perf_counter()
    service.resume_experiment(experiment_id)
    progress = service.wait(experiment_id)
    elapsed = time.perf_counter() - started
    assert progress.status == "completed", progress
    assert service.get_experiment(experiment_id).counts.succeeded == items
    assert service.store.result_count(experiment_id) == items
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--missing", type=float, default=0.1, help="share of pairs not done")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported")
    parser.add_argument("--database-url", help="default: an SQLite file in a temporary folder")
    arguments = parser.parse_args()
    full: list[float] = []
    resumes: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        url = arguments.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        service = Service(url, catalog=CATALOG, samples_dir=Path(folder))
        rows = "input,output\n" + "".join(
            f"question {n},answer {'x' * (n % 90)}\n" for n in range(arguments.items)
        )
        dataset = service.import_dataset("bench.csv", rows.encode())
        for _ in range(arguments.repeat):
            experiment_id, seconds = timed_run(service, dataset.id)
            full.append(seconds)
            dropped = stop_part_way(service, experiment_id, arguments.missing)
            resumes.append(resumed(service, experiment_id, arguments.items))
        service.store.close()

    full_s, resume_s = statistics.median(full), statistics.median(resumes)
    ratio = resume_s / full_s
    print(f"database: {'given URL' if arguments.database_url else 'SQLite file'}")
    print(f"items × scorers: {arguments.items:,} × 1 (trivial code scorer), concurrency 8")
    print(
        f"full runs: {', '.join(f'{s:.2f}' for s in full)} s; median {full_s:.2f} s "
        f"({arguments.items / full_s:,.0f} runs/s)"
    )
    print(f"pairs missing before each resume: {dropped:,} ({arguments.missing:.0%})")
    print(
        f"resumes: {', '.join(f'{s:.2f}' for s in resumes)} s; median {resume_s:.2f} s "
        f"({dropped / resume_s:,.0f} missing runs/s)"
    )
    print(
        f"resume / full run (medians): {ratio:.1%} (target < 15%): "
        f"{'OK' if ratio < 0.15 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
