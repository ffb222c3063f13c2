"""Import every op family's lowering rules (each module registers itself)."""

# elementwise first: a later family's rule for an op replaces its (Identity is movement's)
from . import elementwise_kernel  # noqa: F401  isort: skip
from . import conv, matmul, movement, pool, positional, reduce  # noqa: F401
