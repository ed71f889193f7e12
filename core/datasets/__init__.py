"""Dataset import: reading, mapping, checking and storing uploaded tables (docs/datasets.md)."""
