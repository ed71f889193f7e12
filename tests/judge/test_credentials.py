"""Checking a judge before anything runs: its model, which key it gets and where that key goes
(the policy of core.judge.credentials), its API base and its settings (an allow-list)."""

from __future__ import annotations

import re

import pytest
from pydantic import SecretStr

from core.judge.credentials import (
    ALLOWED_JUDGE_SETTINGS,
    JUDGE_API_KEY_ENV,
    NO_KEY,
    TRUSTED_API_BASES_ENV,
    JudgeSetupError,
    check_api_base,
    check_judge_settings,
    experiment_judge,
    judge_key,
    judge_problems,
)
from core.judge.endpoints import origin, provider_key_may_go, trusted_origins

LOCAL = "http://127.0.0.1:8000/v1"
PROVIDER_KEY = "sk-provider-canary-000"


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


def test_a_default_base_url_is_not_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    assert judge_problems("ollama/llama3", None, has_api_key=False) == []


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for variable in (
        JUDGE_API_KEY_ENV,
        TRUSTED_API_BASES_ENV,
        "OPENAI_API_KEY",
        "OPENAI_API_BASE",
        "OPENAI_BASE_URL",
        "HOSTED_VLLM_API_KEY",
        "HOSTED_VLLM_API_BASE",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


# ---- the policy: which key goes where ----


def test_a_provider_key_never_goes_to_an_untrusted_base(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    # A model without its provider prefix is routed by litellm all the same.
    for model in ("openai/my-model", "gpt-4o-mini"):
        judge = experiment_judge(model, LOCAL, {})
        assert judge.api_key is not None and judge.api_key.get_secret_value() == NO_KEY
    key = judge_key("openai/my-model", LOCAL)
    assert (key.source, key.endpoint) == ("none", "http://127.0.0.1:8000")
    # The provider's key that was held back is named, with the way to send it.
    assert key.withheld == "OPENAI_API_KEY"
    line = key.describe()
    assert line.startswith("Judge key: none (the server gets a placeholder)")
    assert "OPENAI_API_KEY is not sent to http://127.0.0.1:8000" in line
    assert TRUSTED_API_BASES_ENV in line
    # Another provider's key, at a base that is not its own, is held back the same way.
    no_keys.setenv("ANTHROPIC_API_KEY", PROVIDER_KEY)
    judge = experiment_judge("anthropic/claude-3-5-haiku-latest", LOCAL, {})
    assert judge.api_key is not None and judge.api_key.get_secret_value() == NO_KEY


def test_the_provider_key_goes_to_the_providers_own_endpoint(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    for base in (None, "https://api.openai.com/v1", "https://API.openai.com:443/v1/"):
        judge = experiment_judge("openai/gpt-4o-mini", base, {})
        assert judge.api_key is None  # litellm reads OPENAI_API_KEY for its own endpoint
    assert judge_key("openai/gpt-4o-mini", None).describe() == (
        "Judge key: OPENAI_API_KEY (the provider's own endpoint)"
    )


def test_the_key_line_names_the_origin_the_environment_configures(
    no_keys: pytest.MonkeyPatch,
) -> None:
    """Issue 19: with OPENAI_BASE_URL set and no API base, the key goes to that origin (litellm
    reads it), and the line names it rather than only "the provider's own endpoint"."""
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    no_keys.setenv("OPENAI_BASE_URL", "https://gateway.example.org:8443/openai/v1")
    assert judge_key("openai/gpt-4o-mini", None).describe() == (
        "Judge key: OPENAI_API_KEY (the provider's own endpoint, sent to "
        "https://gateway.example.org:8443 as OPENAI_BASE_URL configures)"
    )
    assert judge_key("openai/gpt-4o-mini", None, typed=True).describe() == (
        "Judge key: the one typed here (not stored), sent to https://gateway.example.org:8443 "
        "(OPENAI_BASE_URL)"
    )
    no_keys.delenv("OPENAI_BASE_URL")
    no_keys.setenv("OPENAI_API_BASE", "http://10.0.0.7:4000")
    assert "sent to http://10.0.0.7:4000 as OPENAI_API_BASE configures" in (
        judge_key("openai/gpt-4o-mini", None).describe()
    )


def test_a_base_configured_for_the_provider_is_its_own(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("HOSTED_VLLM_API_KEY", PROVIDER_KEY)
    no_keys.setenv("HOSTED_VLLM_API_BASE", "http://vllm.internal:8000/v1")
    key = judge_key("hosted_vllm/llama", "http://vllm.internal:8000/v1")
    assert (key.source, key.variable, key.trusted) == ("provider", "HOSTED_VLLM_API_KEY", False)
    # Another provider's key does not follow it there.
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    assert judge_key("openai/llama", "http://vllm.internal:8000/v1").source == "none"


def test_a_trusted_base_gets_the_provider_key(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    no_keys.setenv(TRUSTED_API_BASES_ENV, "https://proxy.example.com, http://127.0.0.1:8000")
    key = judge_key("openai/my-model", LOCAL)
    assert (key.source, key.variable, key.trusted) == ("provider", "OPENAI_API_KEY", True)
    assert key.describe() == (
        "Judge key: OPENAI_API_KEY for http://127.0.0.1:8000 (trusted in "
        "SCORELAB_TRUSTED_API_BASES)"
    )
    assert experiment_judge("openai/my-model", LOCAL, {}).api_key is None
    # Origins are exact: another port is another server.
    assert judge_key("openai/my-model", "http://127.0.0.1:8001/v1").source == "none"


def test_the_scorelab_key_goes_to_the_judge_wherever_it_is(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-scorelab-0000")
    no_keys.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    for base in (None, LOCAL):
        judge = experiment_judge("openai/my-model", base, {})
        assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-scorelab-0000"
    assert judge_key("openai/my-model", LOCAL).describe() == (
        "Judge key: SCORELAB_JUDGE_API_KEY for http://127.0.0.1:8000"
    )
    judge = experiment_judge("anthropic/claude-3-5-haiku-latest", None, {})
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-scorelab-0000"


def test_a_typed_key_wins(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-scorelab-0000")
    typed = SecretStr("sk-typed-for-this-run")
    judge = experiment_judge("openai/my-model", LOCAL, {}, typed_key=typed)
    assert judge.api_key == typed
    assert judge_key("openai/my-model", LOCAL, typed=True).describe() == (
        "Judge key: the one typed here (not stored), sent to http://127.0.0.1:8000"
    )


def test_no_key_at_all_for_a_server_gets_the_placeholder(no_keys: pytest.MonkeyPatch) -> None:
    judge = experiment_judge("openai/my-model", LOCAL, {})
    assert judge.api_key is not None and judge.api_key.get_secret_value() == NO_KEY
    assert judge.api_base == LOCAL


def test_a_missing_provider_key_is_said_before_the_run(no_keys: pytest.MonkeyPatch) -> None:
    key = judge_key("anthropic/claude-3-5-haiku-latest", None)
    assert key.source == "none" and "needs ANTHROPIC_API_KEY" in key.describe()
    with pytest.raises(JudgeSetupError, match="needs ANTHROPIC_API_KEY"):
        experiment_judge("anthropic/claude-3-5-haiku-latest", None, {})


def test_the_decision_is_resolved_from_the_environment_of_the_caller(
    no_keys: pytest.MonkeyPatch,
) -> None:
    # A worker resolves the driver's decision with its own environment: the decision holds
    # no key, and a provider's key is never part of what goes to an untrusted base.
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-driver-0000")
    decision = judge_key("openai/my-model", LOCAL)
    worker = {JUDGE_API_KEY_ENV: "sk-worker-0000", "OPENAI_API_KEY": PROVIDER_KEY}
    resolved = decision.api_key(environ=worker)
    assert resolved is not None and resolved.get_secret_value() == "sk-worker-0000"
    assert "sk-driver" not in repr(decision)
    with pytest.raises(JudgeSetupError, match="no longer set"):
        decision.api_key(environ={})
    untrusted = judge_key("openai/my-model", LOCAL, environ={"OPENAI_API_KEY": PROVIDER_KEY})
    resolved = untrusted.api_key(environ=worker)
    assert resolved is not None and resolved.get_secret_value() == NO_KEY


def test_origins_and_the_trusted_list() -> None:
    assert origin("HTTPS://Example.COM:443/v1") == "https://example.com"
    assert origin("http://[::1]:8000/v1") == "http://[::1]:8000"
    assert origin("ftp://example.com") is None and origin("not a url") is None
    environ = {TRUSTED_API_BASES_ENV: "https://a.example, http://b.example:8080/v1, c.example"}
    assert trusted_origins(environ) == {"https://a.example"}
    message = "'http://b.example:8080/v1', which is not an origin"
    with pytest.raises(JudgeSetupError, match=re.escape(message)):
        trusted_origins(environ, strict=True)
    assert provider_key_may_go("openai/x", "openai", "https://a.example/v1", environ)
    assert not provider_key_may_go("openai/x", "openai", "https://a.example.evil.com", environ)


# ---- the API base ----


@pytest.mark.parametrize(
    ("api_base", "message"),
    [
        ("http://user:hunter2@127.0.0.1:8000/v1", "must not hold a user name or password"),
        ("http://user@127.0.0.1:8000/v1", "must not hold a user name or password"),
        ("http://127.0.0.1:8000/v1?api-key=hunter2", "must not hold a query"),
        ("http://127.0.0.1:8000/v1#hunter2", "must not hold a query (?...) or a fragment"),
        ("127.0.0.1:8000/v1", "is not an http(s) URL"),
        ("http://127.0.0.1:port/v1", "is not a valid URL"),
    ],
)
def test_an_api_base_holding_a_credential_or_not_a_url_is_refused(
    api_base: str, message: str
) -> None:
    with pytest.raises(JudgeSetupError, match=re.escape(message)) as caught:
        check_api_base(api_base)
    assert "hunter2" not in str(caught.value)  # the refusal never repeats the credential


def test_a_plain_api_base_is_kept() -> None:
    assert check_api_base("  http://127.0.0.1:8000/v1 ") == "http://127.0.0.1:8000/v1"
    assert check_api_base("") is None and check_api_base(None) is None


# ---- the settings ----


def test_settings_go_over_the_defaults(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv(JUDGE_API_KEY_ENV, "sk-scorelab")
    assert experiment_judge("openai/x", None, {}).model_settings == {"num_retries": 2}
    judge = experiment_judge("openai/x", None, {"num_retries": 0, "temperature": 0})
    assert judge.model_settings == {"num_retries": 0, "temperature": 0}


def test_every_allowed_setting_is_accepted() -> None:
    settings = {
        "temperature": 0.2,
        "top_p": 1,
        "max_tokens": 512,
        "max_completion_tokens": 512,
        "timeout": 30,
        "num_retries": 3,
        "max_retries": 1,
        "seed": 7,
        "stop": ["END"],
        "presence_penalty": -1.5,
        "frequency_penalty": 0,
        "reasoning_effort": "low",
    }
    assert set(settings) == set(ALLOWED_JUDGE_SETTINGS)
    assert check_judge_settings(settings) == settings


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "vertex_credentials",
        "extra_body",
        "extra_headers",
        "credentials",
        "passwd",
        "aws_secret_access_key",
        "base_url",
        "response_format",
    ],
)
def test_any_other_setting_is_refused_by_name(name: str) -> None:
    with pytest.raises(JudgeSetupError) as caught:
        check_judge_settings({name: "sk-secret-value-000"})
    message = str(caught.value)
    assert f"Judge setting {name!r} is not allowed" in message
    assert "Allowed: temperature, top_p, max_tokens" in message
    assert "sk-secret-value-000" not in message


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"temperature": "hot"}, "'temperature' must be a number from 0 to 2, not a value of type"),
        ({"temperature": 3}, "'temperature' must be a number from 0 to 2, not 3"),
        ({"num_retries": -1}, "'num_retries' must be a whole number of retries (0 or more)"),
        ({"timeout": 0}, "'timeout' must be seconds, a number above 0"),
        ({"stop": ["a", 1]}, "'stop' must be a text, or a list of 1 to 4 texts"),
        ({"reasoning_effort": "max"}, "'reasoning_effort' must be one of none, minimal"),
        ({"max_tokens": True}, "'max_tokens' must be a whole number of tokens"),
    ],
)
def test_a_setting_out_of_range_is_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(JudgeSetupError, match=re.escape(message)):
        check_judge_settings(settings)


@pytest.mark.parametrize(
    ("model", "settings", "message"),
    [
        ("openai/x", {"api_key": "k"}, "Judge setting 'api_key' is not allowed"),
        ("openai/x", {"extra_headers": {}}, "Judge setting 'extra_headers' is not allowed"),
        ("gpt4-typo", {}, "litellm cannot route the judge model 'gpt4-typo'"),
        ("anthropic/claude-3-5-haiku-latest", {}, "needs ANTHROPIC_API_KEY"),
    ],
)
def test_a_judge_that_cannot_work_is_refused(
    no_keys: pytest.MonkeyPatch, model: str, settings: dict[str, object], message: str
) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-provider")
    with pytest.raises(JudgeSetupError, match=re.escape(message)):
        experiment_judge(model, None, settings)
