"""`scorelab serve [streamlit options]`: the dashboard (`streamlit run app.py`), on 127.0.0.1
unless --server.address says otherwise, and then only with the login set up (docs/deploy.md)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli._errors import CliError

if TYPE_CHECKING:
    from core.cli._options import Commands

__all__ = ["LOOPBACK", "PROJECT_DIR", "STREAMLIT_MAIN", "register"]

PROJECT_DIR = Path(__file__).resolve().parents[2]
"""The checkout: app.py and the project's .streamlit folder are there."""

LOOPBACK = "127.0.0.1"
"""Where `scorelab serve` listens unless told otherwise: this machine only."""

STREAMLIT_MAIN = "\n".join(
    (
        "import sys",
        "from streamlit.runtime.pages_manager import PagesManager",
        "PagesManager.uses_pages_directory = False",
        "try:",
        # core.service is lazy (core/_lazy.py): the modules the first page's run needs are
        # named, else this imported nothing and the home page's first run paid for them.
        "    import core.service.context, core.service.views, pandas.io.formats.style",
        "except ImportError:",
        "    pass",
        "from streamlit.web.cli import main",
        'sys.exit(main(prog_name="streamlit"))',
    )
)
"""What `python -m streamlit` runs, after two changes. The first script run of a fresh server
goes straight to app.py's router: left alone, Streamlit sees the `pages/` folder beside app.py
and runs that first run in its legacy file-based mode, whose page list (app, compare,
datasets, ...) the browser shows until app.py's own navigation replaces it. And the service's
modules are imported as the server starts, not on the first page's run (1 s of the home
page's first paint). Run by the subprocess: core never imports Streamlit (kept as a tuple of
lines so that no line of core starts with a Streamlit import)."""

TomlTable = dict[str, object]
"""A TOML document, as `tomllib` reads it."""


def register(commands: Commands) -> None:
    """Add `serve`."""
    serve = commands.add_parser(
        "serve",
        help="start the dashboard (streamlit run app.py) on 127.0.0.1; any other "
        "--server.address needs the login (docs/deploy.md)",
        # Nothing after `serve` is parsed here: with no `-` prefix of its own, argparse takes
        # `--server.port 8502` and the like as plain words and hands them all to streamlit,
        # in order (`scorelab serve --help` shows streamlit's options).
        prefix_chars="+",
        add_help=False,
    )
    serve.add_argument("streamlit_args", nargs=argparse.REMAINDER, help="passed to streamlit")
    serve.set_defaults(handler=_serve)


def _serve(arguments: argparse.Namespace) -> int:
    app = PROJECT_DIR / "app.py"
    if not app.is_file():
        raise CliError(f"the dashboard is not here ({app} is missing)")
    env = dict(os.environ)
    if arguments.database_url:
        env["SCORELAB_DATABASE_URL"] = arguments.database_url
    flags: list[str] = list(arguments.streamlit_args)
    given = _flag_values(flags, "server.address")
    address = given[-1] if given else env.get("STREAMLIT_SERVER_ADDRESS")
    if address is None:
        # Private by default, whatever a config.toml elsewhere says.
        address = LOOPBACK
        flags = ["--server.address", LOOPBACK, *flags]
    _check_serving_address(address, flags, env)
    command = [sys.executable, "-c", STREAMLIT_MAIN, "run", str(app), *flags]
    return subprocess.call(command, env=env)


def _check_serving_address(address: str | None, flags: list[str], env: dict[str, str]) -> None:
    """Refuse, before streamlit starts, an address other hosts reach when the login is not set
    up (app.py refuses it too, for a plain `streamlit run`)."""
    from core.service.terminal import (
        SecretsError,
        is_loopback,
        login_problems,
        read_secrets,
        unprotected_address_message,
    )

    if is_loopback(address):
        return
    try:
        secrets = read_secrets(_secrets_files(flags))
    except SecretsError as error:
        raise CliError(str(error)) from None
    problems = login_problems(secrets, env)
    if problems:
        raise CliError(unprotected_address_message(address, problems))


def _secrets_files(flags: list[str]) -> list[Path]:
    """The secrets files streamlit will read: --secrets.files, else `[secrets] files` of a
    config.toml, else secrets.toml in ~/.streamlit, ./.streamlit and the app's .streamlit."""
    given = _flag_values(flags, "secrets.files")
    if given:
        return [Path(name) for name in given]
    folders = list(dict.fromkeys([Path.home(), Path.cwd(), PROJECT_DIR]))
    configured: list[str] = []
    for folder in folders:  # a later config file wins, as in streamlit
        config = _toml_or_empty(folder / ".streamlit" / "config.toml")
        section = config.get("secrets")
        files = section.get("files") if isinstance(section, dict) else None
        if isinstance(files, list) and files:
            configured = [str(name) for name in files]
    if configured:
        return [Path(name) for name in configured]
    return [folder / ".streamlit" / "secrets.toml" for folder in folders]


def _toml_or_empty(path: Path) -> TomlTable:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # streamlit reports a broken config file itself


def _flag_values(flags: list[str], name: str) -> list[str]:
    """Each value given to streamlit's `--name VALUE` or `--name=VALUE`, in order (streamlit
    keeps the last; the script's own arguments after `--` are not streamlit's)."""
    values = []
    option = f"--{name}"
    for index, flag in enumerate(flags):
        if flag == "--":
            break
        if flag == option and index + 1 < len(flags):
            values.append(flags[index + 1])
        elif flag.startswith(option + "="):
            values.append(flag[len(option) + 1 :])
    return values
