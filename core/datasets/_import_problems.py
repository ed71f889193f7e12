"""Import problems and their wording: the file that cannot be read at all (`Unreadable`), and
long lists of one kind of problem cut short (see docs/datasets.md, "Validation rules and
messages")."""

from __future__ import annotations

from core.records import ImportProblem

MAX_LISTED_PER_KIND = 20
"""Problems of one kind listed one by one; the rest are summed up in one more problem."""


class Unreadable(Exception):
    """The file cannot be read at all; carries the one problem to report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.problem = ImportProblem(code=code, message=message)


def problem(
    code: str, message: str, *, row: int | None = None, column: str | None = None
) -> ImportProblem:
    return ImportProblem(code=code, message=message, row=row, column=column)


def capped(problems: list[ImportProblem], code: str, rest: str) -> list[ImportProblem]:
    """The first `MAX_LISTED_PER_KIND` problems, then one saying "<n> <rest>"."""
    if len(problems) <= MAX_LISTED_PER_KIND:
        return problems
    more = len(problems) - MAX_LISTED_PER_KIND
    return [*problems[:MAX_LISTED_PER_KIND], problem(code, f"{more:,} {rest}")]


def join(parts: list[str], total: int) -> str:
    """The parts as a list in words (`a, b and c`), ending `and 3 more` when `total` counts
    more than the parts shown."""
    if total > len(parts):
        return f"{', '.join(parts)} and {total - len(parts)} more"
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
