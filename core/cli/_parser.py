"""The command line: `scorelab [--database-url URL] COMMAND ...`, one module per command.

A command is a module of `core.cli` with `register(commands)`: it adds its subparser (options,
help) and sets `handler`, a function of the parsed arguments returning the exit code; listing
the module in `COMMANDS` below makes it part of `scorelab`. A usage error raises `CliError`
(one line, exit 2) instead of printing argparse's usage.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from core.cli import experiments, export, mastra, resume, run, scorers, serve
from core.cli._errors import CliError

__all__ = ["COMMANDS", "Parser", "build_parser"]

COMMANDS = (run, resume, experiments, export, mastra, scorers, serve)
"""The commands, in the order `scorelab --help` lists them."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are `CliError`s."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see: {self.prog} --help)")


def build_parser() -> Parser:
    """The whole command line."""
    parser = Parser(prog="scorelab", description="LLM eval experiments on Mastra-style scorers.")
    parser.add_argument(
        "--database-url",
        help="database URL (default: SCORELAB_DATABASE_URL, else data/scorelab.db)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for command in COMMANDS:
        command.register(commands)
    return parser
