"""Which column plays which role: the mapping proposed from the column names, and what is wrong
with a mapping for a file's columns (see docs/datasets.md, "Column detection")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.datasets._import_problems import problem
from core.records import ColumnMapping, ImportProblem

ROLE_CANDIDATES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "itemId"),
    "input": ("input", "question", "prompt", "query"),
    "output": ("output", "response", "answer", "completion"),
    "ground_truth": (
        "groundTruth",
        "ground_truth",
        "expected",
        "reference",
        "target",
        "__expected",
    ),
}
"""Column names recognised for each role, in order of preference (compared case-insensitively,
ignoring spaces, hyphens and underscores)."""

_ROLE_LABELS = {"id": "id", "input": "input", "output": "output", "ground_truth": "ground truth"}


def propose_mapping(columns: Sequence[str]) -> ColumnMapping | None:
    """The mapping suggested by the column names, or None without an input and an output.

    Every column that plays no role is kept as metadata.
    """
    by_key: dict[str, str] = {}
    for column in columns:
        by_key.setdefault(_name_key(column), column)
    chosen: dict[str, str | None] = {}
    for role, candidates in ROLE_CANDIDATES.items():
        chosen[role] = next(
            (by_key[_name_key(c)] for c in candidates if _name_key(c) in by_key), None
        )
    if chosen["input"] is None or chosen["output"] is None:
        return None
    used = {name for name in chosen.values() if name is not None}
    return ColumnMapping(
        id=chosen["id"],
        input=chosen["input"],
        output=chosen["output"],
        ground_truth=chosen["ground_truth"],
        metadata=[c for c in columns if c not in used],
    )


def mapping_problems(
    columns: Sequence[str],
    field_word: str,
    given: ColumnMapping | None,
    used: ColumnMapping | None,
) -> list[ImportProblem]:
    """Why the file cannot be mapped: no mapping at all (`used` is None: no input or output
    column was recognised), or a `given` mapping naming columns the file does not have."""
    listed = ", ".join(repr(c) for c in columns) or "none"
    if used is None:
        return _unrecognised_roles(columns, field_word, listed)
    if given is None:
        return []
    present = set(columns)
    wanted = [(r, getattr(given, r)) for r in ("id", "input", "output", "ground_truth")]
    wanted += [("metadata", c) for c in given.metadata]
    problems = []
    for role, column in wanted:
        if column is not None and column not in present:
            what = "a metadata" if role == "metadata" else f"the {_ROLE_LABELS[role]}"
            problems.append(
                problem(
                    "missing_column",
                    f"The mapping names {field_word} {column!r} as {what} {field_word}, but the "
                    f"file has no such {field_word} (its {field_word}s are {listed})",
                    column=column,
                )
            )
    return problems


def _unrecognised_roles(
    columns: Sequence[str], field_word: str, listed: str
) -> list[ImportProblem]:
    problems = []
    for role in ("input", "output"):
        known = {_name_key(n) for n in ROLE_CANDIDATES[role]}
        if not any(_name_key(c) in known for c in columns):
            names = ", ".join(ROLE_CANDIDATES[role])
            problems.append(
                problem(
                    f"no_{role}_column",
                    f"No {role} {field_word} found (looked for {names}); the file's "
                    f"{field_word}s are {listed}: choose the mapping by hand",
                )
            )
    return problems


def _name_key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(name)).lower()
