"""Checking a judge model before anything runs."""

from __future__ import annotations

import pytest

from core.judge.check import judge_problems


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
