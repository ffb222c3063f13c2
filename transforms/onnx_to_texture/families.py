"""Import every op family's lowering rules (each module registers itself)."""
