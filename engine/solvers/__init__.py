"""All algorithms behind one protocol; importing this package registers them."""

from engine.solvers import (
    auto,  # noqa: F401  (registers itself; after those it picks from)
    blossom,  # noqa: F401  (registers itself)
    contree,  # noqa: F401  (registers itself)
    dl85,  # noqa: F401  (registers dl85 and cadl85)
    greedy,  # noqa: F401  (registers itself)
    hybrid,  # noqa: F401  (registers itself)
    odd,  # noqa: F401  (registers itself)
    sat,  # noqa: F401  (registers sat-depth and sat-size)
)
from engine.solvers.registry import (
    default_solver_name,
    get_solver,
    register,
    solver_names,
)

__all__ = ["default_solver_name", "get_solver", "register", "solver_names"]
