"""Reviews at the sizes of issue 14 (817 items × 5 scorers, 10,000 × 5), on a temporary SQLite
database: the review queue end to end (`Service.review_queue`: the scores and the confidences the
database picks out of the results' JSON, then ordered), the ordering alone (of outcomes loaded
with their JSON), one review saved, the grid's review marks and the agreement
with the reviews, with 1 review in 8 (item, scorer) pairs.

    python bench/review_queue.py [--items 817,10000] [--scorers 5]

Prints seconds per step and the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from core.records import ColumnMapping, DatasetItem, RunCounts, ScorerOutcome
from core.reporting.review_queue import review_queue, scored_runs
from core.service import Service


def _setup(service: Service, items: int, scorers: int) -> str:
    store = service.store
    rng = random.Random(1)
    dataset = store.save_dataset(
        name="bench",
        file_name="bench.csv",
        format="csv",
        fingerprint=f"{items:064d}",
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=[DatasetItem(id=f"i{n}", input=f"q{n}", output=f"a{n}") for n in range(items)],
    )
    ids = [f"scorer-{k}" for k in range(scorers)]
    info = store.create_experiment(
        name="bench", dataset_id=dataset.id, scorers=[], scorer_ids=ids, judge_model=None,
        api_base=None, judge_settings={}, concurrency=1,
    )  # fmt: skip
    outcomes = [
        ScorerOutcome(
            item_id=f"i{n}",
            scorer_id=scorer,
            status="success",
            score=round(rng.random(), 2),
            result={"score": 0.5, "analyzeStepResult": {"confidence": rng.random()}},
        )
        for n in range(items)
        for scorer in ids
    ]
    store.add_results(info.id, outcomes)
    store.finish_experiment(
        info.id, "completed", RunCounts(total=len(outcomes), succeeded=len(outcomes))
    )
    for n in range(0, items, 8):
        for scorer in ids:
            service.save_review(info.id, f"i{n}", scorer, rng.choice(["right", "wrong"]))
    return info.id


def _timed(what: str, call) -> object:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    found = call()
    print(f"  {what:<40} {time.perf_counter() - started:8.3f} s")
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", default="817,10000")
    parser.add_argument("--scorers", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    for items in (int(n) for n in args.items.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            _one_size(Path(folder), items, args.scorers)


def _one_size(folder: Path, items: int, scorers: int) -> None:
    empty = folder / "samples"
    empty.mkdir()
    service = Service(f"sqlite:///{folder}/bench.db", samples_dir=empty)
    experiment_id = _setup(service, items, scorers)
    print(f"{items:,} items × {scorers} scorers")
    _timed("review queue (Service, end to end)", lambda: service.review_queue(experiment_id))
    detail = service.load_experiment(experiment_id)
    reviewed = {r.item_id for r in detail.reviews}
    ids = [item.id for item in detail.items]
    _timed(
        "review queue (ordering only)",
        lambda: review_queue(detail.info, ids, scored_runs(detail.results), reviewed),
    )
    _timed(
        "save one review",
        lambda: service.save_review(experiment_id, "i1", "scorer-0", "wrong", note="x"),
    )
    _timed("review marks (the grid's)", lambda: service.review_marks(experiment_id))
    _timed("reviews of one item", lambda: service.reviews(experiment_id, "i1"))
    _timed("agreement with the reviews", lambda: service.review_agreement(experiment_id))
    service.store.close()


if __name__ == "__main__":
    main()
