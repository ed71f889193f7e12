"""Importing a Mastra store made by Mastra itself (conftest.py): what survives, idempotence, a
newer run, live scores, and every bad input refused with a clear error and nothing changed."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from mastra_maker import MAKER, MadeStore, make_store
from scorelab_db import BACKENDS, database

from core.exchange.mastra_import import message_text, scorelab_experiment_id
from core.records import ExperimentConfig, ScorerSpec
from core.service import MastraStoreError, Service, views

QUESTION = "Why do matadors wave red capes?"


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        made = Service(url)
        try:
            yield made
        finally:
            made.store.close()


@pytest.fixture
def sqlite_service(tmp_path: Path) -> Iterator[Service]:
    made = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
    try:
        yield made
    finally:
        made.store.close()


def store_rows(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of the Mastra file read with a current SQLite (apsw), JSON as text."""
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(connection.execute(sql, params))
    finally:
        connection.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def everything(service: Service) -> tuple[int, int, int]:
    experiments = service.list_experiments()
    return (
        len(service.list_datasets()),
        len(experiments),
        sum(service.store.result_count(e.id) for e in experiments),
    )


# ---- what survives ----


def test_means_per_experiment_and_scorer_equal_the_stores(
    made_store: MadeStore, service: Service
) -> None:
    service.import_mastra(made_store.location)
    assert made_store.path is not None
    expected: dict[str, dict[str, float]] = {}
    for run_id, scorer_id, mean in store_rows(
        made_store.path,
        "SELECT runId, scorerId, avg(score) FROM mastra_scorers WHERE source = 'TEST' "
        "GROUP BY runId, scorerId",
    ):
        expected.setdefault(run_id, {})[scorer_id] = mean
    assert set(expected) == set(made_store.summary["experiments"])
    for run_id, means in expected.items():
        info = service.get_experiment(scorelab_experiment_id(run_id))
        assert set(info.scores) == set(means) == set(made_store.summary["scorers"])
        for scorer_id, mean in means.items():
            assert info.scores[scorer_id] == pytest.approx(mean, abs=1e-12)
        assert info.status == "completed"
        assert info.counts.succeeded == made_store.summary["items"] * len(means)
        assert info.judge_settings["importedFrom"]["experimentId"] == run_id


def test_item_ids_ground_truth_metadata_and_readable_text_survive(
    made_store: MadeStore, sqlite_service: Service
) -> None:
    service = sqlite_service
    service.import_mastra(made_store.location)
    assert made_store.path is not None
    truth = {
        item_id: (json.loads(ground_truth), json.loads(metadata), json.loads(raw))
        for item_id, ground_truth, metadata, raw in store_rows(
            made_store.path,
            "SELECT id, json(groundTruth), json(metadata), json(input) FROM mastra_dataset_items",
        )
    }
    first = made_store.summary["experiments"][0]
    info = service.get_experiment(scorelab_experiment_id(first))
    items = {item.id: item for item in service.dataset_items(info.dataset_id)}
    assert set(items) == set(truth)
    for item_id, (ground_truth, metadata, raw) in truth.items():
        item = items[item_id]
        assert item.ground_truth == ground_truth
        for key, value in metadata.items():
            assert item.metadata[key] == value
        # the message structure shown as its text
        assert item.input == raw["inputMessages"][0]["content"]["content"]
        assert isinstance(item.output, str) and item.output and "{" not in item.output
    assert {"category", "difficulty"} <= set(service.metadata_columns(info.id))
    # the Mastra dataset itself, with its version noted
    plain = [d for d in service.list_datasets() if d.name == "truthfulqa-sample (Mastra v1)"]
    assert len(plain) == 1 and plain[0].item_count == len(truth)
    # slices by metadata work on the import
    slices = service.slices(info.id, "category")
    assert {s.value for s in slices} >= {"Misconceptions", "Biology"}


def test_comment_and_tags_come_along(made_store: MadeStore, sqlite_service: Service) -> None:
    service = sqlite_service
    service.import_mastra(made_store.location)
    info = service.get_experiment(scorelab_experiment_id(made_store.summary["experiments"][0]))
    reviewed = service.store.dataset_item(info.dataset_id, made_store.summary["reviewedItemId"])
    assert reviewed.metadata["comment"] == "Checked by hand: right answer."
    assert reviewed.metadata["tags"] == "reviewed, good"


def test_reasons_prompts_and_steps_survive(made_store: MadeStore, sqlite_service: Service) -> None:
    service = sqlite_service
    service.import_mastra(made_store.location)
    assert made_store.path is not None
    rows = store_rows(
        made_store.path,
        "SELECT runId, entityId, scorerId, reason, analyzePrompt, generateReasonPrompt, "
        "json(analyzeStepResult), json(preprocessStepResult), json(input) FROM mastra_scorers "
        "WHERE source = 'TEST'",
    )
    assert rows
    by_run: dict[str, dict[tuple[str, str], Any]] = {}
    for run_id in {row[0] for row in rows}:
        outcomes = service.store.experiment_results(scorelab_experiment_id(run_id))
        by_run[run_id] = {(o.item_id, o.scorer_id): o for o in outcomes}
    judged = 0
    for run_id, item_id, scorer_id, reason, analyze, why, analysis, pre, raw in rows:
        outcome = by_run[run_id][(item_id, scorer_id)]
        assert outcome.reason == reason
        result = outcome.result or {}
        assert result.get("analyzePrompt") == analyze
        assert result.get("generateReasonPrompt") == why
        assert result.get("analyzeStepResult") == (json.loads(analysis) if analysis else None)
        assert result.get("preprocessStepResult") == (json.loads(pre) if pre else None)
        assert result["input"] == json.loads(raw)  # the raw structure, for the drill-down
        judged += analyze is not None
    assert judged == 2 * made_store.summary["items"]  # the answer-relevancy judge, 2 experiments


def test_live_scores_grouped_by_entity_and_scorer(
    made_store: MadeStore, sqlite_service: Service
) -> None:
    service = sqlite_service
    outcome = service.import_mastra(made_store.location)
    live = [service.get_experiment(i) for i in outcome.experiment_ids if i.startswith("mastra-l-")]
    assert len(live) == 1
    assert live[0].name == "Live scores of agent qa-agent"
    assert live[0].scorer_ids == ["tone-scorer"]
    assert live[0].counts.succeeded == made_store.summary["liveScores"] == 1
    (item,) = service.dataset_items(live[0].dataset_id)
    assert item.metadata["source"] == "LIVE" and item.metadata["entityType"] == "AGENT"
    assert item.input == "Is the Great Wall of China visible from space?"


def test_summary_lists_datasets_experiments_and_live_with_counts(made_store: MadeStore) -> None:
    from core.service.exchange_desk import summarize

    summary = summarize(made_store.location)
    assert [d.item_count for d in summary.datasets] == [made_store.summary["items"]]
    assert [e.id for e in summary.experiments] == made_store.summary["experiments"]
    for experiment in summary.experiments:
        assert experiment.result_count == made_store.summary["items"]
        assert experiment.score_count == made_store.summary["items"] * 4
        assert sorted(experiment.scorer_ids) == sorted(made_store.summary["scorers"])
    assert [(e.entity_id, e.score_count) for e in summary.live] == [("qa-agent", 1)]


def test_message_text() -> None:
    message = {"role": "user", "content": {"format": 2, "parts": [{"type": "text", "text": "hi"}]}}
    assert message_text({"inputMessages": [message]}) == "hi"
    answer = {"role": "assistant", "content": "yes"}
    assert message_text([message, answer]) == "user: hi\nassistant: yes"
    assert message_text("plain") == "plain"
    assert message_text({"question": 1}) == {"question": 1}


# ---- importing again ----


def test_second_import_adds_nothing(made_store: MadeStore, service: Service) -> None:
    first = service.import_mastra(made_store.location)
    before = everything(service)
    again = service.import_mastra(made_store.location)
    assert first.new_scores == before[2] > 0
    assert (again.new_datasets, again.new_experiments, again.new_items, again.new_scores) == (
        0,
        0,
        0,
        0,
    )
    assert everything(service) == before


def test_a_newer_mastra_run_adds_only_what_is_new(
    store_copy: MadeStore, sqlite_service: Service, mastra_judge: Any
) -> None:
    service = sqlite_service
    service.import_mastra(store_copy.location)
    datasets, experiments, scores = everything(service)
    newer = make_store(store_copy.location, mastra_judge)  # Mastra runs again into the store
    outcome = service.import_mastra(store_copy.location)
    per_run = newer["items"] * len(newer["scorers"])
    assert outcome.new_experiments == 2
    assert outcome.new_scores == 2 * per_run + newer["liveScores"]
    assert everything(service) == (datasets + 3, experiments + 2, scores + outcome.new_scores)
    for run_id in newer["experiments"]:
        assert service.store.result_count(scorelab_experiment_id(run_id)) == per_run


def test_choosing_what_to_import(made_store: MadeStore, sqlite_service: Service) -> None:
    chosen = made_store.summary["experiments"][1]
    outcome = sqlite_service.import_mastra(
        made_store.location, experiments=[chosen], datasets=[], live=False
    )
    assert outcome.experiment_ids == [scorelab_experiment_id(chosen)]
    with pytest.raises(MastraStoreError, match="No Mastra experiment with id 'nope'"):
        sqlite_service.import_mastra(made_store.location, experiments=["nope"])


# ---- a newer schema, bad input ----


def test_unknown_columns_are_read_around_and_named(
    store_copy: MadeStore, sqlite_service: Service
) -> None:
    assert store_copy.path is not None
    connection = apsw.Connection(str(store_copy.path))
    connection.execute("ALTER TABLE mastra_scorers ADD COLUMN futureColumn TEXT")
    connection.execute("UPDATE mastra_scorers SET futureColumn = 'x'")
    connection.close()
    outcome = sqlite_service.import_mastra(store_copy.location)
    assert "mastra_scorers.futureColumn" in outcome.skipped_columns
    assert outcome.new_scores == 2 * made_scores(store_copy) + store_copy.summary["liveScores"]


def made_scores(made: MadeStore) -> int:
    return int(made.summary["items"]) * len(made.summary["scorers"])


def test_a_sqlite_file_that_is_not_a_mastra_store(tmp_path: Path, sqlite_service: Service) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (id TEXT)")
    before = digest(other)
    with pytest.raises(MastraStoreError) as error:
        sqlite_service.import_mastra(str(other))
    assert "is not a Mastra store" in str(error.value)
    assert "table mastra_scorers" in str(error.value) and "table mastra_datasets" in str(
        error.value
    )
    assert everything(sqlite_service) == (0, 0, 0)
    assert digest(other) == before


def test_not_sqlite_at_all(tmp_path: Path, sqlite_service: Service) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n" * 100)
    with pytest.raises(MastraStoreError, match=r"Cannot read .*notes.txt as a Mastra store"):
        sqlite_service.import_mastra(str(text))
    with pytest.raises(MastraStoreError, match="does not exist"):
        sqlite_service.import_mastra(str(tmp_path / "missing.db"))
    assert everything(sqlite_service) == (0, 0, 0)


def test_a_missing_table_is_named(store_copy: MadeStore, sqlite_service: Service) -> None:
    assert store_copy.path is not None
    connection = apsw.Connection(str(store_copy.path))
    connection.execute("DROP TABLE mastra_experiment_results")
    connection.execute("ALTER TABLE mastra_scorers DROP COLUMN runId")
    connection.close()
    with pytest.raises(MastraStoreError) as error:
        sqlite_service.import_mastra(store_copy.location)
    assert "table mastra_experiment_results" in str(error.value)
    assert "mastra_scorers.runId" in str(error.value)
    assert everything(sqlite_service) == (0, 0, 0)


def test_a_locked_file(store_copy: MadeStore, sqlite_service: Service) -> None:
    assert store_copy.path is not None
    holder = apsw.Connection(str(store_copy.path))
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE mastra_experiments SET name = name")
    try:
        with pytest.raises(MastraStoreError, match="locked"):
            sqlite_service.import_mastra(store_copy.location)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert everything(sqlite_service) == (0, 0, 0)


def test_a_store_mid_write_is_read_as_last_committed(
    store_copy: MadeStore, sqlite_service: Service
) -> None:
    """A Mastra process writing while the import reads: the import sees the store as of its
    last commit (one read transaction), never half a write; the next import takes the rest."""
    assert store_copy.path is not None
    writer = apsw.Connection(str(store_copy.path))
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "INSERT INTO mastra_scorers (id, scorerId, runId, score, source, entityId, entityType, "
        "input, output, createdAt, updatedAt, scorer) SELECT 'new-' || id, scorerId, runId, "
        "score, source, entityId, entityType, input, output, createdAt, updatedAt, scorer "
        "FROM mastra_scorers WHERE source = 'LIVE'"
    )
    writer.execute("UPDATE mastra_scorers SET entityId = 'other' WHERE id LIKE 'new-%'")
    try:
        first = sqlite_service.import_mastra(store_copy.location)
    finally:
        writer.execute("COMMIT")
        writer.close()
    assert first.new_scores == 2 * made_scores(store_copy) + 1
    second = sqlite_service.import_mastra(store_copy.location)
    assert second.new_scores == 1 and second.new_experiments == 1  # the live agent 'other'


def test_a_wrong_url(sqlite_service: Service) -> None:
    with pytest.raises(MastraStoreError, match=r"Cannot connect to the Mastra store .*\*\*\*"):
        sqlite_service.import_mastra("postgresql://scorelab:wrong@127.0.0.1:1/nothing")
    with pytest.raises(MastraStoreError, match="scheme 'mysql'"):
        sqlite_service.import_mastra("mysql://host/db")
    with pytest.raises(MastraStoreError, match="No Mastra store given"):
        sqlite_service.import_mastra("  ")
    assert everything(sqlite_service) == (0, 0, 0)


# ---- the CLI ----


def test_cli_import_json_then_nothing_new(made_store: MadeStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    command = [
        str(Path(".venv/bin/scorelab").resolve()),
        "--database-url",
        url,
        "mastra",
        "import",
        made_store.location,
        "--json",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=MAKER.parents[2]
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert (
        outcome["newExperiments"] == 3 and outcome["newScores"] == 2 * made_scores(made_store) + 1
    )
    again = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=MAKER.parents[2]
    )
    assert json.loads(again.stdout)["newScores"] == 0
    bad = subprocess.run(
        [*command[:5], str(tmp_path / "cli.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=MAKER.parents[2],
    )
    assert bad.returncode == 2
    assert "is not a Mastra store" in bad.stderr and "mastra_scorers" in bad.stderr


# ---- across the two worlds ----


def test_mastra_and_scorelab_experiments_pair_by_item_id_on_compare(
    made_store: MadeStore, sqlite_service: Service
) -> None:
    service = sqlite_service
    service.import_mastra(made_store.location)
    mastra = service.get_experiment(scorelab_experiment_id(made_store.summary["experiments"][0]))
    ours = service.start_experiment(
        ExperimentConfig(
            dataset_id=mastra.dataset_id,
            scorers=[
                ScorerSpec(
                    scorer_id="keyword-coverage-scorer", options={"reference": "ground_truth"}
                )
            ],
        )
    )
    assert service.wait(ours, timeout=60).finished
    (comparison,) = views.compare_experiments(
        service.load_experiment(mastra.id), [service.load_experiment(ours)]
    )
    assert len(comparison.pairing.paired_ids) == made_store.summary["items"]
    assert not comparison.pairing.baseline_only and not comparison.pairing.candidate_only
    keyword = next(s for s in comparison.scorers if s.scorer_id == "keyword-coverage-scorer")
    assert keyword.paired_n == made_store.summary["items"]
