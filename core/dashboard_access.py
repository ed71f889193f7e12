"""Who may reach the dashboard: the address it listens on, its login settings, the allow-list.

The dashboard holds the server's judge credentials (a visitor can point a judge call at an API
base of their own), so it is private by default: it listens on the loopback address only, and
any other address needs Streamlit's OpenID Connect login (`st.login`) with an allow-list of
e-mail addresses or domains. Both `scorelab serve` and app.py ask this module, so the two
refuse the same settings with the same words. See docs/deploy.md.

Pure Python (no Streamlit): the settings come in as plain mappings, the contents of Streamlit's
`secrets.toml` and the environment.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "AUTH_KEYS",
    "DOCS",
    "MIN_COOKIE_SECRET_LENGTH",
    "AllowList",
    "SecretsError",
    "is_loopback",
    "login_problems",
    "login_wanted",
    "read_secrets",
    "unprotected_address_message",
]

DOCS = "docs/deploy.md"
"""Where the set-up is explained, named in every refusal."""

AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
"""The `[auth]` settings `st.login()` needs for its default provider."""

MIN_COOKIE_SECRET_LENGTH = 32
"""Characters of `[auth] cookie_secret`: it signs the identity cookie, so a short one could be
guessed (`python -c "import secrets; print(secrets.token_hex(32))"` makes a good one)."""

EMAILS_ENV = "SCORELAB_ALLOWED_EMAILS"
DOMAINS_ENV = "SCORELAB_ALLOWED_DOMAINS"


class SecretsError(ValueError):
    """A secrets file that cannot be read as TOML."""


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to `address` is reachable from this machine only.

    Unset (None or empty) means every interface to Streamlit, so it is not loopback. A Unix
    socket (`unix://...`) is reached through the file system only, so it counts as local.
    A host name other than `localhost` could resolve to anything: not loopback."""
    if not address:
        return False
    text = address.strip()
    if text.startswith("unix://"):
        return True
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class AllowList:
    """The e-mail addresses and domains whose users may open the dashboard after logging in."""

    emails: frozenset[str]
    """Whole addresses, lower case."""
    domains: frozenset[str]
    """Domains (the part after the `@`), lower case; exact: `example.com` does not admit
    `mail.example.com`."""

    @classmethod
    def from_settings(cls, secrets: Mapping[str, Any], environ: Mapping[str, str]) -> AllowList:
        """`[scorelab] allowed_emails` / `allowed_domains` in secrets.toml, plus the
        comma-separated SCORELAB_ALLOWED_EMAILS / SCORELAB_ALLOWED_DOMAINS variables."""
        section = secrets.get("scorelab") or {}
        if not isinstance(section, Mapping):
            raise SecretsError(f"[scorelab] must be a table of settings, got {section!r}")
        emails = [*_entries(section.get("allowed_emails")), *_split(environ.get(EMAILS_ENV))]
        domains = [*_entries(section.get("allowed_domains")), *_split(environ.get(DOMAINS_ENV))]
        return cls(
            emails=frozenset(_normal(email) for email in emails),
            domains=frozenset(_normal(domain).lstrip("@") for domain in domains),
        )

    def __bool__(self) -> bool:
        return bool(self.emails or self.domains)

    def allows(self, email: object, *, email_verified: object = None) -> bool:
        """Whether a user with this e-mail claim may in. A provider that says the address is
        not verified (`email_verified` false) is not believed."""
        if not isinstance(email, str) or email_verified is False:
            return False
        address = _normal(email)
        local, at, domain = address.rpartition("@")
        if not at or not local or not domain:
            return False
        return address in self.emails or domain in self.domains


def login_wanted(secrets: Mapping[str, Any]) -> bool:
    """Whether the secrets ask for a login (they have an `[auth]` section): then every page is
    behind it, whatever the address."""
    return "auth" in secrets


def login_problems(secrets: Mapping[str, Any], environ: Mapping[str, str]) -> list[str]:
    """What is missing or wrong in the login settings; empty when the login is ready."""
    auth = secrets.get("auth")
    if not isinstance(auth, Mapping):
        return [
            "no [auth] section in .streamlit/secrets.toml (redirect_uri, cookie_secret, "
            "client_id, client_secret, server_metadata_url of your OpenID Connect provider)"
        ]
    problems = [
        f"[auth] {key} is missing"
        for key in AUTH_KEYS
        if not isinstance(auth.get(key), str) or not auth[key].strip()
    ]
    redirect_uri = auth.get("redirect_uri")
    if (
        isinstance(redirect_uri, str)
        and redirect_uri
        and not redirect_uri.endswith("/oauth2callback")
    ):
        problems.append(
            f"[auth] redirect_uri must end with /oauth2callback (it is {redirect_uri!r})"
        )
    secret = auth.get("cookie_secret")
    if isinstance(secret, str) and 0 < len(secret.strip()) < MIN_COOKIE_SECRET_LENGTH:
        problems.append(
            f"[auth] cookie_secret is shorter than {MIN_COOKIE_SECRET_LENGTH} characters"
        )
    try:
        allow_list = AllowList.from_settings(secrets, environ)
    except SecretsError as error:
        return [*problems, str(error)]
    if not allow_list:
        problems.append(
            "no one is allowed in: list e-mail addresses or domains in [scorelab] "
            f"allowed_emails / allowed_domains (or {EMAILS_ENV} / {DOMAINS_ENV})"
        )
    return problems


def unprotected_address_message(address: str | None, problems: Iterable[str]) -> str:
    """Why the dashboard will not serve on `address`, and what to configure."""
    shown = address or "every interface (server.address is unset)"
    return (
        f"scorelab will not serve on {shown} without a login: anyone who reaches the port "
        "could run judge calls with this server's API keys. Listen on 127.0.0.1 "
        "(the default) or configure the login: " + "; ".join(problems) + f". See {DOCS}."
    )


def read_secrets(paths: Iterable[Path]) -> dict[str, Any]:
    """The secrets as Streamlit merges them: each existing TOML file in turn, a later file's
    top-level keys replacing an earlier one's. Missing files are skipped."""
    merged: dict[str, Any] = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            merged.update(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise SecretsError(f"{path}: cannot read it as TOML ({error})") from None
    return merged


def _entries(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _split(value)
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    raise SecretsError(f"[scorelab] allow-lists must be lists of strings, got {value!r}")


def _split(text: str | None) -> list[str]:
    return [part for part in (text or "").split(",") if part.strip()]


def _normal(text: str) -> str:
    return text.strip().lower()
