"""All algorithms behind one protocol; importing this package registers them."""

from engine.solvers import blossom  # noqa: F401  (registers itself)
from engine.solvers import contree  # noqa: F401  (registers itself)
from engine.solvers import dl85  # noqa: F401  (registers dl85 and cadl85)
from engine.solvers import greedy  # noqa: F401  (registers itself)
from engine.solvers import odd  # noqa: F401  (registers itself)
from engine.solvers import sat  # noqa: F401  (registers sat-depth and sat-size)
from engine.solvers import auto  # noqa: F401  (registers itself; after those it picks from)
from engine.solvers.registry import default_solver_name, get_solver, register, solver_names

__all__ = ["default_solver_name", "get_solver", "register", "solver_names"]
