"""The login, end to end: the dashboard on 0.0.0.0 behind Streamlit's OpenID Connect login,
against a local provider (oidc-provider-mock on 127.0.0.1), in Chromium. And the refusals: no
server on an open address without the login, from `scorelab serve` or a plain `streamlit run`.

The provider's own pages: an authorization form where the visitor types the subject to log in as
(its e-mail claim is the subject unless set with PUT /users/{subject}), and an "End session"
confirmation on logout.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import threading
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._streamlit import TIMEOUT, open_page, settle
from .conftest import ROOT, _free_port, serve_dashboard

# The provider's own use of Authlib's older API: not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")

ALLOWED = "ada@example.org"
UNKNOWN = "mallory@elsewhere.example"
NAV_LINK = '[data-testid="stSidebarNavLink"]'


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A local OpenID Connect provider on 127.0.0.1, one user set with e-mail claims."""
    # The provider imports Authlib's deprecated JOSE module; Authlib's own import puts an
    # "always" filter for its warnings first, so it must come before the filter that hides them.
    from authlib.deprecate import AuthlibDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AuthlibDeprecationWarning)
        from oidc_provider_mock import app
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        claims = {"email": ALLOWED, "email_verified": True, "name": "Ada Lovelace"}
        request = urllib.request.Request(
            f"{url}/users/{ALLOWED}",
            data=json.dumps(claims).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 204
        yield url
    finally:
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def dashboard(provider: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard on every interface, its login pointed at the provider, Ada allowed."""
    folder = tmp_path_factory.mktemp("login")
    secrets_file = folder / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        # Streamlit puts its own port in place of {port}.
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "scorelab-test"\n'
        'client_secret = "scorelab-test-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n'
        "[scorelab]\n"
        f'allowed_emails = ["{ALLOWED}"]\n'
    )
    with serve_dashboard(folder, address="0.0.0.0", secrets=secrets_file) as url:
        yield url


def shown_as_text(sentence: str) -> re.Pattern[str]:
    """`sentence` as the page shows an e-mail address in it: as text, with an invisible word
    joiner before the `@` (pages/ui/text.py `md_text`: no mailto link comes out of it)."""
    return re.compile(re.escape(sentence).replace("@", "\u2060?@"))


def log_in_as(page: Any, url: str, subject: str) -> None:
    open_page(page, url)
    page.get_by_role("button", name="Log in").click()
    page.locator('input[name="sub"]').fill(subject)
    page.get_by_role("button", name="Authorize", exact=True).click()
    page.wait_for_url(f"{url}/**", timeout=TIMEOUT)


def log_out(page: Any, url: str) -> None:
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("button", name="End session").click()  # the provider's confirmation
    page.wait_for_url(f"{url}/**", timeout=TIMEOUT)
    shows_only_the_login(page)


def shows_only_the_login(page: Any) -> None:
    page.get_by_role("button", name="Log in").wait_for(timeout=TIMEOUT)
    settle(page)
    assert page.locator(NAV_LINK).count() == 0
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    assert page.get_by_role("heading", name="Experiments").count() == 0


def test_a_visitor_sees_only_the_login_even_at_a_deep_link(page: Any, dashboard: str) -> None:
    open_page(page, f"{dashboard}/datasets")
    shows_only_the_login(page)
    assert page.get_by_text("Upload", exact=False).count() == 0


def test_an_allowed_user_sees_the_pages_and_logs_out(page: Any, dashboard: str) -> None:
    log_in_as(page, dashboard, ALLOWED)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("button", name="Log out").wait_for(timeout=TIMEOUT)
    sidebar.get_by_text(shown_as_text(f"Signed in as {ALLOWED}")).wait_for()
    page.get_by_role("heading", name="Experiments").first.wait_for(timeout=TIMEOUT)
    titles = {text.split("\n")[-1] for text in sidebar.locator(NAV_LINK).all_inner_texts()}
    assert {"Experiments", "Datasets", "Scorers"} <= titles

    log_out(page, dashboard)
    page.reload()  # the identity cookie is gone: a new session is not logged in either
    shows_only_the_login(page)


def test_a_user_not_on_the_allow_list_sees_only_the_refusal(page: Any, dashboard: str) -> None:
    log_in_as(page, dashboard, UNKNOWN)
    page.get_by_text("may not open this dashboard").wait_for(timeout=TIMEOUT)
    settle(page)
    assert page.get_by_text(shown_as_text(f"signed in as {UNKNOWN}")).count() == 1
    assert page.locator(NAV_LINK).count() == 0
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    # Logged in, but a deep link does not get past the gate.
    open_page(page, f"{dashboard}/scorers")
    page.get_by_text("may not open this dashboard").wait_for(timeout=TIMEOUT)
    settle(page)
    assert page.locator(NAV_LINK).count() == 0
    assert page.get_by_role("heading", name="Scorers").count() == 0

    log_out(page, dashboard)


def test_streamlit_run_on_an_open_address_without_the_login_serves_only_the_refusal(
    page: Any, tmp_path: Path
) -> None:
    with serve_dashboard(tmp_path, address="0.0.0.0") as url:
        open_page(page, f"{url}/datasets")
        page.get_by_text("will not serve on 0.0.0.0 without a login").wait_for(timeout=TIMEOUT)
        settle(page)
        assert page.locator(NAV_LINK).count() == 0
        assert page.get_by_role("button").filter(has_text="Log in").count() == 0
    log = (tmp_path / "streamlit.log").read_text()
    assert "will not serve on 0.0.0.0 without a login" in log


def test_scorelab_serve_refuses_to_start_on_an_open_address_without_the_login(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "HOME": str(home),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    environment.pop("STREAMLIT_SERVER_ADDRESS", None)
    port = _free_port()
    command = [str(Path(sys.executable).with_name("scorelab")), "serve"]
    command += ["--server.address", "0.0.0.0", "--server.port", str(port)]
    command += ["--secrets.files", str(tmp_path / "none.toml")]  # none of a developer's own
    completed = subprocess.run(
        command,
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 2
    assert "will not serve on 0.0.0.0 without a login" in completed.stderr
    assert "[auth]" in completed.stderr and "docs/deploy.md" in completed.stderr
    with pytest.raises(OSError):  # nothing is listening
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
