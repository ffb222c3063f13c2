"""Console entry points."""
