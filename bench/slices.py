"""Slices and the results grid at 10,000 items x 5 scorers (docs/storage.md, Slices by
metadata): what the database takes to group the results by a metadata column, to compare two
experiments per slice, and to read a grid page under a metadata filter or a sort by score;
then the experiment page (AppTest, in this process) on its first render, a row click, a slice
chosen, a metadata filter and a sort (without the label agreement unless `--with-agreement`).

    python bench/slices.py [--items 10000] [--scorers 5] [--database-url URL] [--no-pages]
                           [--with-agreement]

Results are written directly through the store (scores spread over 0..1, a `category` column
of 38 values like TruthfulQA's and a boolean `answer_is_correct`). Prints one line per figure;
no target is asserted here (issue 14: a page interaction under 1 s at 10,000 x 5).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.records import (  # noqa: E402
    ColumnMapping,
    DatasetItem,
    ResultQuery,
    ScorerOutcome,
    ScorerSpec,
)
from core.service import Service  # noqa: E402

CATEGORIES = [f"Category {n}" for n in range(38)]


def build(service: Service, items: int, scorers: int, seed: int) -> tuple[str, str]:
    """Two experiments of `scorers` code-scorer ids over one dataset of `items` items."""
    rng = random.Random(seed)
    dataset = service.store.save_dataset(
        name="bench",
        file_name="bench.csv",
        format="csv",
        fingerprint="c" * 64,
        columns=["input", "output", "category", "answer_is_correct"],
        mapping=ColumnMapping(
            input="input", output="output", metadata=["category", "answer_is_correct"]
        ),
        items=[
            DatasetItem(
                id=f"item-{n:06d}",
                input=f"question {n} " + "words " * 20,
                output=f"answer {n} " + "more words " * 30,
                metadata={
                    "category": rng.choice(CATEGORIES),
                    "answer_is_correct": rng.random() < 0.5,
                },
            )
            for n in range(items)
        ],
    )
    ids = [f"scorer-{k}" for k in range(scorers)]
    made = []
    for name in ("baseline", "candidate"):
        experiment = service.store.create_experiment(
            name=name,
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=s) for s in ids],
            scorer_ids=ids,
            judge_model=None,
            api_base=None,
            judge_settings={},
            concurrency=1,
        )
        service.store.add_results(
            experiment.id,
            [
                ScorerOutcome(
                    item_id=f"item-{n:06d}", scorer_id=s, status="success", score=rng.random()
                )
                for n in range(items)
                for s in ids
            ],
        )
        service.store.finish_experiment(experiment.id, "completed")
        made.append(experiment.id)
    return made[0], made[1]


def timed(label: str, action: Callable[[], Any], repeat: int = 5) -> None:
    action()  # once to warm the database's page cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    median, worst = statistics.median(times) * 1000, max(times) * 1000
    print(f"{label:<58} median {median:8.1f} ms  max {worst:8.1f} ms")


def page_timings(database_url: str, baseline: str, with_agreement: bool) -> None:
    """The experiment page in AppTest: first render, a row click, a slice, a metadata filter."""
    from streamlit.testing.v1 import AppTest

    import core.service
    from pages.ui.grid_filters import FILTERS_KEY

    os.environ["SCORELAB_DATABASE_URL"] = database_url
    core.service._service = None
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.run()
    app.query_params["experiment"] = baseline
    if not with_agreement:  # `answer_is_correct` is a label column: its agreement takes long
        app.query_params["label"] = ""
    app.switch_page("pages/experiment.py")

    def step(label: str, action: Callable[[], None]) -> None:
        action()
        started = time.perf_counter()
        app.run()
        elapsed = time.perf_counter() - started
        assert not app.exception, app.exception
        print(f"{'page: ' + label:<58} {elapsed * 1000:8.1f} ms")

    def fourth_item() -> str:
        """The item of the grid's fourth row (the grid: pages/ui/grid.py's own table)."""
        table = next(
            e for e in app.get("bidi_component") if e.proto.id.endswith("-experiment.grid")
        )
        return str(json.loads(table.proto.json)["rows"][3]["item"])

    step("first render", lambda: None)
    # AppTest cannot click the table: the item is opened by its URL, as a link does.
    step("item opened (drill-down)", lambda: app.query_params.__setitem__("item", fourth_item()))
    step("tab: slices", lambda: app.segmented_control(key="experiment.tab").set_value("slices"))
    step("slice by category", lambda: app.selectbox(key="experiment.slice").set_value("category"))
    step("tab: results", lambda: app.segmented_control(key="experiment.tab").set_value("results"))
    # The metadata filter is in the grid's Filters box (pages/ui/grid_filters.py).
    step("open the Filters box", lambda: app.session_state.__setitem__(FILTERS_KEY, True))
    step(
        "metadata filter column", lambda: app.selectbox(key="experiment.mcol").set_value("category")
    )
    step(
        "metadata filter values",
        lambda: app.multiselect(key="experiment.mval.category").set_value(CATEGORIES[:3]),
    )
    step("sort by a score", lambda: app.selectbox(key="experiment.sort").set_value("desc:scorer-1"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--no-pages", action="store_true", help="skip the AppTest timings")
    parser.add_argument(
        "--with-agreement",
        action="store_true",
        help="let the page compute the label agreement of `answer_is_correct` (not this "
        "module's work; off: the URL's label is empty)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        service = Service(url)
        started = time.perf_counter()
        baseline, candidate = build(service, args.items, args.scorers, seed=3)
        print(
            f"{args.items:,} items x {args.scorers} scorers x 2 experiments on "
            f"{service.store.engine.dialect.name}, written in {time.perf_counter() - started:.1f} s"
            f" · load average {os.getloadavg()[0]:.2f}"
        )
        timed("Service.slices(category)  (38 values)", lambda: service.slices(baseline, "category"))
        timed(
            "Service.slices(answer_is_correct)  (2 values)",
            lambda: service.slices(baseline, "answer_is_correct"),
        )
        timed(
            "Service.compare_slices(category)",
            lambda: service.compare_slices(baseline, candidate, "category"),
        )
        filtered = ResultQuery(metadata={"category": CATEGORIES[:3]})
        timed(
            "result_page, metadata filter (3 of 38 values)",
            lambda: service.result_page(baseline, filtered),
        )
        last = filtered.model_copy(update={"page": 10_000})
        timed(
            "result_page, metadata filter, last page", lambda: service.result_page(baseline, last)
        )
        both = filtered.model_copy(update={"sort": "score_desc", "sort_scorer": "scorer-2"})
        timed(
            "result_page, metadata filter + sort by score",
            lambda: service.result_page(baseline, both),
        )
        plain = ResultQuery(sort="score_asc", sort_scorer="scorer-0")
        timed(
            "result_page, sort by score (no filter)", lambda: service.result_page(baseline, plain)
        )
        service.store.close()
        if not args.no_pages:
            page_timings(url, baseline, args.with_agreement)
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
