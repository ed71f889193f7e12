"""Write-back: scorelab experiments written into a Mastra store and read again with Mastra's own
API from node (read_store.mjs); and the whole round on Mastra's PostgreSQL store."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mastra_maker import MAKER, MadeStore, make_store, node_ready

from core.exchange.mastra_import import scorelab_experiment_id
from core.records import ExperimentConfig, ScorerSpec
from core.service import MastraStoreError, Service
from core.testing.fake_judge import FakeJudge, Fault, answer_from_schema

POSTGRES_ENV = "SCORELAB_TEST_POSTGRES_URL"
MASTRA_PG_DATABASE = "mastra_store_test"
"""Where Mastra's PostgreSQL store is made (.ci/mastra.sh creates it), a schema per session."""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    made = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
    try:
        yield made
    finally:
        made.store.close()


def read_back(location: str, schema: str | None = None) -> dict[str, Any]:
    """The store as Mastra's own API lists it (read_store.mjs)."""
    command = ["node", "read_store.mjs", "--store", location]
    if schema:
        command += ["--schema", schema]
    done = subprocess.run(
        command, cwd=MAKER, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def mastra_experiment(found: dict[str, Any], experiment_id: str) -> dict[str, Any]:
    (experiment,) = [e for e in found["experiments"] if e["id"] == experiment_id]
    return experiment


def test_round_trip_of_a_mastra_experiment_keeps_scores_comment_and_tags(
    store_copy: MadeStore, service: Service
) -> None:
    service.import_mastra(store_copy.location)
    original = store_copy.summary["experiments"][0]
    exported = service.export_mastra(scorelab_experiment_id(original), store_copy.location)
    assert not exported.dataset_created  # the Mastra dataset it came from
    assert exported.dataset_id == store_copy.summary["datasetId"]
    found = read_back(store_copy.location)
    before = mastra_experiment(found, original)
    after = mastra_experiment(found, exported.experiment_id)
    assert after["datasetId"] == before["datasetId"]
    assert after["scoreCount"] == before["scoreCount"] == exported.scores
    assert after["perScorer"] == before["perScorer"]
    for scorer_id, mean in before["means"].items():
        assert after["means"][scorer_id] == pytest.approx(mean)
    assert after["metadata"]["scorelabExperimentId"] == scorelab_experiment_id(original)
    reviewed = [r for r in after["results"] if r["itemId"] == store_copy.summary["reviewedItemId"]]
    assert reviewed == [
        {
            "itemId": store_copy.summary["reviewedItemId"],
            "comment": "Checked by hand: right answer.",
            "tags": ["reviewed", "good"],
        }
    ]
    with pytest.raises(MastraStoreError, match="already in"):
        service.export_mastra(scorelab_experiment_id(original), store_copy.location)
    assert len(read_back(store_copy.location)["experiments"]) == len(found["experiments"])


def test_a_scorelab_experiment_goes_in_without_its_failed_runs(
    store_copy: MadeStore, service: Service
) -> None:
    service.import_mastra(store_copy.location)
    mastra = service.get_experiment(scorelab_experiment_id(store_copy.summary["experiments"][0]))

    def responder(request: dict[str, Any]) -> Any:
        if "watermelon" in json.dumps(request):
            return Fault(status=400, message="refused")
        return answer_from_schema(request)

    with FakeJudge(responder) as judge:
        ours = service.start_experiment(
            ExperimentConfig(
                name="scorelab judged",
                dataset_id=mastra.dataset_id,
                scorers=[
                    ScorerSpec(
                        scorer_id="keyword-coverage-scorer", options={"reference": "ground_truth"}
                    ),
                    ScorerSpec(scorer_id="answer-relevancy-scorer"),
                ],
                judge_model="openai/fake-judge",
                api_base=judge.url,
                concurrency=1,
                judge_settings={"num_retries": 0},
            ),
            api_key="test-key",
        )
        assert service.wait(ours, timeout=120).finished
    failures = service.failures(ours)
    assert failures and {f.scorer_id for f in failures} == {"answer-relevancy-scorer"}
    stored = service.store.experiment_results(ours)
    exported = service.export_mastra(ours, store_copy.location)
    assert exported.scores == len(stored) == 2 * store_copy.summary["items"] - len(failures)
    found = mastra_experiment(read_back(store_copy.location), exported.experiment_id)
    assert found["name"] == "scorelab judged" and found["status"] == "completed"
    assert found["scoreCount"] == len(stored)
    assert found["perScorer"] == {
        "keyword-coverage-scorer": store_copy.summary["items"],
        "answer-relevancy-scorer": store_copy.summary["items"] - len(failures),
    }
    means = service.get_experiment(ours).scores
    for scorer_id, mean in found["means"].items():
        assert mean == pytest.approx(means[scorer_id])


def test_a_dataset_mastra_lacks_is_created(
    tmp_path: Path, made_store: MadeStore, service: Service, mastra_judge: FakeJudge
) -> None:
    csv = (
        b"id,input,output,ground_truth,topic\n"
        b"a,What is 2+2?,Four.,Four,math\nb,Capital of France?,Paris.,Paris,geo\n"
    )
    dataset = service.import_dataset("small.csv", csv)
    ours = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="tone-scorer")])
    )
    assert service.wait(ours, timeout=60).finished
    target = tmp_path / "other.db"
    make_store(f"file:{target}", mastra_judge)  # another Mastra project
    exported = service.export_mastra(ours, f"file:{target}")
    assert exported.dataset_created and exported.scores == 2
    found = read_back(f"file:{target}")
    (made,) = [d for d in found["datasets"] if d["id"] == exported.dataset_id]
    assert made["items"] == 2 and made["name"] == dataset.name
    assert mastra_experiment(found, exported.experiment_id)["scoreCount"] == 2
    # a second experiment over the same scorelab dataset reuses the dataset made
    again = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="tone-scorer")])
    )
    assert service.wait(again, timeout=60).finished
    second = service.export_mastra(again, f"file:{target}")
    assert not second.dataset_created and second.dataset_id == exported.dataset_id


def test_export_of_an_unknown_experiment_or_to_a_non_mastra_file(
    tmp_path: Path, service: Service
) -> None:
    import hashlib
    import sqlite3

    from core.service import NotFoundError

    with pytest.raises(NotFoundError):
        service.export_mastra("nope", str(tmp_path / "x.db"))
    dataset = service.import_dataset("one.csv", b"input,output\nhi,hello\n")
    ours = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="tone-scorer")])
    )
    assert service.wait(ours, timeout=60).finished
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (id TEXT)")
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    with pytest.raises(MastraStoreError, match="is not a Mastra store"):
        service.export_mastra(ours, str(other))
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before


# ---- Mastra's PostgreSQL store ----


@pytest.fixture
def mastra_pg() -> Iterator[tuple[str, str]]:
    """Mastra's PostgreSQL store: the URL of `mastra_store_test` and a fresh schema."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set (`make test` starts PostgreSQL and sets it)")
    url = base.rsplit("/", 1)[0] + "/" + MASTRA_PG_DATABASE
    schema = f"mastra_{uuid.uuid4().hex[:10]}"
    import psycopg

    try:
        yield url, schema
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_mastra_postgres_store_imported_and_written_back(
    mastra_pg: tuple[str, str], service: Service, mastra_judge: FakeJudge
) -> None:
    if node_ready() is not None:
        pytest.skip(str(node_ready()))
    url, schema = mastra_pg
    summary = make_store_pg(url, schema, mastra_judge)
    import psycopg

    with psycopg.connect(url) as connection:
        rows = connection.execute(
            f'SELECT "runId", "scorerId", avg(score) FROM "{schema}".mastra_scorers '
            "WHERE source = 'TEST' GROUP BY 1, 2"
        ).fetchall()
    location = f"{url}?schema={schema}"
    outcome = service.import_mastra(location)
    assert outcome.new_experiments == 3
    for run_id, scorer_id, mean in rows:
        info = service.get_experiment(scorelab_experiment_id(run_id))
        assert info.scores[scorer_id] == pytest.approx(float(mean))
    assert service.import_mastra(location).new_scores == 0
    first = summary["experiments"][0]
    exported = service.export_mastra(scorelab_experiment_id(first), location)
    found = mastra_experiment(read_back(url, schema), exported.experiment_id)
    assert found["scoreCount"] == exported.scores == 4 * summary["items"]


def make_store_pg(url: str, schema: str, judge: FakeJudge) -> dict[str, Any]:
    done = subprocess.run(
        ["node", "make_store.mjs", "--store", url, "--schema", schema, "--judge", judge.url],
        cwd=MAKER,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def test_cli_list_and_export(store_copy: MadeStore, tmp_path: Path) -> None:
    scorelab = str(Path(".venv/bin/scorelab").resolve())
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    root = MAKER.parents[2]

    def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [scorelab, "--database-url", url, "mastra", *arguments],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=root,
        )

    listed = cli("import", store_copy.location, "--list")
    assert listed.returncode == 0, listed.stderr
    assert "'baseline answers' (completed): 6 results, 24 scores" in listed.stdout
    assert "live agent qa-agent: 1 scores" in listed.stdout
    assert cli("import", store_copy.location).returncode == 0
    experiment_id = scorelab_experiment_id(store_copy.summary["experiments"][1])
    done = cli("export", experiment_id, store_copy.location, "--json")
    assert done.returncode == 0, done.stderr
    exported = json.loads(done.stdout)
    assert exported["scores"] == 24 and not exported["datasetCreated"]
    found = mastra_experiment(read_back(store_copy.location), exported["experimentId"])
    assert found["scoreCount"] == 24
    again = cli("export", experiment_id, store_copy.location)
    assert again.returncode == 2 and "already in" in again.stderr
    missing = cli("export", "nope", store_copy.location)
    assert missing.returncode == 2 and "no experiment 'nope'" in missing.stderr
