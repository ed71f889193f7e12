"""The judge cache (core/judge/cache.py): opt-in per judge, keyed by what decides the answer,
visible in the judge record; never read when off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.judge import cache as judge_cache_module
from core.judge.cache import CACHE_ENV, DATA_DIR_ENV, cache_key, cache_location
from core.testing import FakeJudge, Reply


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test its own cache file."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    judge_cache_module._store.cache_clear()
    yield tmp_path / "cache"
    judge_cache_module._store.cache_clear()


class Verdict(BaseModel):
    verdict: str


def scorer(judge: JudgeConfig, prompt: str = "score this") -> Scorer:
    return (
        create_scorer(id="judged", description="a judged scorer", judge=judge)
        .analyze(
            PromptStep(
                description="Analyze", create_prompt=lambda ctx: "analyze", output_schema=Verdict
            )
        )
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: prompt))
        .generate_reason(PromptStep(description="Why", create_prompt=lambda ctx: "explain"))
    )


def run(judge: JudgeConfig, **options: Any) -> Any:
    return scorer(judge, **options).run_sync(input="q", output="a")


def answers(request: dict[str, Any]) -> Reply:
    text = request["messages"][-1]["content"]
    if text.startswith("analyze"):
        return Reply('{"verdict": "yes"}', prompt_tokens=40, completion_tokens=5)
    if text.startswith("explain"):
        return Reply("Because.", prompt_tokens=30, completion_tokens=3)
    return Reply('{"score": 0.5}', prompt_tokens=50, completion_tokens=4)


def test_a_second_identical_run_sends_no_request(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.responder = answers
    judge = judge_config.model_copy(update={"cache": True})
    first = run(judge)
    sent = judge_server.call_count
    assert sent == 3
    second = run(judge)
    assert judge_server.call_count == sent  # every answer came from the cache
    assert (second.score, second.reason) == (first.score, first.reason)
    executions = [step.executions[0] for step in (second.judge or {}).values()]
    assert [e.cached for e in executions] == [True, True, True]
    assert all(e.attempt_count == 0 and e.model_call_count == 0 for e in executions)
    assert all(e.usage.is_empty() for e in executions)
    assert second.judge_totals()[1:] == (0, 0)
    assert second.cached_calls() == 3
    assert second.to_dict()["judge"]["generateScore"]["executions"][0]["cached"] is True
    # The first run was paid for: its records say nothing of a cache.
    assert first.cached_calls() == 0
    assert "cached" not in first.to_dict()["judge"]["generateScore"]["executions"][0]


def test_a_changed_temperature_or_prompt_misses(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.responder = answers
    judge = judge_config.model_copy(update={"cache": True})
    run(judge)
    assert judge_server.call_count == 3
    warmer = judge.model_copy(update={"model_settings": {"num_retries": 0, "temperature": 0.7}})
    run(warmer)
    assert judge_server.call_count == 6  # another temperature: every call is new
    run(judge, prompt="score this, differently")
    assert judge_server.call_count == 7  # only the changed prompt's call


def test_timeout_and_retries_do_not_change_the_key() -> None:
    base = {"model": "openai/x", "messages": [{"role": "user", "content": "hi"}]}
    same = {**base, "timeout": 5, "num_retries": 0, "max_retries": 0, "api_key": "k"}
    assert cache_key(base) == cache_key(same)
    assert cache_key(base) != cache_key({**base, "seed": 1})
    assert cache_key(base) != cache_key({**base, "api_base": "http://127.0.0.1:1/v1"})
    assert cache_key(base) != cache_key({**base, "response_format": {"type": "json_object"}})


def test_with_the_cache_off_it_is_neither_read_nor_written(
    judge_server: FakeJudge, judge_config: JudgeConfig, cache_dir: Path
) -> None:
    judge_server.responder = answers
    run(judge_config.model_copy(update={"cache": True}))
    stored = len(judge_cache_module.judge_cache())  # type: ignore[arg-type]
    assert stored == 3
    result = run(judge_config)  # cache unset: the provider answers every call
    assert judge_server.call_count == 6
    assert result.cached_calls() == 0
    run(judge_config.model_copy(update={"cache": False}))
    assert judge_server.call_count == 9
    assert len(judge_cache_module.judge_cache()) == stored  # type: ignore[arg-type]


def test_a_malformed_answer_is_not_stored(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    # Structured output first, then the fallback with the schema in the prompt: two keys.
    judge = judge_config.model_copy(update={"cache": True, "json_prompt_injection": False})
    simple = create_scorer(id="s", description="d", judge=judge).generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: "score")
    )
    judge_server.script("not JSON", '{"score": 1}')  # the fallback (schema in prompt) answers
    assert simple.run_sync(input="q", output="a").score == 1
    assert judge_server.call_count == 2
    again = simple.run_sync(input="q", output="a")
    # The first request's key has nothing stored: it is asked again (the default answer is
    # valid this time, so no fallback is needed).
    assert judge_server.call_count == 3
    assert again.score == 1


def test_the_default_location_is_the_data_directory(tmp_path: Path) -> None:
    assert cache_location({DATA_DIR_ENV: str(tmp_path)}) == str(tmp_path / "judge-cache.sqlite3")
    assert cache_location({CACHE_ENV: "redis://cache:6379/0"}) == "redis://cache:6379/0"
    assert cache_location({CACHE_ENV: str(tmp_path / "x")}).endswith("x/judge-cache.sqlite3")


def test_a_redis_cache_needs_the_redis_package_and_an_unreachable_server_is_a_miss(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    import importlib.util

    from core.judge.cache import JudgeCacheError, judge_cache

    monkeypatch.setenv(CACHE_ENV, "redis://127.0.0.1:1/0")  # nothing listens on port 1
    if importlib.util.find_spec("redis") is None:
        with pytest.raises(JudgeCacheError, match="pip install redis"):
            judge_cache()
        return
    store = judge_cache()
    assert asyncio.run(store.get("some key")) is None
    asyncio.run(store.put("some key", {"content": "x"}))  # not kept, never raised
