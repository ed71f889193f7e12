"""Scorer results written at the speed of the scorers on PostgreSQL (issue 22): the foreign key
`scorer_results.experiment_id -> experiments.id` is dropped there. Its trigger looked the
experiment up once per row written, 30-40% of the server's CPU time for a batch of results
COPYed (bench/result_copy.py; docs/storage.md, "The write path"), and on a small machine that
server shares the CPU with the scoring process.

What it guaranteed is kept by the store instead: a batch of results is refused, with the
experiment's id named, when that experiment does not exist (one lookup per batch, taking the
lock the key's trigger took per row, so a deletion waits for the batch or the batch sees the
deletion); deleting an experiment or a dataset locks its experiment rows first, then deletes
their results with them in one transaction (core/storage/result_rows.py, experiments.py).

SQLite keeps its key: there it costs no measurable time per row, and dropping it would mean
rebuilding the whole table (a copy of every result) at the upgrade. tables.py declares no key
(the store's rule, both databases), and `include_object` leaves SQLite's out of the comparison.

The downgrade adds the key back (validating every stored row)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

FOREIGN_KEY = "scorer_results_experiment_id_fkey"
"""PostgreSQL's own name for the key (revision 0001 left it unnamed); the downgrade's name."""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    # By what it refers to, not by name: a database made before migrations may name it otherwise.
    for key in sa.inspect(bind).get_foreign_keys("scorer_results"):
        if key["referred_table"] == "experiments" and key["name"]:
            op.drop_constraint(key["name"], "scorer_results", type_="foreignkey")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.create_foreign_key(FOREIGN_KEY, "scorer_results", "experiments", ["experiment_id"], ["id"])
