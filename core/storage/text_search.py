"""How a text search of the item table is written in SQL: a case-insensitive substring of an
item's id, input, output or ground truth, by LIKE (ILIKE over PostgreSQL's trigram-indexed
expression, revision 0013) and, on SQLite, first looked up in the FTS5 trigram index of the
items' texts (revision 0015; built by `core.storage.search_index`). `core.storage.reads` puts
these conditions into its pages (docs/storage.md, Reading a large experiment).
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Connection, Text, and_, cast, literal_column, or_, select, table
from sqlalchemy import column as sql_column

from core.storage.tables import (
    DATASET_TRIGRAM_PREFIX,
    SEARCH_DATASETS,
    SEARCH_ROWID_SPAN,
    SEARCH_TABLE,
    SEARCHED_TEXT,
    DatasetItemRow,
)

__all__ = [
    "TRIGRAMS_MATCHED",
    "dataset_index_name",
    "index_candidates",
    "index_walk",
    "like_condition",
    "literal_dataset_id",
    "matches",
    "search_base",
    "trigram_query",
]

_items = DatasetItemRow.__table__
_search = table(SEARCH_TABLE, sql_column("rowid"))
_search_datasets = table(
    SEARCH_DATASETS, sql_column("ordinal"), sql_column("dataset_id"), sql_column("complete")
)

_STORE_DATASET_ID = re.compile(r"(mastra-d-)?[0-9a-f]{32}")
"""The dataset ids the store makes: a uuid4's hex (`core.storage.datasets`), or `mastra-d-` and
a 32-hex-digit hash (`core.exchange.mastra_import.scorelab_id`)."""

TRIGRAMS_MATCHED = 32
"""A needle's trigrams looked up in SQLite's index at most (its first ones, distinct): the
candidates of a longer needle are checked by LIKE anyway, and each trigram more is one more
posting list read."""


def search_base(connection: Connection, dataset_id: str) -> int | None:
    """SQLite: the first rowid of the dataset's items in the trigram index of the items'
    texts (revision 0015); None on PostgreSQL (which has its own), on a SQLite without FTS5's
    trigrams, and for a dataset not yet wholly indexed (core/storage/search_index.py)."""
    if connection.dialect.name != "sqlite":
        return None
    there = connection.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SEARCH_TABLE,)
    )
    if there.first() is None:
        return None
    ordinal = connection.execute(
        select(_search_datasets.c.ordinal).where(
            _search_datasets.c.dataset_id == dataset_id, _search_datasets.c.complete == 1
        )
    ).scalar_one_or_none()
    return None if ordinal is None else int(ordinal) * SEARCH_ROWID_SPAN


def trigram_query(needle: str) -> str | None:
    """The FTS5 query of the items whose texts hold every trigram of `needle` (at most
    `TRIGRAMS_MATCHED` of them, each a quoted string: FTS5's syntax never reads the needle's
    characters); None for a needle under 3 characters, which has no trigram."""
    trigrams = list(dict.fromkeys(needle[k : k + 3] for k in range(len(needle) - 2)))
    if not trigrams:
        return None
    quoted = ('"' + trigram.replace('"', '""') + '"' for trigram in trigrams[:TRIGRAMS_MATCHED])
    return " AND ".join(quoted)


def matches(
    needle: str, dialect: str, base: int | None = None, dataset_id: str | None = None
) -> Any:
    """A case-insensitive substring of the item's id, input, output or ground truth (their
    JSON text: a string is matched inside its quotes). LIKE's wildcards in the needle are
    escaped: the search is plain text. SQLite's LIKE ignores the case of ASCII letters by
    itself, over each text; PostgreSQL's ILIKE reads the one expression its trigram index
    holds (`SEARCHED_TEXT`, revision 0013: the four texts joined by a separator no needle
    holds), so a search under a score filter is answered from the index (either way, no
    lower() over a million texts). On SQLite with revision 0015's trigram index (`base`: the
    dataset's first rowid there), a needle of 3 characters or more is looked up there first:
    only the items holding its every trigram (case folded, a superset of LIKE's matches) are
    then tested by the same LIKE, so the answer is LIKE's exactly. On PostgreSQL, `dataset_id`
    is written into the condition as a literal so that the planner may answer it from the
    dataset's partial trigram index (`like_condition`)."""
    like = like_condition(needle, dialect, dataset_id)
    found = trigram_query(needle) if base is not None and dialect == "sqlite" else None
    if found is None or base is None:
        return like
    return and_(_items.c.position.in_(index_candidates(base, found)), like)


def index_candidates(base: int, found: str) -> Any:
    """SELECT the positions of the dataset's items whose texts hold every trigram of the
    trigram query `found` (`trigram_query`), from the index alone: a superset of LIKE's
    matches, in dataset order."""
    rowid = _search.c.rowid
    return select(rowid - base).where(
        literal_column(SEARCH_TABLE).match(found), rowid >= base, rowid < base + SEARCH_ROWID_SPAN
    )


def like_condition(needle: str, dialect: str, dataset_id: str | None = None) -> Any:
    """`matches` by LIKE alone (ILIKE on PostgreSQL, served by the dataset's trigram index
    once built: `dataset_id` names it, see `literal_dataset_id`)."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    if dialect == "postgresql":
        searched = literal_column(f"({_qualified(SEARCHED_TEXT)})", Text)
        found = searched.ilike(pattern, escape="\\")
        literal = None if dataset_id is None else literal_dataset_id(dataset_id)
        if literal is None:
            return found
        return and_(literal_column(f"dataset_items.dataset_id = {literal}"), found)
    texts = [
        _items.c.item_id,
        cast(_items.c.input, Text),
        cast(_items.c.output, Text),
        cast(_items.c.ground_truth, Text),
    ]
    if dialect == "sqlite":
        return or_(*(text.like(pattern, escape="\\") for text in texts))
    return or_(*(text.ilike(pattern, escape="\\") for text in texts))


def index_walk(base: int, found: str) -> Any:
    """SELECT the positions of the items the trigram index finds for `found`, walking its
    matches in rowid order, which is dataset order (`search_rowid`, what the page is sorted
    by): a page stops after its last row instead of sorting every match."""
    rowid = _search.c.rowid
    return (
        select(_items.c.position, rowid.label("search_rowid"))
        .select_from(_search)
        .join(_items, _items.c.position == rowid - base)
        .where(
            literal_column(SEARCH_TABLE).match(found),
            rowid >= base,
            rowid < base + SEARCH_ROWID_SPAN,
        )
    )


def literal_dataset_id(dataset_id: str) -> str | None:
    """The dataset id as an SQL string literal, for an id of the form the store makes (which
    holds only letters, digits and hyphens, so nothing in it can end the literal); None for any
    other. PostgreSQL proves that a query reads only a partial index's rows from its literal
    (`dataset_id = '...'`), never from a bound parameter of a generic plan."""
    if _STORE_DATASET_ID.fullmatch(dataset_id) is None:
        return None
    return f"'{dataset_id}'"


def dataset_index_name(dataset_id: str) -> str | None:
    """PostgreSQL: the name of the dataset's partial trigram index (core/storage/search_index.py),
    for an id of the form the store makes; None for any other (its searches scan)."""
    if literal_dataset_id(dataset_id) is None:
        return None
    return DATASET_TRIGRAM_PREFIX + dataset_id.replace("-", "_")


def _qualified(expression: str) -> str:
    """`SEARCHED_TEXT` with its columns named by table (the search's statements join
    others)."""
    for column in ("item_id", "input", "output", "ground_truth"):
        expression = re.sub(rf"\b(?<!\.){column}\b", f"dataset_items.{column}", expression)
    return expression
