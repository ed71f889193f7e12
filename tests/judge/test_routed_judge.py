"""The judge model routed once (core/judge/credentials.py, `route_judge`): one litellm routing
for the provider, one record carrying the provider, the origin, whether it is the provider's
own endpoint and the key decision, read alike by the judge config, the rate limit and a Ray
recipe."""

from __future__ import annotations

import pytest

from core.experiments.ray_recipe import recipe_of
from core.judge import _litellm
from core.judge.config import JudgeConfig
from core.judge.credentials import (
    JudgeSetupError,
    judge_config,
    judge_key,
    route_judge,
)
from core.judge.rate_limit import PROVIDER_DEFAULTS, experiment_rate_limit

CLEAN = {"OPENAI_API_KEY": "sk-env-0123456789abcdef"}


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = _litellm.resolve_model

    def resolve(model: str, api_base: str | None) -> tuple[str, str]:
        calls.append(model)
        return real(model, api_base)

    monkeypatch.setattr(_litellm, "resolve_model", resolve)
    return calls


def test_routing_asks_litellm_for_the_provider_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch)
    routed = route_judge("openai/gpt-4o-mini", "http://127.0.0.1:8000/v1", environ=CLEAN)
    assert calls == ["openai/gpt-4o-mini"]
    assert (routed.provider, routed.api_base) == ("openai", "http://127.0.0.1:8000/v1")
    assert routed.key.endpoint == "http://127.0.0.1:8000" and not routed.own_endpoint
    assert routed.key.source == "none" and routed.key.withheld == "OPENAI_API_KEY"
    judge = judge_config(routed, {})
    assert experiment_rate_limit(routed.model, routed.api_base, None, routed) is None
    assert calls == ["openai/gpt-4o-mini"]  # the config and the limit read the record
    assert judge.api_base == routed.api_base and judge.model == routed.model


def test_the_providers_own_endpoint_gets_its_key_and_its_default_limit() -> None:
    routed = route_judge("openai/gpt-4o-mini", None, environ=CLEAN)
    assert routed.own_endpoint and routed.key.source == "provider"
    assert routed.key.variable == "OPENAI_API_KEY" and routed.key.endpoint is None
    limit = experiment_rate_limit(routed.model, None, None, routed)
    assert limit == PROVIDER_DEFAULTS.get("openai")
    assert limit == experiment_rate_limit(routed.model, None, None)  # as routed afresh


@pytest.mark.parametrize(
    ("model", "base", "typed", "environ"),
    [
        ("openai/gpt-4o-mini", None, False, CLEAN),
        ("openai/gpt-4o-mini", None, True, CLEAN),
        ("openai/gpt-4o-mini", "http://127.0.0.1:9/v1", False, CLEAN),
        ("openai/gpt-4o-mini", "https://api.openai.com/v1", False, CLEAN),
        ("openai/gpt-4o-mini", "http://10.0.0.5:8000/v1", False,
         {**CLEAN, "SCORELAB_TRUSTED_API_BASES": "http://10.0.0.5:8000"}),
        ("openai/gpt-4o-mini", "http://127.0.0.1:9/v1", False, {"SCORELAB_JUDGE_API_KEY": "k"}),
        ("ollama/llama3", None, False, {}),
    ],
)  # fmt: skip
def test_the_route_decides_the_key_judge_key_names(
    model: str, base: str | None, typed: bool, environ: dict[str, str]
) -> None:
    routed = route_judge(model, base, typed=typed, environ=environ)
    assert routed.key == judge_key(model, base, typed=typed, environ=environ)


def test_an_unroutable_model_is_refused_by_name() -> None:
    with pytest.raises(JudgeSetupError, match="cannot route the judge model 'gpt-nonsense-x'"):
        route_judge("gpt-nonsense-x", None, environ={})


def test_a_ray_recipe_carries_the_routes_key_without_deciding_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routed = route_judge("openai/fake-judge", "http://127.0.0.1:9/v1", environ=CLEAN)
    calls = counting(monkeypatch)
    judge = JudgeConfig(model=routed.model, api_base=routed.api_base)
    recipe, _ = recipe_of([], judge, None, None, routed.key)
    assert recipe.key == routed.key and calls == []
    _, _ = recipe_of([], judge, None)  # without it: decided here, routing again
    assert calls == ["openai/fake-judge"]


def test_a_missing_provider_key_is_named_when_the_config_is_made() -> None:
    routed = route_judge("openai/gpt-4o-mini", None, environ={})
    assert routed.key.missing and "OPENAI_API_KEY" in routed.key.missing
    with pytest.raises(JudgeSetupError, match="OPENAI_API_KEY"):
        judge_config(routed, {})
