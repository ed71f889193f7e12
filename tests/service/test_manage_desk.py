"""Managing datasets and experiments through the service (SQLite, and PostgreSQL when
available): renames, an experiment's note and tags, finding an upload already stored, what a
deletion takes; and the themes of a real experiment's low-score reasons and failure errors."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from scorelab_db import BACKENDS, database
from sqlalchemy import create_engine

from core import Scorer, create_scorer
from core.records import ColumnMapping, ExperimentConfig, ScorerOutcome, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import ExperimentConfigError, InvalidInputError, NotFoundError, Service
from core.service.manage import MAX_TAG_CHARS, MAX_TAGS
from core.storage import Store
from core.storage.schema import alembic_config

REASONS = {
    "date": "The answer gives the wrong date: the year {n} is wrong for this event.",
    "source": "The output cites a made-up source that is not in the context (ref {n}).",
    "tone": "The tone is rude and dismissive toward the user.",
}


def planted_csv(per_topic: int = 8) -> bytes:
    """Rows whose output is the reason the `reasoned` scorer gives: three low-score topics,
    some high scores, and two kinds of failure."""
    lines = ["id,question,answer"]
    n = 0
    for topic, reason in REASONS.items():
        for _ in range(per_topic):
            lines.append(f"{topic}{n},q{n},LOW {reason.format(n=1900 + n)}")
            n += 1
    for k in range(6):
        lines.append(f"good{k},q,HIGH The answer is correct and complete.")
    for k in range(3):
        lines.append(f"limit{k},q,RAISE rate limit exceeded (HTTP 429) for request {k}")
        lines.append(f"time{k},q,RAISE timed out connecting to the judge server")
    return "\n".join(lines).encode()


def reasoned() -> Scorer:
    def score(ctx: Any) -> float:
        text = str(ctx.run.output)
        if text.startswith("RAISE "):
            raise RuntimeError(text.removeprefix("RAISE "))
        return 0.0 if text.startswith("LOW ") else 1.0

    def reason(ctx: Any) -> str:
        return str(ctx.run.output).split(" ", 1)[1]

    return (
        create_scorer(id="reasoned", description="its reason is the output")
        .generate_score(score)
        .generate_reason(reason)
    )


GATE = threading.Event()
"""Holds every run of the `held` scorer until a test sets it."""


def held() -> Scorer:
    async def score(ctx: Any) -> float:
        await asyncio.to_thread(GATE.wait, 60)
        return 1.0

    return create_scorer(id="held", description="waits for the test").generate_score(score)


CATALOG = {
    **PREBUILT,
    "reasoned": PrebuiltScorer("reasoned", "Reasoned", "Reason from the output", reasoned, False),
    "held": PrebuiltScorer("held", "Held", "Waits for the test", held, False),
}


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    service.store.close()


def run(service: Service, data: bytes | None = None, name: str = "planted") -> str:
    dataset = service.import_dataset(f"{name}.csv", data or planted_csv())
    experiment_id = service.start_experiment(
        ExperimentConfig(
            name=name,
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="reasoned"),
                ScorerSpec(scorer_id="checks.includes", options={"value": "e"}),
            ],
        )
    )
    progress = service.wait(experiment_id, timeout=60)
    assert progress.status == "completed", progress
    return experiment_id


# ---- renames, notes and tags ----


def test_rename_dataset_and_experiment(service: Service) -> None:
    experiment_id = run(service)
    dataset_id = service.get_experiment(experiment_id).dataset_id
    assert service.rename_dataset(dataset_id, "  TruthfulQA v2 ").name == "TruthfulQA v2"
    assert service.get_experiment(experiment_id).dataset_name == "TruthfulQA v2"
    assert service.rename_experiment(experiment_id, "baseline").name == "baseline"
    assert [i.name for i in service.list_experiments()] == ["baseline"]
    for bad, message in [("  ", "empty"), ("x" * 201, "201 characters"), ("a\nb", "one line")]:
        with pytest.raises(InvalidInputError, match=message):
            service.rename_experiment(experiment_id, bad)
        with pytest.raises(InvalidInputError, match="dataset name"):
            service.rename_dataset(dataset_id, bad)
    with pytest.raises(NotFoundError):
        service.rename_experiment("nope", "x")
    with pytest.raises(NotFoundError):
        service.rename_dataset("nope", "x")


def test_note_and_tags_are_stored_listed_and_checked(service: Service) -> None:
    experiment_id = run(service)
    assert service.get_experiment(experiment_id).note is None
    assert service.get_experiment(experiment_id).tags == []
    info = service.set_experiment_note(
        experiment_id, "  Prompt v3, temperature 0.  ", [" prompt-v3", "baseline", "Baseline"]
    )
    assert info.note == "Prompt v3, temperature 0."
    assert info.tags == ["prompt-v3", "baseline"]  # blanks trimmed, duplicates dropped
    listed = service.list_experiments()[0]
    assert (listed.note, listed.tags) == (info.note, info.tags)
    assert Service(service.store.url, catalog=CATALOG).get_experiment(experiment_id).tags == [
        "prompt-v3",
        "baseline",
    ]
    cleared = service.set_experiment_note(experiment_id, "   ", [])
    assert (cleared.note, cleared.tags) == (None, [])


@pytest.mark.parametrize(
    ("note", "tags", "message"),
    [
        (None, ["x" * (MAX_TAG_CHARS + 1)], f"Tag 1 .* at most {MAX_TAG_CHARS}"),
        (None, [f"t{n}" for n in range(MAX_TAGS + 1)], f"at most {MAX_TAGS}"),
        (None, ["ok", "  "], "Tag 2 is empty"),
        (None, ["a,b"], "comma"),
        (None, "one string", "list"),
        ("n" * 5_000, [], "note is 5,000 characters"),
    ],
)
def test_bad_notes_and_tags_are_refused_and_nothing_changes(
    service: Service, note: str | None, tags: Any, message: str
) -> None:
    experiment_id = run(service)
    service.set_experiment_note(experiment_id, "kept", ["kept"])
    with pytest.raises(InvalidInputError, match=message):
        service.set_experiment_note(experiment_id, note, tags)
    info = service.get_experiment(experiment_id)
    assert (info.note, info.tags) == ("kept", ["kept"])


# ---- finding a stored upload, deleting ----


def test_the_same_content_is_found_whatever_the_file(service: Service) -> None:
    first = service.import_dataset("one.csv", b"input,output\nq,a\n")
    report = service.preview_import("two.jsonl", b'{"input": "q", "output": "a"}\n')
    assert report.fingerprint == first.fingerprint
    assert service.find_dataset(report.fingerprint or "") == first
    assert service.find_dataset("0" * 64) is None
    assert service.find_dataset("") is None


def test_deletion_impact_counts_what_goes_and_delete_dataset_cascades(service: Service) -> None:
    first = run(service, name="first")
    dataset_id = service.get_experiment(first).dataset_id
    second = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=[ScorerSpec(scorer_id="reasoned")])
    )
    service.wait(second, timeout=60)
    other = run(service, b"input,output\nq,a\n", name="other")
    impact = service.dataset_deletion(dataset_id)
    stored = [service.store.result_count(i) for i in (first, second)]
    assert stored[0] > stored[1] > 0
    assert (impact.kind, impact.experiments, impact.results, impact.reviews) == (
        "dataset",
        2,
        sum(stored),
        0,
    )
    assert impact.items == service.get_dataset(dataset_id).item_count and impact.running == 0
    one = service.experiment_deletion(second)
    assert (one.kind, one.experiments, one.results) == ("experiment", 1, stored[1])
    assert one.name == service.get_experiment(second).name
    service.delete_dataset(dataset_id)
    assert [i.id for i in service.list_experiments()] == [other]
    assert [d.name for d in service.list_datasets()] == ["other"]
    assert service.failures(first) == []  # its failures went with it
    with pytest.raises(NotFoundError):
        service.dataset_deletion(dataset_id)
    with pytest.raises(NotFoundError):
        service.experiment_deletion(first)


def test_a_running_experiment_is_counted_and_blocks_the_deletion(service: Service) -> None:
    GATE.clear()
    dataset = service.import_dataset("held.csv", b"input,output\nq,a\n")
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="held")])
    )
    try:
        assert service.dataset_deletion(dataset.id).running == 1
        assert service.experiment_deletion(started).running == 1
        with pytest.raises(ExperimentConfigError, match="Cancel"):
            service.delete_dataset(dataset.id)
        with pytest.raises(ExperimentConfigError, match="Cancel"):
            service.delete_experiment(started)
    finally:
        GATE.set()
        service.wait(started, timeout=60)
    assert service.dataset_deletion(dataset.id).running == 0
    service.delete_dataset(dataset.id)
    assert service.list_experiments() == []


def test_the_reviews_an_experiment_holds_are_counted_and_go_with_it(service: Service) -> None:
    experiment_id = run(service)
    kept = run(service, b"input,output\nq,e\n", name="kept")
    dataset_id = service.get_experiment(experiment_id).dataset_id
    item_id = service.dataset_items(dataset_id)[0].id
    for reviewer in ("ana", "bo"):
        service.save_review(experiment_id, item_id, "reasoned", "wrong", reviewer=reviewer)
    other_item = service.dataset_items(service.get_experiment(kept).dataset_id)[0].id
    service.save_review(kept, other_item, "reasoned", "right", reviewer="ana")
    assert service.experiment_deletion(experiment_id).reviews == 2
    assert service.dataset_deletion(dataset_id).reviews == 2
    service.delete_experiment(experiment_id)
    assert service.store.review_count([experiment_id]) == 0
    assert service.store.review_count([kept]) == 1  # another experiment's reviews stay


def test_a_database_from_before_notes_is_upgraded(database_url: str) -> None:
    store = Store(database_url)
    dataset = store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="f" * 64,
        columns=["input"],
        mapping=ColumnMapping(input="input", output="input"),
        items=[],
    )
    store.close()
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0005")
        connection.exec_driver_sql(
            "INSERT INTO experiments (id, name, dataset_id, dataset_fingerprint, concurrency,"
            " status, total_items, total_runs, done_runs, succeeded_runs, failed_runs,"
            " judge_calls, judge_attempts, created_at, judge_cache)"
            f" VALUES ('old', 'old run', '{dataset.id}', 'f', 1, 'completed', 0, 0, 0, 0, 0,"
            " 0, 0, '2026-01-01 00:00:00+00:00', false)"
        )
    engine.dispose()
    upgraded = Store(database_url)
    try:
        info = upgraded.get_experiment("old")
        assert (info.note, info.tags) == (None, [])
        assert upgraded.set_experiment_note("old", "now", ["t"]).tags == ["t"]
    finally:
        upgraded.close()


# ---- themes ----


def test_themes_of_low_score_reasons_name_the_planted_topics(service: Service) -> None:
    experiment_id = run(service)
    report = service.themes(experiment_id, "reasoned", "low_scores", seed=0, threshold=0.5)
    assert report.considered == 24 and report.without_text == 0
    assert "24 of 30 scored items" in report.basis and "below 0.5" in report.basis
    assert len(report.themes) == 3 and {t.size for t in report.themes} == {8}
    for theme in report.themes:
        topics = {item_id.rstrip("0123456789") for item_id in theme.item_ids}
        assert len(topics) == 1
        words = {"date": {"date", "wrong", "year"}, "source": {"source", "cites", "context"},
                 "tone": {"rude", "dismissive", "tone"}}[topics.pop()]  # fmt: skip
        assert words & set(theme.words[:3]), theme
    assert service.themes(experiment_id, "reasoned", seed=0, threshold=0.5) == report
    bottom = service.themes(experiment_id, "reasoned")  # lowest quarter: ties at 0 all taken
    assert bottom.quantile == 0.25 and bottom.cutoff == 0.0 and bottom.considered == 24


def test_themes_of_failure_errors(service: Service) -> None:
    experiment_id = run(service)
    report = service.themes(experiment_id, None, "failures", seed=1)
    assert report.considered == 6 and sum(t.size for t in report.themes) == 6
    labels = " ".join(t.label for t in report.themes)
    assert "limit" in labels or "rate" in labels
    assert "timed" in labels or "server" in labels or "connecting" in labels
    for theme in report.themes:
        kinds = {item_id.rstrip("0123456789") for item_id in theme.item_ids}
        assert len(kinds) == 1
    assert service.themes(experiment_id, "checks.includes", "failures").themes == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"scorer_id": "nope"}, InvalidInputError, "no scorer 'nope'"),
        ({"scorer_id": None}, InvalidInputError, "need a scorer"),
        ({"scorer_id": "reasoned", "kind": "other"}, InvalidInputError, "Unknown theme kind"),
        ({"scorer_id": "reasoned", "quantile": 2.0}, InvalidInputError, "quantile"),
        ({"scorer_id": "reasoned", "max_themes": 0}, InvalidInputError, "max_themes"),
    ],
)
def test_themes_refuse_bad_requests(
    service: Service, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    experiment_id = run(service, b"input,output\nq,LOW a\n")
    with pytest.raises(error, match=message):
        service.themes(experiment_id, **kwargs)
    with pytest.raises(NotFoundError):
        service.themes("nope", "reasoned")


def test_themes_of_an_experiment_without_low_scores(service: Service) -> None:
    experiment_id = run(service, b"input,output\nq,HIGH fine\n")
    report = service.themes(experiment_id, "reasoned", threshold=0.5)
    assert (report.considered, report.themes) == (0, [])
    outcome = ScorerOutcome(item_id="x", scorer_id="reasoned", status="success", score=0.0)
    service.store.add_results(experiment_id, [outcome])  # a low score without a reason
    report = service.themes(experiment_id, "reasoned", threshold=0.5)
    assert (report.considered, report.without_text, report.themes) == (0, 1, [])
