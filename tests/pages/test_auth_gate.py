"""The login gate (pages/ui/auth.py) in AppTest: what each kind of visitor is shown, on each
kind of address. `st.user` is AppTest's fake user; the address is Streamlit's own option."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from core.dashboard_access import DOMAINS_ENV, EMAILS_ENV

COOKIE_SECRET = "c" * 40
LOGIN = {
    "auth": {
        "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
        "cookie_secret": COOKIE_SECRET,
        "client_id": "scorelab",
        "client_secret": "client-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
    },
    "scorelab": {"allowed_emails": ["Ada@Example.org"], "allowed_domains": ["team.example"]},
}


def gated_app() -> None:
    import streamlit as st

    from pages.ui import auth

    auth.gate(["datasets", "scorers", ""])
    st.sidebar.write("NAVIGATION")
    st.write("THE PAGES")


@pytest.fixture
def address(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set `server.address` as a server started with `--server.address` would have it."""
    before = config.get_option("server.address")
    monkeypatch.delenv(EMAILS_ENV, raising=False)
    monkeypatch.delenv(DOMAINS_ENV, raising=False)

    def set_address(value: str | None) -> None:
        config.set_option("server.address", value)

    yield set_address
    config.set_option("server.address", before)


def run(secrets: dict[str, Any] | None = None, user: dict[str, Any] | None = None) -> AppTest:
    test = AppTest.from_function(gated_app, default_timeout=30)
    if secrets is not None:
        test.secrets = secrets
    if user is not None:
        test.user = user
    test.run()
    assert not test.exception, test.exception
    return test


def texts(test: AppTest) -> str:
    parts = [*(m.value for m in test.markdown), *(e.value for e in test.error)]
    parts += [t.value for t in test.title] + [c.value for c in test.caption]
    return "\n".join(str(part) for part in parts)


def sees_pages(test: AppTest) -> bool:
    return "THE PAGES" in texts(test) and "NAVIGATION" in texts(test)


def buttons(test: AppTest) -> list[str]:
    return [button.label for button in test.button]


def test_on_loopback_without_a_login_every_page_is_open(address: Any) -> None:
    address("127.0.0.1")
    test = run()
    assert sees_pages(test)
    assert buttons(test) == []


@pytest.mark.parametrize("listening", ["0.0.0.0", "::", "192.168.1.20", "scorelab.example", None])
def test_off_loopback_without_a_login_only_the_refusal_is_served(
    address: Any, listening: str | None
) -> None:
    address(listening)
    test = run()
    assert not sees_pages(test)
    assert "NAVIGATION" not in texts(test)
    [error] = test.error
    assert "without a login" in error.value
    assert "docs/deploy" in error.value
    assert buttons(test) == []


def test_off_loopback_an_incomplete_login_is_refused_with_what_is_missing(address: Any) -> None:
    address("0.0.0.0")
    secrets = {"auth": {**LOGIN["auth"], "client_secret": ""}, "scorelab": LOGIN["scorelab"]}
    test = run(secrets, {"is_logged_in": True, "email": "ada@example.org"})
    assert not sees_pages(test)
    assert "client\\_secret is missing" in test.error[0].value


@pytest.mark.parametrize("listening", ["0.0.0.0", "127.0.0.1"])
def test_a_visitor_not_logged_in_sees_only_the_login_button(address: Any, listening: str) -> None:
    address(listening)
    test = run(LOGIN, {"is_logged_in": False})
    assert not sees_pages(test)
    assert "NAVIGATION" not in texts(test)
    assert buttons(test) == ["Log in"]
    assert len(test.sidebar) == 0


@pytest.mark.parametrize(
    "user",
    [
        {"is_logged_in": True, "email": "mallory@example.org"},
        {"is_logged_in": True, "email": "eve@sub.team.example"},  # domains are exact
        {"is_logged_in": True, "email": "ada@example.org", "email_verified": False},
        {"is_logged_in": True},  # no e-mail claim at all
    ],
)
def test_a_user_not_on_the_allow_list_sees_a_refusal_and_a_logout_button(
    address: Any, user: dict[str, Any]
) -> None:
    address("0.0.0.0")
    test = run(LOGIN, user)
    assert not sees_pages(test)
    assert "NAVIGATION" not in texts(test)
    assert "may not open this dashboard" in test.error[0].value
    assert buttons(test) == ["Log out"]


@pytest.mark.parametrize("email", ["ada@example.org", "ADA@example.org ", "bob@team.example"])
def test_an_allowed_user_sees_the_pages_and_a_logout_button_in_the_sidebar(
    address: Any, email: str
) -> None:
    address("0.0.0.0")
    test = run(LOGIN, {"is_logged_in": True, "email": email, "email_verified": True})
    assert sees_pages(test)
    assert [b.label for b in test.sidebar.button] == ["Log out"]
    assert "Signed in as" in test.sidebar.caption[0].value


def test_the_allow_list_can_come_from_the_environment(
    address: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    address("0.0.0.0")
    monkeypatch.setenv(EMAILS_ENV, "grace@navy.example, ada@example.org")
    secrets = {"auth": LOGIN["auth"]}  # no [scorelab] section
    allowed = run(secrets, {"is_logged_in": True, "email": "grace@navy.example"})
    assert sees_pages(allowed)
    refused = run(secrets, {"is_logged_in": True, "email": "bob@team.example"})
    assert not sees_pages(refused)


def test_logging_out_leads_back_to_the_login_button(address: Any) -> None:
    address("127.0.0.1")
    test = run(LOGIN, {"is_logged_in": True, "email": "ada@example.org"})
    assert sees_pages(test)
    test.sidebar.button[0].click().run()
    assert not sees_pages(test)
    assert buttons(test) == ["Log in"]


def test_a_refusal_is_written_to_the_server_log(address: Any) -> None:
    import logging

    from pages.ui import auth

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("scorelab.auth")
    logger.addHandler(handler)
    auth._log_once.cache_clear()
    try:
        address("0.0.0.0")
        run()
        run(LOGIN, {"is_logged_in": True, "email": "mallory@example.org"})
    finally:
        logger.removeHandler(handler)
    messages = [(record.levelname, record.getMessage()) for record in records]
    assert messages[0][0] == "ERROR" and "will not serve on 0.0.0.0" in messages[0][1]
    assert messages[1] == ("WARNING", "refused mallory@example.org: not on the allow-list")
