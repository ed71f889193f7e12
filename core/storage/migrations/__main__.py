"""`python -m core.storage.migrations [--database-url URL] COMMAND ...`: Alembic's own command
line over scorelab's migrations, without an alembic.ini (docs/storage.md).

Without `--database-url` it works on a scratch SQLite database brought to the head revision,
so `revision --autogenerate -m "what changed"` writes the migration that a change of
core/storage/tables.py needs (numbered after the last one) and `check` says whether one is
missing. With it, `current` or `history` look at a real database; an upgrade happens anyway
when a `Store` opens it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from alembic.config import CommandLine

from core.storage._engines import make_engine, normalise_url
from core.storage.schema import alembic_config, revision_ids, upgrade_schema

PROG = "python -m core.storage.migrations"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one Alembic command; returns the exit code (Alembic exits 1 on its errors)."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="the database (default: a scratch SQLite one)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="an Alembic command")
    arguments = parser.parse_args(argv)
    alembic = CommandLine(prog=PROG)
    options = alembic.parser.parse_args(arguments.command)
    if not hasattr(options, "cmd"):
        alembic.parser.error("a command is needed, e.g. `check` or `revision --autogenerate`")
    if getattr(options, "rev_id", "") is None:  # `revision` without --rev-id: the next number
        options.rev_id = f"{max(map(int, revision_ids()), default=0) + 1:04d}"
    with tempfile.TemporaryDirectory() as scratch:
        url = arguments.database_url or f"sqlite:///{Path(scratch) / 'head.db'}"
        engine = make_engine(normalise_url(url))
        try:
            if arguments.database_url is None:
                upgrade_schema(engine)
            with engine.begin() as connection:
                alembic.run_cmd(alembic_config(connection), options)
        finally:
            engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
