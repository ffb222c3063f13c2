"""The project's xDSL dialects."""
