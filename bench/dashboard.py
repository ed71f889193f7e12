"""Dashboard responsiveness, measured with Streamlit's AppTest (no browser):

1. the experiment-detail page with 10,000 items × 5 scorers stored: the first render (results
   read from the database and shaped), then a rerun (what every click costs), then a rerun
   after changing a filter;
2. upload → validated preview of a 100,000-row CSV on the Datasets page, then the preview again
   after a change of the column mapping.

    python bench/dashboard.py [--items 10000] [--rows 100000]

Runs on a temporary SQLite database; the experiment itself is a real one (five code scorers
through the service), so the stored results have their real shape.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the pages (pages.ui.grid_filters), not only the installed core
CODE_SCORERS = (
    "keyword-coverage-scorer",
    "completeness-scorer",
    "content-similarity-scorer",
    "textual-difference-scorer",
    "tone-scorer",
)
TOPICS = ("invoices", "refunds", "webhooks", "exports", "API keys", "single sign-on", "taxes")


def table(rows: int, seed: int = 7) -> bytes:
    """A question/answer/expected CSV with varied, realistic-looking text."""
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "question", "answer", "expected", "topic"])
    for n in range(rows):
        topic = rng.choice(TOPICS)
        writer.writerow(
            [
                f"row-{n:06d}",
                f"How do I manage {topic} for account {n}?",
                f"Open Settings, choose {topic}, and follow the {rng.randint(2, 6)} steps shown. "
                f"Changes apply within {rng.randint(1, 30)} minutes.",
                f"Go to Settings > {topic} and follow the steps; changes apply shortly.",
                topic,
            ]
        )
    return out.getvalue().encode()


def timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def grid_rows(app: Any) -> int:
    """The rows on the results grid's page (pages/ui/grid.py's own table, sent as JSON)."""
    table = next(e for e in app.get("bidi_component") if e.proto.id.endswith("-experiment.grid"))
    return len(json.loads(table.proto.json)["rows"])


def detail_page(items: int) -> None:
    from streamlit.testing.v1 import AppTest

    import core.service
    from core.records import ExperimentConfig, ScorerSpec
    from pages.ui.grid_filters import FILTERS_KEY

    service = core.service.get_service()
    dataset = service.import_dataset("bench.csv", table(items))
    started = time.perf_counter()
    experiment = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=s) for s in CODE_SCORERS],
            concurrency=8,
        )
    )
    progress = service.wait(experiment, timeout=1800)
    print(
        f"experiment: {progress.counts.done:,} scorer runs stored in "
        f"{time.perf_counter() - started:.1f} s ({progress.status})"
    )
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.run()
    app.query_params["experiment"] = experiment
    app.switch_page("pages/experiment.py")
    first = timed(app.run)
    assert not app.exception, app.exception
    rerun = min(timed(app.run) for _ in range(3))
    # "Failed only" is in the grid's Filters box (pages/ui/grid_filters.py), drawn when open.
    app.session_state[FILTERS_KEY] = True
    app.run()
    app.checkbox(key="experiment.failed").check()
    filtered = timed(app.run)
    app.checkbox(key="experiment.failed").uncheck()
    app.text_input(key="experiment.search").input("refunds")
    searched = timed(app.run)
    shown = grid_rows(app)
    print(f"experiment detail, {items:,} items × {len(CODE_SCORERS)} scorers:")
    print(f"  first render (load + shape)  {first:6.2f} s")
    print(f"  rerun                        {rerun:6.2f} s")
    print(f"  rerun after 'failed only'    {filtered:6.2f} s")
    print(f"  rerun after a search         {searched:6.2f} s  ({shown:,} rows on the grid's page)")


def upload_preview(rows: int) -> None:
    from streamlit.testing.v1 import AppTest

    data = table(rows, seed=11)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.run()
    app.switch_page("pages/datasets.py")
    app.run()
    app.file_uploader[0].set_value(("big.csv", data, "text/csv"))
    elapsed = timed(app.run)
    assert not app.exception, app.exception
    ready = [s.value for s in app.success if "ready to import" in s.value]
    print(f"upload → validated preview, {rows:,} rows ({len(data) / 1e6:.1f} MB): {elapsed:.2f} s")
    print(f"  {ready[0] if ready else 'NOT READY'}")
    truth = next(s for s in app.selectbox if s.label == "Ground truth")
    truth.set_value("(none)")
    remapped = timed(app.run)
    assert not app.exception, app.exception
    print(f"  rerun after a mapping change (the file is not read again): {remapped:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=100_000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["SCORELAB_DATABASE_URL"] = f"sqlite:///{Path(folder) / 'bench.db'}"
        detail_page(arguments.items)
        upload_preview(arguments.rows)


if __name__ == "__main__":
    main()
