"""The Alembic migrations of scorelab's database (docs/storage.md).

`core.storage.schema` runs them when a `Store` opens a database; `python -m
core.storage.migrations` is Alembic's command line over them, for developers adding one.
`env.py` and `versions/` are read by Alembic, never imported as modules of this package.
"""
