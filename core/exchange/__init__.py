"""What crosses the border of the app: experiment files out (JSON, CSV, HTML) and back in
(JSON); a Mastra project's own store in and out (`mastra_import`, `mastra_export`;
docs/mastra.md)."""
