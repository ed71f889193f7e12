"""Every credential the process holds, masked wherever text leaves a judge call: error messages,
the judge's raw answers, attempt errors, and (as a last line) exports, pages and logs.

A judge or a proxy may echo the key it was sent (an "invalid key sk-..." error body, an answer
quoting its headers), and the key it echoes need not be the one scorelab chose: litellm falls
back to the provider's variable. So the masking covers every secret the process could have sent
(docs/deploy.md, Judge keys):

- every environment variable whose name says it holds a credential (`OPENAI_API_KEY`,
  `ANTHROPIC_API_KEY`, `AZURE_OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `HF_TOKEN`,
  `PGPASSWORD`, `SCORELAB_JUDGE_API_KEY`, ...), when its value has at least
  `MIN_SECRET_LENGTH` characters (a shorter value would mangle ordinary words), but not a
  setting about credentials named so (`RAY_AUTH_MODE`, `TOKEN_TYPE`: their values are words);
- the password of any URL held in the environment (`SCORELAB_DATABASE_URL` with `user:pass@`);
- the keys typed for one experiment (`remember_secret`), kept in this process's memory so that
  their echoes are masked too; they are never written anywhere.

The environment is checked at each `secret_masker()` call, so a key set after start-up is
covered.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "SecretMasker",
    "is_secret_name",
    "mask_secrets",
    "remember_secret",
    "secret_masker",
]

MASK = "***"
"""What a masked secret becomes."""

MIN_SECRET_LENGTH = 8
"""Shorter values of credential variables are left alone: masking `true` or `1234` everywhere
would make messages unreadable, and no provider issues keys that short."""

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|BEARER|COOKIE|SIGNATURE",
    re.IGNORECASE,
)
_URL_IN_TEXT = re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)

_typed: set[str] = set()
_typed_lock = threading.Lock()

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


_SETTING_WORDS = frozenset(
    {
        "ALGORITHM", "DISABLED", "ENABLED", "EXPIRY", "HEADER", "ISSUER", "KIND", "LENGTH",
        "METHOD", "METHODS", "MODE", "PROVIDER", "REQUIRED", "SCHEME", "STYLE", "TIMEOUT",
        "TTL", "TYPE",
    }
)  # fmt: skip
"""Last words of a name that make it a setting about credentials (`RAY_AUTH_MODE=disabled`,
`TOKEN_TYPE=bearer`), not a credential: masking their values (ordinary words) would mangle
every text holding the word, an exported report's own script included."""


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (and is not a
    setting about one, by its last word: `_SETTING_WORDS`)."""
    if not _SECRET_NAME.search(name):
        return False
    return name.rsplit("_", 1)[-1].upper() not in _SETTING_WORDS


def remember_secret(secret: str | SecretStr | None) -> None:
    """Mask `secret` (a key typed for one experiment) from now on, for the life of the process;
    it is held in memory only."""
    global _last_masker
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _typed_lock:
            _typed.add(value)
            _last_masker = None  # the next secret_masker() reads everything again


@dataclass(frozen=True, slots=True)
class _Reading:
    """The masker built from one reading of os.environ, with the copy of its dict it read."""

    environment: dict[Any, Any]
    masker: SecretMasker


_last_masker: _Reading | None = None
"""The last `secret_masker()` of os.environ: reused while the environment is unchanged, since
it is asked for every judge step and reading the environment costs ~1% of a judge call."""


def secret_masker(environ: Mapping[str, str] | None = None) -> SecretMasker:
    """The masker of every secret the process holds now (`environ`: os.environ by default)."""
    global _last_masker
    data = getattr(os.environ, "_data", None) if environ is None else None
    if isinstance(data, dict):
        last = _last_masker
        # A dict comparison at C speed: any variable set, changed or removed misses.
        if last is not None and last.environment == data:
            return last.masker
        snapshot = dict(data)
    found = set(_environment_secrets(environ))
    with _typed_lock:
        found.update(_typed)
        masker = _masker_of(frozenset(found))
        if isinstance(data, dict):
            _last_masker = _Reading(snapshot, masker)
    return masker


@lru_cache(maxsize=32)
def _masker_of(secrets: frozenset[str]) -> SecretMasker:
    return SecretMasker(tuple(sorted(secrets, key=lambda s: (-len(s), s))))


def _environment_secrets(environ: Mapping[str, str] | None) -> Iterator[str]:
    """The values of credential variables, and the passwords of URLs, in the environment."""
    data = getattr(os.environ, "_data", None) if environ is None else None
    if not isinstance(data, dict):  # a mapping given, or not CPython's os.environ
        for name, value in (os.environ if environ is None else environ).items():
            if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
                yield value
            if "://" in value and "@" in value:
                yield from _url_passwords(value)
        return
    # Called for every judge step: read os.environ's own dict, decoding only what is needed
    # (a CPython detail; the mapping above is the fallback).
    decode = os.environ.decodevalue
    for raw_name, raw_value in data.items():
        if _is_secret_raw_name(raw_name):
            value = decode(raw_value)
            if len(value) >= MIN_SECRET_LENGTH:
                yield value
        if b"://" in raw_value and b"@" in raw_value:
            yield from _url_passwords(decode(raw_value))


@lru_cache(maxsize=4096)
def _is_secret_raw_name(raw_name: bytes | str) -> bool:
    name = raw_name.decode(errors="replace") if isinstance(raw_name, bytes) else raw_name
    return is_secret_name(name)


def mask_secrets(text: str) -> str:
    """`text` with every secret the process holds replaced by `MASK`."""
    return secret_masker().text(text)


@dataclass(frozen=True, slots=True)
class SecretMasker:
    """Replaces a fixed set of secrets (longest first, so a key containing another is masked
    whole) by `MASK`. Build one with `secret_masker()` and reuse it for a batch of text."""

    secrets: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        """`text` masked."""
        if not self.secrets or not text:
            return text
        # One plain search per secret: far faster than one alternation regex over an export
        # of tens of MB; longest first, so a key containing another is masked whole.
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def holds_secret(self, text: str) -> bool:
        """Whether `text` contains any of the secrets."""
        return any(secret in text for secret in self.secrets)

    def written(self) -> SecretMasker:
        """This masker, also matching each secret as JSON, HTML (markup and `<script>` data)
        and CSV write it: a secret holding a quote, a backslash, `<`, `>` or `&` is written
        escaped, and an export masks its finished text."""
        variants = set(self.secrets)
        for secret in self.secrets:
            for form in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
                variants.add(form)
                variants.add(_script_escaped(form))
            for form in (html.escape(secret), html.escape(secret, quote=False)):
                variants.add(form)
                variants.add(_script_escaped(form))  # an entity-escaped chart label
            variants.add(secret.replace('"', '""'))
        return _masker_of(frozenset(variants))

    def value(self, value: T) -> T:
        """`value` with every string in it masked (dicts, lists and tuples walked; dict keys
        too); other values as they are."""
        if not self.secrets:
            return value
        masked: T = self._walk(value)  # _walk keeps the shape: a T comes back
        return masked

    def record(self, record: R) -> R:
        """A pydantic record with every string in it masked: the same object when it holds no
        secret (the common case costs one serialisation), else a copy validated again."""
        if not self.secrets or not self.holds_secret(record.model_dump_json()):
            return record
        data = self._walk(record.model_dump())  # python mode: NaN, dates and types kept
        return type(record).model_validate(data)

    def exception(self, error: BaseException) -> BaseException:
        """Mask `error` and its causes in place (their args and litellm's `message`
        attribute), so that no record, log line or traceback made from it later holds a
        secret; returns `error`."""
        if not self.secrets:
            return error
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            current.args = tuple(self._walk(argument) for argument in current.args)
            for attribute in ("message", "body"):
                held = vars(current).get(attribute) if hasattr(current, "__dict__") else None
                if isinstance(held, str | dict | list):
                    # A read-only property raises: the args carried its text.
                    with contextlib.suppress(AttributeError):
                        setattr(current, attribute, self._walk(held))
            current = current.__cause__ or current.__context__
        return error

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._walk(key): self._walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self._walk(item) for item in value)
        return value


def _script_escaped(text: str) -> str:
    """`text` as JSON inside a `<script>` element writes it (core.exchange.html.script_json)."""
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return text


def _url_passwords(value: str) -> Iterable[str]:
    """The passwords of the URLs in an environment value (`scheme://user:password@host`)."""
    if "://" not in value or "@" not in value:
        return ()
    found = []
    for url in _URL_IN_TEXT.findall(value):
        try:
            password = urlsplit(url).password
        except ValueError:
            continue
        if password and len(password) >= MIN_SECRET_LENGTH:
            found.append(password)
    return found
