"""A note and tags on an experiment, written by a person (issue 14: managing experiments).

Two nullable columns of `experiments`: `note` (text) and `tags` (a JSON list of short strings).
Rows from before this revision have neither.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("experiments", sa.Column("note", sa.Text, nullable=True))
    op.add_column("experiments", sa.Column("tags", sa.JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("experiments", "tags")
    op.drop_column("experiments", "note")
