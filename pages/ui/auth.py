"""The door of the dashboard: app.py calls `gate()` before it draws the navigation or any page.

How it decides (the rules themselves are in core/dashboard_access.py, shared with
`scorelab serve`; the set-up is in docs/deploy.md):

1. Listening on an address other hosts reach (not loopback) without a ready login: the page
   says what to configure, the server log says it too, and nothing else is drawn.
2. No `[auth]` section in the secrets (on loopback): no login, every page is open.
3. An `[auth]` section with something missing or wrong: the problems, nothing else.
4. Not logged in: a login button, nothing else (no sidebar, no page).
5. Logged in with an e-mail address not on the allow-list (or one the provider says it has
   not verified): a refusal and a logout button, nothing else.
6. Allowed: the caller draws the pages; the sidebar holds who is signed in and a logout button.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

from core.dashboard_access import (
    DOCS,
    AllowList,
    is_loopback,
    login_problems,
    login_wanted,
    unprotected_address_message,
)
from pages.ui.fmt import md_text

__all__ = ["gate"]

_LOG = logging.getLogger("scorelab.auth")


def gate() -> None:
    """Return only when the visitor may see the pages; otherwise draw why not and stop the run."""
    secrets = _secrets()
    address = st.get_option("server.address")
    problems = login_problems(secrets, os.environ)
    if problems and not is_loopback(address):  # without [auth], that is a problem too
        _stop(unprotected_address_message(address, problems))
    if not login_wanted(secrets):
        return
    if problems:
        _stop(f"The login is not set up completely: {'; '.join(problems)}. See {DOCS}.")
    user = st.user
    if not user.get("is_logged_in"):
        _login_screen()
    email = user.get("email")
    if not AllowList.from_settings(secrets, os.environ).allows(
        email, email_verified=user.get("email_verified")
    ):
        _refusal(email)
    with st.sidebar:
        st.caption(f"Signed in as {md_text(email)}")
        _logout_button()


def _secrets() -> Mapping[str, Any]:
    """The secrets Streamlit loaded (secrets.toml); empty when there is none."""
    if not st.secrets.load_if_toml_exists():
        return {}
    return st.secrets.to_dict()


def _stop(message: str) -> None:
    _log_once(logging.ERROR, message)
    st.error(md_text(message), icon=":material/lock:")
    st.stop()


def _login_screen() -> None:
    st.title("scorelab")
    st.write("This dashboard is private. Log in with your organisation's account to open it.")
    if st.button("Log in", type="primary", icon=":material/login:", key="scorelab_login"):
        st.login()
    st.stop()


def _refusal(email: object) -> None:
    who = email if isinstance(email, str) and email else "an account without an e-mail address"
    _log_once(logging.WARNING, f"refused {who}: not on the allow-list")
    st.title("scorelab")
    st.error(
        f"You are signed in as {md_text(who)}, which may not open this dashboard. Log out and "
        "sign in with another account, or ask the dashboard's administrator to add you.",
        icon=":material/block:",
    )
    _logout_button()
    st.stop()


def _logout_button() -> None:
    # A callback, so the run that follows the click already sees the visitor logged out.
    st.button("Log out", icon=":material/logout:", key="scorelab_logout", on_click=st.logout)


@functools.cache
def _log_once(level: int, message: str) -> None:
    """Each reason once per server process, not once per rerun."""
    _LOG.log(level, message)
