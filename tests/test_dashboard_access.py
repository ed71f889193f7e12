"""Who may reach the dashboard: the address rules, the login settings and the allow-list
(core/dashboard_access.py), `scorelab serve` passing streamlit's flags through and refusing an
open address, and the Streamlit settings in .streamlit/config.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import core.cli
import core.cli.serve
from core.dashboard_access import (
    DOMAINS_ENV,
    EMAILS_ENV,
    AllowList,
    SecretsError,
    is_loopback,
    login_problems,
    read_secrets,
)
from core.datasets.upload import DEFAULT_SIZE_LIMIT_BYTES

ROOT = Path(__file__).resolve().parents[1]

AUTH = {
    "redirect_uri": "https://scorelab.example/oauth2callback",
    "cookie_secret": "s" * 64,
    "client_id": "scorelab",
    "client_secret": "client-secret",
    "server_metadata_url": "https://id.example/.well-known/openid-configuration",
}
LOGIN_TOML = """
[auth]
redirect_uri = "https://scorelab.example/oauth2callback"
cookie_secret = "{secret}"
client_id = "scorelab"
client_secret = "client-secret"
server_metadata_url = "https://id.example/.well-known/openid-configuration"

[scorelab]
allowed_domains = ["example.org"]
""".format(secret="s" * 64)


# ---- the rules ----


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LocalHost", "unix:///x"]
)
def test_loopback_addresses(address: str) -> None:
    assert is_loopback(address)


@pytest.mark.parametrize(
    "address", [None, "", "0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "scorelab.example", "x"]
)
def test_addresses_other_hosts_reach(address: str | None) -> None:
    assert not is_loopback(address)


def test_the_allow_list_matches_whole_addresses_and_exact_domains() -> None:
    allow = AllowList.from_settings(
        {"scorelab": {"allowed_emails": [" Ada@Example.org "], "allowed_domains": ["@team.ex"]}},
        {},
    )
    assert allow.allows("ada@example.org")
    assert allow.allows("ADA@EXAMPLE.ORG")
    assert allow.allows("bob@team.ex")
    assert not allow.allows("bob@example.org")
    assert not allow.allows("bob@sub.team.ex")
    assert not allow.allows("team.ex")
    assert not allow.allows("@team.ex")
    assert not allow.allows(None)
    assert not allow.allows("ada@example.org", email_verified=False)
    assert allow.allows("ada@example.org", email_verified=True)


def test_the_allow_list_from_the_environment_adds_to_the_secrets() -> None:
    allow = AllowList.from_settings(
        {"scorelab": {"allowed_emails": ["ada@example.org"]}},
        {EMAILS_ENV: "grace@navy.example,, ", DOMAINS_ENV: "team.ex, other.ex"},
    )
    assert allow.emails == {"ada@example.org", "grace@navy.example"}
    assert allow.domains == {"team.ex", "other.ex"}


def test_a_ready_login_has_no_problems() -> None:
    assert login_problems({"auth": AUTH, "scorelab": {"allowed_domains": ["x.org"]}}, {}) == []
    assert login_problems({"auth": AUTH}, {DOMAINS_ENV: "x.org"}) == []


def test_each_missing_or_weak_login_setting_is_named() -> None:
    assert "no [auth] section" in login_problems({}, {})[0]
    problems = login_problems(
        {"auth": {**AUTH, "client_id": "", "cookie_secret": "short", "redirect_uri": "https://x/"}},
        {},
    )
    assert "[auth] client_id is missing" in problems
    assert any("cookie_secret is shorter than 32" in p for p in problems)
    assert any("must end with /oauth2callback" in p for p in problems)
    assert any("no one is allowed in" in p for p in problems)
    wrong_type = login_problems({"auth": AUTH, "scorelab": {"allowed_emails": "a@b.c"}}, {})
    assert wrong_type == []  # one string is read as a comma-separated list
    assert (
        "lists of strings"
        in login_problems({"auth": AUTH, "scorelab": {"allowed_emails": [1]}}, {})[-1]
    )


def test_secrets_files_merge_as_streamlit_merges_them(tmp_path: Path) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text('[auth]\nclient_id = "old"\n[scorelab]\nallowed_emails = ["a@b.c"]\n')
    second.write_text('[auth]\nclient_id = "new"\n')
    merged = read_secrets([first, tmp_path / "missing.toml", second])
    assert merged == {"auth": {"client_id": "new"}, "scorelab": {"allowed_emails": ["a@b.c"]}}
    (tmp_path / "bad.toml").write_text("[auth\n")
    with pytest.raises(SecretsError, match=r"bad\.toml: cannot read it as TOML"):
        read_secrets([tmp_path / "bad.toml"])


# ---- scorelab serve ----


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[str]]:
    """The streamlit commands `scorelab serve` would start; no ~/.streamlit, ./.streamlit or
    project secrets but the test's own."""
    commands: list[list[str]] = []

    def call(command: list[str], env: dict[str, str]) -> int:
        commands.append(command)
        return 0

    monkeypatch.setattr(core.cli.serve.subprocess, "call", call)
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("")
    monkeypatch.setattr(core.cli.serve, "PROJECT_DIR", project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    for name in ("STREAMLIT_SERVER_ADDRESS", EMAILS_ENV, DOMAINS_ENV):
        monkeypatch.delenv(name, raising=False)
    return commands


def streamlit_flags(command: list[str]) -> list[str]:
    return command[command.index("run") + 2 :]


def test_serve_listens_on_loopback_by_default(started: list[list[str]]) -> None:
    assert core.cli.main(["serve", "--server.port=8502"]) == 0
    assert streamlit_flags(started[0]) == ["--server.address", "127.0.0.1", "--server.port=8502"]


def test_serve_passes_streamlit_flags_through_as_written(
    started: list[list[str]], tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(LOGIN_TOML)
    given = [
        "--server.address", "0.0.0.0", "--server.port", "8502",
        "--secrets.files", str(secrets), "--server.headless=true",
    ]  # fmt: skip
    assert core.cli.main(["serve", *given]) == 0
    assert streamlit_flags(started[0]) == given


def test_serve_refuses_an_open_address_without_the_login(
    started: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    code = core.cli.main(["serve", "--server.address", "0.0.0.0", "--server.port", "8502"])
    assert code == 2
    assert started == []
    error = capsys.readouterr().err
    assert error.startswith("scorelab: error: scorelab will not serve on 0.0.0.0 without a login")
    assert "no [auth] section" in error and "docs/deploy.md" in error
    assert len(error.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "flags",
    [["--server.address=192.168.1.20"], ["--server.address", ""], ["--server.address", "::"]],
)
def test_serve_refuses_every_other_open_address(started: list[list[str]], flags: list[str]) -> None:
    assert core.cli.main(["serve", *flags]) == 2
    assert started == []


def test_serve_reads_the_address_from_streamlits_variable(
    started: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMLIT_SERVER_ADDRESS", "0.0.0.0")
    assert core.cli.main(["serve"]) == 2
    monkeypatch.setenv("STREAMLIT_SERVER_ADDRESS", "127.0.0.1")
    assert core.cli.main(["serve"]) == 0
    assert "--server.address" not in streamlit_flags(started[0])


@pytest.mark.parametrize("place", ["cwd", "home", "project"])
def test_serve_finds_the_login_where_streamlit_looks_for_secrets(
    started: list[list[str]], tmp_path: Path, place: str
) -> None:
    project = core.cli.serve.PROJECT_DIR
    folder = {"cwd": tmp_path, "home": tmp_path / "home", "project": project}[place]
    (folder / ".streamlit").mkdir(parents=True)
    (folder / ".streamlit" / "secrets.toml").write_text(LOGIN_TOML)
    assert core.cli.main(["serve", "--server.address", "0.0.0.0"]) == 0
    assert len(started) == 1


def test_serve_follows_secrets_files_named_in_a_config_file(
    started: list[list[str]], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "vault" / "scorelab.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(LOGIN_TOML)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text(f'[secrets]\nfiles = ["{elsewhere}"]\n')
    assert core.cli.main(["serve", "--server.address", "0.0.0.0"]) == 0


def test_serve_names_the_missing_setting_of_an_incomplete_login(
    started: list[list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(LOGIN_TOML.replace("[scorelab]", "[other]"))
    flags = ["--server.address", "0.0.0.0", "--secrets.files", str(secrets)]
    assert core.cli.main(["serve", *flags]) == 2
    assert "no one is allowed in" in capsys.readouterr().err


# ---- the Streamlit settings ----


def test_streamlit_settings_harden_the_dashboard() -> None:
    settings = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = settings["server"]
    assert server["address"] == "127.0.0.1"
    assert server["fileWatcherType"] == "none"
    assert server["runOnSave"] is False
    assert server["enableXsrfProtection"] is True
    assert server["enableCORS"] is True
    assert server["maxUploadSize"] * 1024 * 1024 == DEFAULT_SIZE_LIMIT_BYTES
    assert settings["client"]["showErrorDetails"] == "none"
    assert settings["logger"]["enableRich"] is False
    assert settings["browser"]["gatherUsageStats"] is False


def test_secrets_are_never_committed() -> None:
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert ".streamlit/secrets.toml" in ignored


def test_make_dashboard_goes_through_scorelab_serve() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndashboard:", 1)[1].split("\n\n", 1)[0]
    assert "scorelab serve" in recipe
    assert "0.0.0.0" not in recipe and "server.address" not in recipe
