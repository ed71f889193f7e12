"""The door of the dashboard: app.py calls `gate()` before it draws the menu or a page.

How it decides (the rules themselves are in core/dashboard_access.py, shared with
`scorelab serve` and handed to the pages by core/service/views.py; the set-up is in
docs/deploy.md):

1. Listening on an address other hosts reach (not loopback) without a ready login: the page
   says what to configure, the server log says it too, and nothing else is drawn.
2. No `[auth]` section in the secrets (on loopback): no login, every page is open.
3. An `[auth]` section with something missing or wrong: the problems, nothing else.
4. Not logged in: a login button, nothing else (no sidebar, no page).
5. Logged in with an e-mail address not on the allow-list (or one the provider says it has
   not verified): a refusal and a logout button, nothing else.
6. Allowed: the caller draws the pages; the sidebar holds who is signed in and a logout button.

"Nothing else" includes the menu: what the gate draws is the one hidden page of a navigation of
its own, which replaces any menu the browser holds (the first run of a fresh server may have sent
the `pages/` folder's, see pages/ui/__init__.py). That navigation also answers the app's own
page paths, so a deep link opens on the login rather than on "page not found".
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

import streamlit as st
from streamlit.logger import get_logger

from core.service.views import (
    DOCS,
    AllowList,
    is_loopback,
    login_problems,
    login_wanted,
    unprotected_address_message,
)
from pages.ui.text import md_text

__all__ = ["gate"]

_LOG = get_logger("scorelab.auth")  # in the server's log, as Streamlit's own lines


def gate(url_paths: Iterable[str] = ()) -> None:
    """Return only when the visitor may see the pages; otherwise draw why not and stop the run.
    `url_paths`: the app's page paths (`st.Page.url_path`), answered by the gate's own page."""
    paths = [path for path in url_paths if path]
    secrets = _secrets()
    address = st.get_option("server.address")
    problems = login_problems(secrets, os.environ)
    if problems and not is_loopback(address):  # without [auth], that is a problem too
        _stop(paths, unprotected_address_message(address, problems))
    if not login_wanted(secrets):
        return
    if problems:
        _stop(paths, f"The login is not set up completely: {'; '.join(problems)}. See {DOCS}.")
    user = st.user
    if not user.get("is_logged_in"):
        _only(paths, _login_screen)
    email = user.get("email")
    if not AllowList.from_settings(secrets, os.environ).allows(
        email, email_verified=user.get("email_verified")
    ):
        _only(paths, functools.partial(_refusal, email))
    with st.sidebar:
        st.caption(f"Signed in as {md_text(email)}")
        _logout_button()


def _secrets() -> Mapping[str, Any]:
    """The secrets Streamlit loaded (secrets.toml); empty when there is none."""
    if not st.secrets.load_if_toml_exists():
        return {}
    return st.secrets.to_dict()


def _only(paths: list[str], draw: Callable[[], None]) -> NoReturn:
    """Draw `draw` as the app's only page, under every page path, with no menu; stop."""
    pages = [st.Page(draw, title="scorelab", url_path="scorelab", default=True)]
    pages += [st.Page(draw, title="scorelab", url_path=path) for path in paths]
    st.navigation(pages, position="hidden").run()
    st.stop()


def _stop(paths: list[str], message: str) -> NoReturn:
    _log_once(logging.ERROR, message)
    _only(paths, functools.partial(st.error, md_text(message), icon=":material/lock:"))


def _login_screen() -> None:
    st.title("scorelab")
    st.write("This dashboard is private. Log in with your organisation's account to open it.")
    if st.button("Log in", type="primary", icon=":material/login:", key="scorelab_login"):
        st.login()


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


def _logout_button() -> None:
    # A callback, so the run that follows the click already sees the visitor logged out.
    st.button("Log out", icon=":material/logout:", key="scorelab_logout", on_click=st.logout)


@functools.cache
def _log_once(level: int, message: str) -> None:
    """Each reason once per server process, not once per rerun."""
    _LOG.log(level, message)
