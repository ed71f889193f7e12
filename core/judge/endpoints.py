"""Where a judge's requests go, and whether the provider's key from the environment may go
there too (docs/deploy.md, Judge keys).

litellm sends the provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) to whatever API base
it is given when no key is passed. A provider's key belongs to the provider, so it may go only
to the provider's own endpoint: no API base, the provider's default one (`https://api.openai.com`
for openai), the one the operator configured for the provider in the environment
(`OPENAI_API_BASE`, `OPENAI_BASE_URL`, `HOSTED_VLLM_API_BASE`, ...), or an origin listed in
`SCORELAB_TRUSTED_API_BASES`. Any other base gets only a key meant for it (see
`core.judge.credentials`), never the provider's.

Origins are compared (scheme, host, port), not whole URLs: two paths on one server are one
server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from core.errors import ExperimentConfigError
from core.judge import _litellm

__all__ = [
    "NO_KEY",
    "TRUSTED_API_BASES_ENV",
    "JudgeSetupError",
    "check_api_base",
    "origin",
    "provider_key_may_go",
    "trusted_origins",
]

TRUSTED_API_BASES_ENV = "SCORELAB_TRUSTED_API_BASES"
"""Comma-separated origins (scheme://host[:port]) that may receive the providers' keys from the
environment, e.g. `https://llm-proxy.example.com,http://10.0.0.5:8000`."""

NO_KEY = "no-key"
"""The key an API base gets when none is meant for it: servers such as vLLM, Ollama or a proxy
often need none, the OpenAI client refuses to start without one, and an explicit key stops
litellm from falling back to the provider's variable."""

# Providers whose default endpoint litellm builds inside its handler (for the others,
# `get_llm_provider` names it).
_DEFAULT_ENDPOINTS: dict[str, tuple[str, ...]] = {
    "openai": ("https://api.openai.com",),
    "text-completion-openai": ("https://api.openai.com",),
    "anthropic": ("https://api.anthropic.com",),
    "gemini": ("https://generativelanguage.googleapis.com",),
    "cohere": ("https://api.cohere.ai", "https://api.cohere.com"),
    "cohere_chat": ("https://api.cohere.ai", "https://api.cohere.com"),
    "openrouter": ("https://openrouter.ai",),
}
_DEFAULT_PORTS = {"http": 80, "https": 443}


class JudgeSetupError(ExperimentConfigError):
    """A judge that cannot work: an unroutable model, a missing key, a bad API base, or
    settings that cannot be stored."""


def origin(url: str) -> str | None:
    """`scheme://host[:port]` of a URL (lower case, default port left out); None when the URL
    has no http(s) scheme or no host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"  # IPv6
    shown_port = "" if port is None or port == _DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{shown_port}"


def check_api_base(api_base: str | None) -> str | None:
    """The API base as it may be stored and called (None for none); raises JudgeSetupError for
    a URL that is not http(s)://host[:port][/path], or that holds a credential (user:password@,
    a query or a fragment): a URL is stored and shown with the experiment, a key is not."""
    text = (api_base or "").strip()
    if not text:
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise JudgeSetupError(
            "The API base is not a valid URL: write it as http(s)://host[:port][/path]"
        ) from None
    if parts.username is not None or parts.password is not None:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="")
        raise JudgeSetupError(
            f"The API base {shown.geturl()!r} must not hold a user name or password (user:"
            "password@): API bases are stored with the experiment, keys never are. Give the "
            "server's key in SCORELAB_JUDGE_API_KEY, or type it for this experiment"
        )
    if parts.query or parts.fragment:
        raise JudgeSetupError(
            "The API base must not hold a query (?...) or a fragment (#...): API bases are "
            "stored with the experiment, so a key in the URL would be stored too. Give the "
            "server's key in SCORELAB_JUDGE_API_KEY, or type it for this experiment"
        )
    if origin(text) is None:
        raise JudgeSetupError(
            f"The API base {text!r} is not an http(s) URL: write it as "
            "http(s)://host[:port][/path], e.g. http://127.0.0.1:8000/v1"
        )
    return text


def trusted_origins(environ: Mapping[str, str] | None = None, *, strict: bool = False) -> set[str]:
    """The origins listed in `SCORELAB_TRUSTED_API_BASES`. An entry that is not an exact
    origin (a path, a query, no scheme) is left out, or, with `strict`, refused with a
    JudgeSetupError naming it."""
    environ = os.environ if environ is None else environ
    found = set()
    for entry in (environ.get(TRUSTED_API_BASES_ENV) or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        exact = origin(entry)
        if exact is None or exact != entry.rstrip("/").lower():
            if strict:
                raise JudgeSetupError(
                    f"{TRUSTED_API_BASES_ENV} lists {entry!r}, which is not an origin: list "
                    "each trusted server as scheme://host[:port], without a path, separated "
                    "by commas"
                )
            continue
        found.add(exact)
    return found


def provider_key_may_go(
    model: str, provider: str, api_base: str | None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether the provider's key from the environment may be sent to `api_base`: no base,
    the provider's own endpoint, or a trusted origin."""
    if not api_base:
        return True
    target = origin(api_base)
    if target is None:
        return False
    return target in provider_origins(model, provider, environ) or target in trusted_origins(
        environ
    )


def is_provider_endpoint(
    model: str, provider: str, api_base: str, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether `api_base` is the provider's own endpoint (its default, or the one configured
    for it in the environment)."""
    target = origin(api_base)
    return target is not None and target in provider_origins(model, provider, environ)


def provider_origins(
    model: str, provider: str, environ: Mapping[str, str] | None = None
) -> set[str]:
    """The provider's own endpoints: its default one, and the one the environment configures
    for it (`<PROVIDER>_API_BASE`, `<PROVIDER>_BASE_URL`)."""
    environ = os.environ if environ is None else environ
    found = set(_default_origins(model, provider))
    prefix = provider.upper().replace("-", "_")
    for variable in (f"{prefix}_API_BASE", f"{prefix}_BASE_URL"):
        configured = origin(environ.get(variable) or "")
        if configured is not None:
            found.add(configured)
    return found


def _default_origins(model: str, provider: str) -> tuple[str, ...]:
    defaults = [origin(url) for url in _DEFAULT_ENDPOINTS.get(provider, ())]
    try:  # not cached: litellm reads some defaults from the environment (GROQ_API_BASE, ...)
        _model, routed, _key, base = _litellm.litellm().get_llm_provider(model)
    except Exception:  # an unroutable model has no default endpoint
        routed, base = None, None
    if routed == provider and base:
        defaults.append(origin(base))
    return tuple(sorted({d for d in defaults if d is not None}))
