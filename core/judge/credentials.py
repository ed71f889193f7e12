"""The judge of an experiment: its model checked before anything runs, its key chosen by one
policy, its settings from an allow-list (docs/deploy.md, Judge keys).

Which key a judge gets (`judge_key`), first match wins:

| the judge has                         | the key sent                                      |
| ------------------------------------- | ------------------------------------------------- |
| a key typed for this experiment       | that key (held in memory only, never stored)      |
| `SCORELAB_JUDGE_API_KEY` set          | that key                                          |
| no API base, the provider's own one,  | the provider's key from the environment           |
| or one in SCORELAB_TRUSTED_API_BASES  | (OPENAI_API_KEY, ...), read by litellm            |
| any other API base                    | none: the placeholder `NO_KEY`                    |

So a provider's key never reaches a server the operator did not name. The choice is a
`JudgeKey`, which holds no secret: it can be shipped to a worker that resolves it there
(`JudgeKey.api_key`), and the judge call itself refuses to let litellm send a provider's key to
a base it may not go to (`core.judge.call`), whoever built the `JudgeConfig`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import SecretStr

from core.judge import _litellm
from core.judge.allowed_settings import ALLOWED_JUDGE_SETTINGS, check_judge_settings
from core.judge.config import JudgeConfig
from core.judge.endpoints import (
    NO_KEY,
    TRUSTED_API_BASES_ENV,
    JudgeSetupError,
    check_api_base,
    origin,
    provider_origins,
    trusted_origins,
)

__all__ = [
    "ALLOWED_JUDGE_SETTINGS",
    "DEFAULT_JUDGE_SETTINGS",
    "JUDGE_API_KEY_ENV",
    "NO_KEY",
    "TRUSTED_API_BASES_ENV",
    "JudgeKey",
    "JudgeSetupError",
    "RoutedJudge",
    "check_api_base",
    "check_judge_settings",
    "experiment_judge",
    "judge_config",
    "judge_key",
    "judge_problems",
    "route_judge",
]

JUDGE_API_KEY_ENV = "SCORELAB_JUDGE_API_KEY"
"""The key meant for the judge, whatever its endpoint (a vLLM server, a proxy, the provider);
it goes to the API base the experiment names."""

DEFAULT_JUDGE_SETTINGS: dict[str, Any] = {"num_retries": 2}
"""The judge retries (with backoff, each retry a recorded attempt) rate-limited and failed
judge requests; settings given per experiment override these."""

KeySource = Literal["typed", "scorelab", "provider", "none"]

# litellm's own variable names where they are not <PROVIDER>_API_KEY (first set one is named).
_PROVIDER_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    "datarobot": ("DATAROBOT_API_TOKEN",),
    "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_ROLE_ARN"),
    "sagemaker": ("AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_ROLE_ARN"),
    "vertex_ai": ("GOOGLE_APPLICATION_CREDENTIALS", "VERTEXAI_CREDENTIALS"),
}


@dataclass(frozen=True, slots=True)
class JudgeKey:
    """Which key a judge gets, and where it goes: the decision, without the secret."""

    source: KeySource
    """`typed`: the key typed for this experiment; `scorelab`: SCORELAB_JUDGE_API_KEY;
    `provider`: the provider's variable, read by litellm; `none`: the placeholder."""
    endpoint: str | None
    """The origin the key goes to; None for the provider's default endpoint."""
    variable: str | None = None
    """The environment variable read (`scorelab` and `provider`), when known."""
    trusted: bool = False
    """`provider`: the endpoint is in SCORELAB_TRUSTED_API_BASES (not the provider's own)."""
    withheld: str | None = None
    """`none`: the provider's variable that is set but may not go to this endpoint."""
    missing: str | None = None
    """`none`: why the provider's own endpoint cannot be called (its key is not set)."""
    configured: tuple[str, str] | None = None
    """With no API base: the origin the environment configures for the provider and the
    variable that says so (`OPENAI_BASE_URL`, ...), where litellm sends the request."""

    def describe(self) -> str:
        """One line for the person starting the judge, e.g. `Judge key: OPENAI_API_KEY (the
        provider's own endpoint)`; it names the origin the key is sent to whenever one is
        known (an API base, or one the environment configures such as OPENAI_BASE_URL)."""
        where = self.endpoint or "the provider's own endpoint"
        if self.endpoint is None and self.configured is not None:
            where = f"{self.configured[0]} ({self.configured[1]})"
        if self.source == "typed":
            return f"Judge key: the one typed here (not stored), sent to {where}"
        if self.source == "scorelab":
            return f"Judge key: {JUDGE_API_KEY_ENV} for {where}"
        if self.source == "provider":
            name = self.variable or "the provider's key from the environment"
            if self.trusted:
                return f"Judge key: {name} for {where} (trusted in {TRUSTED_API_BASES_ENV})"
            if self.endpoint is None and self.configured is not None:
                target, variable = self.configured
                return (
                    f"Judge key: {name} (the provider's own endpoint, sent to {target} as "
                    f"{variable} configures)"
                )
            return f"Judge key: {name} (the provider's own endpoint{_at(self.endpoint)})"
        if self.missing:
            return f"Judge key: none. {self.missing}"
        line = "Judge key: none (the server gets a placeholder)"
        if self.withheld:
            line += (
                f"; {self.withheld} is not sent to {where}: it goes only to the provider's "
                f"own endpoint or one listed in {TRUSTED_API_BASES_ENV}"
            )
        return line

    def api_key(
        self, typed: SecretStr | None = None, environ: Mapping[str, str] | None = None
    ) -> SecretStr | None:
        """The key to give the judge, resolved where the call is made (a worker reads its own
        environment); None lets litellm read the provider's variable, which only `provider`
        allows. Raises JudgeSetupError when the key the decision names is gone."""
        environ = os.environ if environ is None else environ
        if self.source == "typed":
            if typed is None or not typed.get_secret_value():
                raise JudgeSetupError("The key typed for this experiment is missing")
            return typed
        if self.source == "scorelab":
            value = environ.get(JUDGE_API_KEY_ENV)
            if not value:
                raise JudgeSetupError(f"{JUDGE_API_KEY_ENV} is no longer set")
            return SecretStr(value)
        if self.source == "provider":
            return None
        return SecretStr(NO_KEY)


@dataclass(frozen=True, slots=True)
class RoutedJudge:
    """A judge model routed once: where its calls go and with which key (no secret). What
    decides on the judge afterwards (its config, its rate limit, a Ray worker's recipe) reads
    this record instead of routing the model string again."""

    model: str
    """The litellm model string, as the experiment gives it."""
    provider: str
    """The provider litellm routes the model to (e.g. `openai`)."""
    api_base: str | None
    """The checked API base; None for the provider's default endpoint."""
    own_endpoint: bool
    """Whether the calls go to the provider's own endpoint (no API base, its default one or
    the one the environment configures for it), not a local server or a proxy."""
    key: JudgeKey
    """Which key the judge gets (the module's table); `key.endpoint` is the origin."""


def route_judge(
    model: str,
    api_base: str | None,
    *,
    typed: bool = False,
    environ: Mapping[str, str] | None = None,
) -> RoutedJudge:
    """`model` at `api_base` routed once: its provider asked of litellm a single time, the base
    checked, the key chosen (`typed`: a key was typed for this experiment). Raises
    JudgeSetupError for an unroutable model, a bad API base or a bad trusted-bases list."""
    environ = os.environ if environ is None else environ
    api_base = check_api_base(api_base)
    provider = _provider(model, api_base)
    trusted_origins(environ, strict=True)
    endpoint = origin(api_base) if api_base else None
    own = not api_base or (
        endpoint is not None and endpoint in provider_origins(model, provider, environ)
    )
    key = _key(model, provider, api_base, endpoint, own, typed, environ)
    return RoutedJudge(model, provider, api_base, own, key)


def judge_key(
    model: str,
    api_base: str | None,
    *,
    typed: bool = False,
    environ: Mapping[str, str] | None = None,
) -> JudgeKey:
    """Which key a judge of `model` at `api_base` gets (the module's table; `route_judge`'s
    key). Raises JudgeSetupError for an unroutable model, a bad API base or a bad
    trusted-bases list."""
    return route_judge(model, api_base, typed=typed, environ=environ).key


def _key(
    model: str,
    provider: str,
    api_base: str | None,
    endpoint: str | None,
    own: bool,
    typed: bool,
    environ: Mapping[str, str],
) -> JudgeKey:
    configured = None if api_base else _configured_base(provider, environ)
    if typed:
        return JudgeKey("typed", endpoint, configured=configured)
    if environ.get(JUDGE_API_KEY_ENV):
        return JudgeKey("scorelab", endpoint, JUDGE_API_KEY_ENV, configured=configured)
    variable = _provider_variable(provider, environ)
    if own or (endpoint is not None and endpoint in trusted_origins(environ)):
        if api_base and variable is None:
            return JudgeKey("none", endpoint)  # an own/trusted server that needs no key
        problems = [] if api_base or variable else _missing_keys(model)
        if problems:
            return JudgeKey("none", None, missing="; ".join(problems))
        return JudgeKey("provider", endpoint, variable, trusted=not own, configured=configured)
    return JudgeKey("none", endpoint, withheld=variable)


def experiment_judge(
    model: str,
    api_base: str | None,
    settings: Mapping[str, Any],
    *,
    typed_key: SecretStr | None = None,
    cache: bool = False,
) -> JudgeConfig:
    """The judge an experiment calls: `model` routed once (`route_judge`), then `judge_config`.
    Raises JudgeSetupError naming the problem."""
    typed = typed_key if typed_key is not None and typed_key.get_secret_value() else None
    routed = route_judge(model, api_base, typed=typed is not None)
    return judge_config(routed, settings, typed_key=typed, cache=cache)


def judge_config(
    routed: RoutedJudge,
    settings: Mapping[str, Any],
    *,
    typed_key: SecretStr | None = None,
    cache: bool = False,
) -> JudgeConfig:
    """The judge of a routed model: its key by the route's decision (`typed_key`: a key typed
    for this experiment), `settings` (allow-listed) over `DEFAULT_JUDGE_SETTINGS`, the judge
    cache on when `cache`. Raises JudgeSetupError naming the problem."""
    checked = check_judge_settings(settings)
    typed = typed_key if typed_key is not None and typed_key.get_secret_value() else None
    if routed.key.missing:
        raise JudgeSetupError(routed.key.missing)
    try:
        return JudgeConfig(
            model=routed.model,
            api_base=routed.api_base,
            api_key=routed.key.api_key(typed),
            model_settings={**DEFAULT_JUDGE_SETTINGS, **checked},
            cache=True if cache else None,
        )
    except ValueError as error:
        raise JudgeSetupError(f"Invalid judge settings: {error}") from error


def judge_problems(model: str, api_base: str | None, has_api_key: bool) -> list[str]:
    """What stops `model` from answering: an unroutable model string, or provider keys missing
    from the environment (not checked when an API base or an explicit key is given)."""
    try:
        _provider(model, api_base)
    except JudgeSetupError as error:
        return [str(error)]
    return [] if api_base or has_api_key else _missing_keys(model)


def _configured_base(provider: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The origin the environment configures for `provider` when no API base is given (what
    litellm then calls: `<PROVIDER>_BASE_URL`, else `<PROVIDER>_API_BASE`), and its variable."""
    prefix = provider.upper().replace("-", "_")
    for variable in (f"{prefix}_BASE_URL", f"{prefix}_API_BASE"):
        configured = origin(environ.get(variable) or "")
        if configured is not None:
            return configured, variable
    return None


def _at(endpoint: str | None) -> str:
    return f", {endpoint}" if endpoint else ""


def _provider(model: str, api_base: str | None) -> str:
    """The provider litellm routes `model` to; raises JudgeSetupError when it cannot."""
    try:
        return _litellm.resolve_model(model, api_base)[1]
    except Exception:  # litellm raises BadRequestError with a long generic text
        raise JudgeSetupError(
            f"litellm cannot route the judge model {model!r}: write it as provider/model, "
            "e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or ollama/llama3"
        ) from None


def _missing_keys(model: str) -> list[str]:
    try:
        found = _litellm.litellm().validate_environment(model=model)
    except Exception:  # an unknown provider to validate: let the first call speak
        return []
    # Base URLs have defaults (Ollama's localhost, for one); only credentials are required.
    missing = [key for key in found.get("missing_keys") or [] if not key.endswith("_API_BASE")]
    if missing:
        return [
            f"The judge model {model!r} needs {', '.join(missing)} in the environment of the "
            "process running scorelab (keys are never stored)"
        ]
    return []


def _provider_variable(provider: str, environ: Mapping[str, str]) -> str | None:
    """The provider's key variable that is set, e.g. OPENAI_API_KEY; None when none is."""
    usual = f"{provider.upper().replace('-', '_')}_API_KEY"
    for name in (*_PROVIDER_KEY_VARIABLES.get(provider, ()), usual):
        if environ.get(name):
            return name
    return None
