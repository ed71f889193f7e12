"""The service's judge keys end to end (scorelab issue 11, points 1 and 7): which key reaches
a judge server (the fake judge records each request's Authorization header) for experiments
and for the playground; a key typed for one run is never stored; every secret the process
holds is masked in results, failures, exports, the database and the logs; judge settings come
from an allow-list and an API base may not hold a credential."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from key_canary import CANARY, KEY_VARIABLES, ROWS, SCORER, echoing_judge

from core.exchange.exports import experiment_json_text, results_csv
from core.exchange.html import experiment_html
from core.records import ExperimentConfig, ScorerSpec
from core.service import ExperimentConfigError, Service
from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

LOCAL_KEY = "sk-scorelab-judge-key-42"
TYPED = "sk-typed-for-this-run-0042"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    shared = Service(f"sqlite:///{tmp_path / 'keys.db'}", samples_dir=tmp_path / "none")
    yield shared
    shared.store.close()


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    """OPENAI_API_KEY set to the canary; no other judge key, no trusted base."""
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    return CANARY


def trust(monkeypatch: pytest.MonkeyPatch, judge: FakeJudge) -> None:
    origin = judge.url.removesuffix("/v1")
    monkeypatch.setenv("SCORELAB_TRUSTED_API_BASES", f"https://proxy.example,{origin}")


def run(service: Service, judge: FakeJudge, api_key: str | None = None, **config: object) -> str:
    dataset = service.import_dataset("rows.csv", ROWS)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=SCORER)],
            judge_model="openai/fake-judge",
            api_base=judge.url,
            concurrency=1,
            judge_settings={"num_retries": 0},
            **config,  # type: ignore[arg-type]
        ),
        api_key=api_key,
    )
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def try_it(service: Service, judge: FakeJudge, api_key: str | None = None) -> None:
    service.try_scorer(
        ScorerSpec(scorer_id=SCORER),
        output="fine",
        judge_model="openai/fake-judge",
        api_base=judge.url,
        judge_settings={"num_retries": 0},
        api_key=api_key,
    )


def database_text(service: Service, tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "keys.db") as connection:
        # Every stored table; the search index's FTS5 table holds no text of its own (its
        # trigrams are in its shadow tables, read here like the others) and cannot be scanned.
        query = (
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
        tables = [r[0] for r in connection.execute(query)]
        return "\n".join(
            repr(row) for table in tables for row in connection.execute(f'SELECT * FROM "{table}"')
        )


# ---- which key goes where ----


def test_no_provider_key_reaches_an_untrusted_base(
    service: Service, judge_server: FakeJudge, canary: str
) -> None:
    judge_server.responder = answer_from_schema
    assert (
        service.judge_key("openai/fake-judge", judge_server.url)
        .describe()
        .startswith("Judge key: none (the server gets a placeholder); OPENAI_API_KEY is not sent")
    )
    run(service, judge_server)
    try_it(service, judge_server)
    assert len(judge_server.authorizations) == 3 * 2 + 2
    assert set(judge_server.authorizations) == {"Bearer no-key"}


def test_a_trusted_base_gets_the_provider_key(
    service: Service, judge_server: FakeJudge, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    trust(monkeypatch, judge_server)
    judge_server.responder = answer_from_schema
    run(service, judge_server)
    try_it(service, judge_server)
    assert set(judge_server.authorizations) == {f"Bearer {canary}"}


def test_the_scorelab_key_goes_to_the_base_it_names(
    service: Service, judge_server: FakeJudge, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", LOCAL_KEY)
    judge_server.responder = answer_from_schema
    origin = judge_server.url.removesuffix("/v1")
    assert service.judge_key("openai/fake-judge", judge_server.url).describe() == (
        f"Judge key: SCORELAB_JUDGE_API_KEY for {origin}"
    )
    run(service, judge_server)
    try_it(service, judge_server)
    assert set(judge_server.authorizations) == {f"Bearer {LOCAL_KEY}"}


def test_a_typed_key_goes_to_the_judge_and_nowhere_else(
    service: Service,
    judge_server: FakeJudge,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", LOCAL_KEY)  # the typed key wins over it
    judge_server.responder = echoing_judge()
    experiment_id = run(service, judge_server, api_key=TYPED)
    judge_server.responder = answer_from_schema
    try_it(service, judge_server, api_key=TYPED)
    assert set(judge_server.authorizations) == {f"Bearer {TYPED}"}
    detail = service.load_experiment(experiment_id)
    assert detail.failures  # the judge echoed the typed key in them
    shown = [
        detail.model_dump_json(),
        experiment_json_text(detail),
        experiment_html(detail),
        results_csv(detail),
        database_text(service, tmp_path),
        caplog.text,
    ]
    assert not [text for text in shown if TYPED in text or canary in text]
    assert "ExperimentConfig" not in repr(ExperimentConfig.model_fields.get("api_key"))


# ---- every secret masked ----


def test_an_echoed_provider_key_is_masked_everywhere(
    service: Service,
    judge_server: FakeJudge,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    trust(monkeypatch, judge_server)  # the server gets OPENAI_API_KEY, and echoes it
    judge_server.responder = echoing_judge()
    experiment_id = run(service, judge_server)
    assert set(judge_server.authorizations) == {f"Bearer {canary}"}

    detail = service.load_experiment(experiment_id)
    [success] = detail.results
    assert success.reason == "The reason quotes the key ***"
    failures = {f.item_id: f for f in detail.failures}
    assert set(failures) == {"b", "c"}
    assert failures["c"].error is not None and "Incorrect API key provided: ***" in (
        failures["c"].error
    )
    execution = failures["b"].failed_execution
    assert execution is not None and execution.raw_output == "still not JSON, still the key ***"
    exports = {
        "json": experiment_json_text(detail),
        "html": experiment_html(detail),
        "csv": results_csv(detail),
        "database": database_text(service, tmp_path),
        "logs": caplog.text,
        "detail": detail.model_dump_json(),
    }
    assert {name: canary in text for name, text in exports.items()} == dict.fromkeys(exports, False)
    assert "***" in exports["json"] and "***" in exports["csv"]


def test_the_playground_error_is_masked(
    service: Service, judge_server: FakeJudge, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.errors import ScorerRunError
    from core.testing import Fault
    from core.testing.fake_judge import KEY_ECHO

    trust(monkeypatch, judge_server)
    judge_server.script(Fault(401, f"Incorrect API key provided: {KEY_ECHO}"))
    with pytest.raises(ScorerRunError) as caught:
        try_it(service, judge_server)
    assert canary not in str(caught.value) and "Incorrect API key provided: ***" in str(
        caught.value
    )
    assert caught.value.result is not None
    assert canary not in json.dumps(caught.value.result.to_dict())


# ---- what is stored ----


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"judge_settings": {"api_key": "sk-x-0000000"}}, "Judge setting 'api_key' is not allowed"),
        (
            {"judge_settings": {"vertex_credentials": "{}"}},
            "Judge setting 'vertex_credentials' is not allowed",
        ),
        ({"judge_settings": {"extra_body": {}}}, "Judge setting 'extra_body' is not allowed"),
        (
            {"api_base": "http://user:hunter2-pass@127.0.0.1:9/v1"},
            "must not hold a user name or password",
        ),
    ],
)
def test_code_only_experiments_refuse_credentials_too(
    service: Service, config: dict[str, object], message: str
) -> None:
    dataset = service.import_dataset("rows.csv", ROWS)
    with pytest.raises(ExperimentConfigError, match=message) as caught:
        service.start_experiment(
            ExperimentConfig(
                dataset_id=dataset.id,
                scorers=[ScorerSpec(scorer_id="completeness-scorer")],
                **config,  # type: ignore[arg-type]
            )
        )
    assert "hunter2" not in str(caught.value) and "sk-x-0000000" not in str(caught.value)
    assert service.list_experiments() == []


def test_allowed_settings_and_a_plain_base_are_stored_as_checked(
    service: Service, judge_server: FakeJudge, canary: str
) -> None:
    judge_server.responder = answer_from_schema
    experiment_id = run(service, judge_server)
    info = service.get_experiment(experiment_id)
    assert info.api_base == judge_server.url and info.judge_settings == {"num_retries": 0}
