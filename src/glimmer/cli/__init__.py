"""cli: the typer commands; formatting only (tables, progress, JSON output)."""
