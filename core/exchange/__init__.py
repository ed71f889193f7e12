"""What crosses the border of the app: experiment files out (JSON, CSV, HTML) and back in (JSON)."""
