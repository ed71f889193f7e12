"""One module per revision, `<rev>_<slug>.py`, loaded by Alembic (which skips this file)."""
