"""Import every op family's lowering rules (each module registers itself)."""

from . import conv, matmul, movement, pool, positional, reduce  # noqa: F401
