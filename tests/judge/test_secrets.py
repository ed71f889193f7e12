"""The masking of every secret the process holds: which variables count, how short a value is
left alone, URL passwords, typed keys, and errors, values and records masked."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from core.judge.secrets import (
    MASK,
    MIN_SECRET_LENGTH,
    is_secret_name,
    mask_secrets,
    remember_secret,
    secret_masker,
)
from core.records import ScorerOutcome

OPENAI = "sk-canary-openai-0123456789"
ANTHROPIC = "sk-ant-canary-abcdefghij"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "HF_TOKEN",
        "PGPASSWORD",
        "SCORELAB_JUDGE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "my_service_secret",
    ],
)
def test_credential_names_are_recognised(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",
        "OPENAI_API_BASE",
        "LANG",
        "RAY_AUTH_MODE",
        "TOKEN_TYPE",
        "oauth_provider",
        "AUTH_METHOD",
        "API_KEY_REQUIRED",
    ],
)
def test_ordinary_names_are_not(name: str) -> None:
    assert not is_secret_name(name)


def test_a_setting_about_credentials_keeps_its_word_in_every_text() -> None:
    # RAY_AUTH_MODE=disabled once masked "disabled" in every export, a report's script too.
    masker = secret_masker({"RAY_AUTH_MODE": "disabled", "MY_TOKEN_TYPE": "bearer-token"})
    assert not {"disabled", "bearer-token"} & set(masker.secrets)  # (keys typed earlier stay)
    text = 'button.disabled = true; "bearer-token"'
    assert masker.text(text) == text
    kept = secret_masker({"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "tok-1234567890"})
    assert kept.text("disabled tok-1234567890") == f"disabled {MASK}"


def test_every_credential_variable_is_masked_and_nothing_else() -> None:
    environ = {
        "OPENAI_API_KEY": OPENAI,
        "ANTHROPIC_API_KEY": ANTHROPIC,
        "HOME": "/home/someone-long-enough",
        "SHORT_TOKEN": "x" * (MIN_SECRET_LENGTH - 1),
    }
    masker = secret_masker(environ)
    text = f"keys {OPENAI} and {ANTHROPIC} at /home/someone-long-enough, {'x' * 7}"
    assert masker.text(text) == f"keys {MASK} and {MASK} at /home/someone-long-enough, xxxxxxx"


def test_a_key_containing_another_is_masked_whole() -> None:
    masker = secret_masker({"A_KEY": "abcdefgh", "B_KEY": "abcdefgh-and-more"})
    assert masker.text("abcdefgh-and-more abcdefgh") == f"{MASK} {MASK}"


def test_the_password_of_a_url_in_the_environment_is_masked() -> None:
    masker = secret_masker({"SCORELAB_DATABASE_URL": "postgresql://lab:hunter2hunter2@db/lab"})
    assert masker.text("could not log in with hunter2hunter2") == f"could not log in with {MASK}"


def test_a_typed_key_is_masked_from_then_on() -> None:
    typed = "typed-key-for-one-run-42"
    assert mask_secrets(f"echo {typed}") == f"echo {typed}"
    remember_secret(SecretStr(typed))
    assert mask_secrets(f"echo {typed}") == f"echo {MASK}"


def test_values_errors_and_records_are_masked() -> None:
    masker = secret_masker({"OPENAI_API_KEY": OPENAI})
    assert masker.value({"a": [OPENAI, (1, f"x{OPENAI}")], OPENAI: None}) == {
        "a": [MASK, (1, f"x{MASK}")],
        MASK: None,
    }

    class ProviderError(Exception):
        def __init__(self, message: str) -> None:
            super().__init__(message)
            self.message = message

    try:
        try:
            raise ValueError(f"inner {OPENAI}")
        except ValueError as inner:
            raise ProviderError(f"outer {OPENAI}") from inner
    except ProviderError as error:
        masker.exception(error)
        assert str(error) == f"outer {MASK}" and error.message == f"outer {MASK}"
        assert error.__cause__ is not None and str(error.__cause__) == f"inner {MASK}"

    outcome = ScorerOutcome(item_id="1", scorer_id="s", status="failed", error=f"bad {OPENAI}")
    masked = masker.record(outcome)
    assert masked.error == f"bad {MASK}" and OPENAI not in masked.model_dump_json()
    clean = ScorerOutcome(item_id="1", scorer_id="s", status="success", score=1.0)
    assert masker.record(clean) is clean  # nothing to mask: the same record


def test_text_without_secrets_is_left_as_it_is() -> None:
    masker = secret_masker({"PATH": "/usr/bin", "OPENAI_API_KEY": OPENAI})
    assert "/usr/bin" not in masker.secrets
    assert masker.text("anything at all, /usr/bin") == "anything at all, /usr/bin"


def test_a_variable_set_changed_or_removed_after_a_masker_is_seen_by_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # secret_masker() reuses its last reading of os.environ while it is unchanged.
    first, second = "sk-canary-set-later-0123", "sk-canary-changed-4567"
    monkeypatch.delenv("SCORELAB_CANARY_API_KEY", raising=False)
    assert mask_secrets(first) == first
    monkeypatch.setenv("SCORELAB_CANARY_API_KEY", first)
    assert mask_secrets(first) == MASK
    monkeypatch.setenv("SCORELAB_CANARY_API_KEY", second)
    assert mask_secrets(f"{first} {second}") == f"{first} {MASK}"
    monkeypatch.delenv("SCORELAB_CANARY_API_KEY")
    assert mask_secrets(second) == second
    assert secret_masker() is secret_masker()  # unchanged environment: the same masker
