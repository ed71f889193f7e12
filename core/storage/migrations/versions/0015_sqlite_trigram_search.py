"""Text search served by an index on SQLite too (issue 22): an FTS5 table with the trigram
tokenizer over the texts the item table's search reads (`core.storage.text_search.matches`), filled
for a dataset by its first text search (core/storage/search_index.py, a chunk of items per
transaction) and from then on kept in step with `dataset_items` by triggers. An import pays
nothing for it: a dataset nobody searches is never indexed.

- `dataset_item_search` (FTS5, contentless, `detail=none`): per item, its id and the stored
  JSON text of its input, output and ground truth, as four columns (so a match never spans
  two texts). Contentless: the texts are not stored twice, only their trigrams; `detail=none`:
  no positions, a needle's trigrams are ANDed and the candidates tested by the same LIKE as
  before, so the index only narrows what LIKE reads.
- An item's rowid there is its dataset's number times 2**32 plus its position: a dataset is
  one range of rowids, in its order (a page in dataset order walks the index's matches and
  stops when full). The numbers are `dataset_item_search_datasets.ordinal`. The items' own
  rowid is not used: `VACUUM` may renumber the rowids of a table without an INTEGER PRIMARY
  KEY, which would silently detach the index from its items.
- Triggers after INSERT, DELETE and UPDATE of `dataset_items` add, remove (FTS5's 'delete'
  command with the old texts) and replace an item's entry within the writer's own statement,
  for the items already indexed (their dataset has a row in `SEARCH_DATASETS`, and the item is
  under its `indexed_below` or the dataset is `complete`), so an indexed dataset changed or
  deleted leaves the index exact whoever wrote it; a dataset's row goes with the dataset.

A SQLite without FTS5's trigram tokenizer (before 3.34) gets none of this: the upgrade logs it
(`scorelab.storage`) and the search keeps its scan. PostgreSQL has its trigram index from
revision 0013 and is left as it is. These objects are made here only, not declared in
tables.py (`include_object` leaves them out of the schema comparison)."""

from __future__ import annotations

import logging
import sqlite3

import sqlalchemy as sa
from alembic import op

from core.storage.tables import (
    SEARCH_DATASETS,
    SEARCH_ROWID_SPAN,
    SEARCH_TABLE,
    SEARCH_TRIGGERS,
)

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_log = logging.getLogger("scorelab.storage")
_TEXTS = "item_id, input, output, ground_truth"
_INSERT, _DELETE, _UPDATE, _FORGET = SEARCH_TRIGGERS


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    if not _made_search_table(bind):
        return
    op.execute(
        f"CREATE TABLE {SEARCH_DATASETS} (ordinal INTEGER PRIMARY KEY AUTOINCREMENT, "
        "dataset_id VARCHAR(64) NOT NULL UNIQUE, indexed_below INTEGER NOT NULL DEFAULT 0, "
        "complete INTEGER NOT NULL DEFAULT 0)"
    )
    for trigger in (_insert_trigger(), _delete_trigger(), _update_trigger(), _forget_trigger()):
        op.execute(trigger)


def _made_search_table(bind: sa.Connection) -> bool:
    """Create the FTS5 trigram table (in a savepoint: a SQLite without it leaves the upgrade's
    transaction usable); False, logged, when this SQLite cannot."""
    try:
        with bind.begin_nested():
            bind.exec_driver_sql(
                f"CREATE VIRTUAL TABLE {SEARCH_TABLE} USING fts5({_TEXTS}, content='', "
                "tokenize='trigram', detail=none, columnsize=0)"
            )
    except sa.exc.OperationalError as error:
        _log.warning(
            "SQLite %s cannot make an FTS5 trigram table (%s): the item table's text search "
            "keeps a scan of every item. SQLite 3.34 or later, built with FTS5, has it.",
            sqlite3.sqlite_version,
            str(error.orig).strip(),
        )
        return False
    return True


def _rowid(row: str) -> str:
    """The SQL of the search rowid of the item `row` (`old` or `new`) names."""
    return (
        f"(SELECT ordinal FROM {SEARCH_DATASETS} WHERE dataset_id = {row}.dataset_id) "
        f"* {SEARCH_ROWID_SPAN} + {row}.position"
    )


def _indexed(row: str) -> str:
    """The SQL condition: the item `row` names is in the index (see the module's docstring)."""
    return (
        f"EXISTS (SELECT 1 FROM {SEARCH_DATASETS} WHERE dataset_id = {row}.dataset_id "
        f"AND (complete = 1 OR {row}.position < indexed_below))"
    )


def _remove(row: str = "old") -> str:
    texts = ", ".join(f"{row}.{name}" for name in _TEXTS.split(", "))
    return (
        f"INSERT INTO {SEARCH_TABLE} ({SEARCH_TABLE}, rowid, {_TEXTS}) "
        f"SELECT 'delete', {_rowid(row)}, {texts} WHERE {_indexed(row)};"
    )


def _add(row: str = "new") -> str:
    texts = ", ".join(f"{row}.{name}" for name in _TEXTS.split(", "))
    return (
        # A position outside one dataset's span of rowids would land in another's.
        f"SELECT RAISE(ABORT, 'dataset_items.position must be from 0 to {SEARCH_ROWID_SPAN - 1}"
        f" for the search index') WHERE {row}.position NOT BETWEEN 0 AND {SEARCH_ROWID_SPAN - 1}"
        f" AND {_indexed(row)}; "
        f"INSERT INTO {SEARCH_TABLE} (rowid, {_TEXTS}) "
        f"SELECT {_rowid(row)}, {texts} WHERE {_indexed(row)};"
    )


def _insert_trigger() -> str:
    return f"CREATE TRIGGER {_INSERT} AFTER INSERT ON dataset_items BEGIN {_add()} END"


def _delete_trigger() -> str:
    return f"CREATE TRIGGER {_DELETE} AFTER DELETE ON dataset_items BEGIN {_remove()} END"


def _update_trigger() -> str:
    return (
        f"CREATE TRIGGER {_UPDATE} AFTER UPDATE OF dataset_id, position, {_TEXTS} "
        f"ON dataset_items BEGIN {_remove()} {_add()} END"
    )


def _forget_trigger() -> str:
    return (
        f"CREATE TRIGGER {_FORGET} AFTER DELETE ON datasets BEGIN "
        f"DELETE FROM {SEARCH_DATASETS} WHERE dataset_id = old.id; END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for trigger in SEARCH_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute(f"DROP TABLE IF EXISTS {SEARCH_TABLE}")
    op.execute(f"DROP TABLE IF EXISTS {SEARCH_DATASETS}")
