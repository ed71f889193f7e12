"""What the home page's first run imports (issue 21: the home page after a restart). The run
(app.py's router, then the home page, on a database holding an experiment) happens in a child
process of its own, which reports the top-level packages it imported beyond what Streamlit's
test harness had (Streamlit imports plotly itself; the service needs SQLModel and the table
pandas): no judge client, statistics library or Ray. The speed is measured by
bench/browser_pages.py ("home after restart"), never asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import core.service
from core.records import ExperimentConfig, ScorerSpec

ROOT = Path(__file__).resolve().parents[2]

# The first run of app.py, without the warm-up the router starts in the background after the
# first page (it imports the result pages' libraries on purpose).
CHILD = """
import json, os, sys
from streamlit.testing.v1 import AppTest
before = {name.split(".")[0] for name in sys.modules}
import pages.ui.services as services
services._WARMED.append(True)
test = AppTest.from_file(sys.argv[1], default_timeout=120)
test.run()
loaded = {name.split(".")[0] for name in sys.modules}
print(json.dumps({"exceptions": [str(e.value) for e in test.exception],
                  "title": [t.value for t in test.title],
                  "tables": len(test.dataframe),
                  "new": sorted(loaded - before)}))
sys.stdout.flush()
os._exit(0)  # the service's threads are not this test's concern
"""

NOT_ON_THE_HOME_PAGE = {"litellm", "scipy", "sklearn", "ray", "openai", "matplotlib"}
"""Packages only a judge call, the label agreement or a Ray run needs."""


def test_the_home_page_run_imports_no_judge_statistics_or_ray(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'scorelab.db'}"
    service = core.service.Service(url)
    try:
        dataset = service.import_dataset("faq.csv", b"question,answer\nhi,hello\nbye,see you\n")
        started = service.start_experiment(
            ExperimentConfig(
                dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="completeness-scorer")]
            )
        )
        assert service.wait(started, timeout=60).status == "completed"
    finally:
        service.store.close()
    env = {**os.environ, "SCORELAB_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT / "app.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,  # the project's .streamlit folder: the address the login gate reads
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["exceptions"] == [] and report["title"] == ["Experiments"], report
    assert report["tables"] >= 1  # the experiments table was drawn
    assert "sqlmodel" in report["new"]  # the run read the database (the test sees the run)
    assert not NOT_ON_THE_HOME_PAGE.intersection(report["new"]), report["new"]
