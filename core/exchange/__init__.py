"""Experiments in and out of scorelab: a Mastra project's own store (`mastra_import`,
`mastra_export`; docs/mastra.md)."""
