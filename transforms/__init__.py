"""Rewrite passes, one module per pass or closely related pass family."""
