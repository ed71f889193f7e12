"""Checking a judge model before anything runs, and the key and settings an experiment's judge
gets (from the environment only)."""

from __future__ import annotations

import re

import pytest

from core.judge.credentials import (
    JUDGE_API_KEY_ENV,
    NO_KEY,
    JudgeSetupError,
    experiment_judge,
    judge_problems,
)


def test_an_unroutable_model_is_named_with_examples() -> None:
    problems = judge_problems("gpt4-typo", None, has_api_key=False)
    assert len(problems) == 1
    assert "cannot route the judge model 'gpt4-typo'" in problems[0]
    assert "openai/gpt-4o-mini" in problems[0]


def test_a_missing_provider_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    problems = judge_problems("anthropic/claude-3-5-haiku-latest", None, has_api_key=False)
    assert problems == [
        "The judge model 'anthropic/claude-3-5-haiku-latest' needs ANTHROPIC_API_KEY in the "
        "environment of the process running scorelab (keys are never stored)"
    ]


def test_a_present_key_or_an_api_base_or_an_explicit_key_is_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert judge_problems("openai/gpt-4o-mini", None, has_api_key=False) == []
    monkeypatch.delenv("OPENAI_API_KEY")
    assert judge_problems("openai/my-model", "http://127.0.0.1:8000/v1", has_api_key=False) == []
    assert judge_problems("openai/gpt-4o-mini", None, has_api_key=True) == []


def test_a_default_base_url_is_not_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    assert judge_problems("ollama/llama3", None, has_api_key=False) == []


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for variable in (JUDGE_API_KEY_ENV, "OPENAI_API_KEY", "HOSTED_VLLM_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


def test_a_server_without_any_key_gets_the_placeholder(no_keys: pytest.MonkeyPatch) -> None:
    judge = experiment_judge("openai/my-model", "http://127.0.0.1:8000/v1", {})
    assert judge.api_key is not None and judge.api_key.get_secret_value() == NO_KEY
    assert judge.api_base == "http://127.0.0.1:8000/v1"


def test_the_provider_key_is_left_to_litellm(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-provider")
    # A model without its provider prefix is routed by litellm all the same.
    for model in ("openai/my-model", "gpt-4o-mini"):
        assert experiment_judge(model, "http://127.0.0.1:8000/v1", {}).api_key is None


def test_the_scorelab_key_wins(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-scorelab")
    judge = experiment_judge("anthropic/claude-3-5-haiku-latest", None, {})
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-scorelab"


def test_settings_go_over_the_defaults(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-scorelab")
    assert experiment_judge("openai/x", None, {}).model_settings == {"num_retries": 2}
    judge = experiment_judge("openai/x", None, {"num_retries": 0, "temperature": 0})
    assert judge.model_settings == {"num_retries": 0, "temperature": 0}


@pytest.mark.parametrize(
    ("model", "settings", "message"),
    [
        ("openai/x", {"api_key": "k"}, "judge_settings may not hold 'api_key'"),
        ("openai/x", {"extra_headers": {}}, "credentials come from the environment"),
        ("openai/x", {"num_retries": -1}, "Invalid judge settings: "),
        ("gpt4-typo", {}, "litellm cannot route the judge model 'gpt4-typo'"),
        ("anthropic/claude-3-5-haiku-latest", {}, "needs ANTHROPIC_API_KEY"),
    ],
)
def test_a_judge_that_cannot_work_is_refused(
    no_keys: pytest.MonkeyPatch, model: str, settings: dict[str, object], message: str
) -> None:
    no_keys.delenv("ANTHROPIC_API_KEY", raising=False)
    no_keys.setenv("OPENAI_API_KEY", "sk-provider")
    with pytest.raises(JudgeSetupError, match=re.escape(message)):
        experiment_judge(model, None, settings)
