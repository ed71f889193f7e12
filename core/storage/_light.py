"""What the `Store` shares with the quick listing (`core/storage/listing.py`), importing no
database library: where the database is by default, when a live experiment counts as
interrupted, and which schema revision a database up to date is at."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

__all__ = [
    "DATABASE_URL_ENV",
    "MIGRATIONS_DIR",
    "STALE_AFTER_S",
    "default_database_url",
    "shipped_heads",
]

DATABASE_URL_ENV = "SCORELAB_DATABASE_URL"
STALE_AFTER_S = 60.0
"""A pending or running experiment without a heartbeat for this long is reported as
`interrupted`: the process running it beats every few seconds, so it must have died."""

MIGRATIONS_DIR = Path(__file__).resolve().with_name("migrations")


def default_database_url() -> str:
    """`SCORELAB_DATABASE_URL`, else an SQLite file: `data/scorelab.db` in the project checkout
    when it is writable, else `scorelab.db` in the user's data directory."""
    configured = os.environ.get(DATABASE_URL_ENV, "").strip()
    if configured:
        return configured
    return f"sqlite:///{_default_sqlite_path()}"


def _default_sqlite_path() -> Path:
    project = Path(__file__).resolve().parents[2]
    if (project / "pyproject.toml").is_file() and os.access(project, os.W_OK):
        data = project / "data"
        data.mkdir(exist_ok=True)
        if os.access(data, os.W_OK):
            return data / "scorelab.db"
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    folder = base / "scorelab"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "scorelab.db"


@functools.cache
def shipped_heads() -> frozenset[str]:
    """The revisions a database up to date is at, read from the migration files' `revision`
    and `down_revision` assignments (no Alembic import): the revisions no other one revises."""
    found: set[str] = set()
    revised: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if not isinstance(target, ast.Name) or target.id not in ("revision", "down_revision"):
                continue
            value = ast.literal_eval(node.value)
            values = value if isinstance(value, tuple | list) else (value,)
            names = {str(v) for v in values if v is not None}
            (found if target.id == "revision" else revised).update(names)
    return frozenset(found - revised)
