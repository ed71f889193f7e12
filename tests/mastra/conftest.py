"""Fixtures of the Mastra tests: stores made by Mastra itself (mastra_maker.py)."""

from mastra_maker import made_store, mastra_judge, store_copy

__all__ = ["made_store", "mastra_judge", "store_copy"]
