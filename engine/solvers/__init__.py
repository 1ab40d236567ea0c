"""All algorithms behind one protocol, by name (`get_solver`); each family is
imported when it is first asked for (see `registry`)."""

from engine.solvers.registry import (
    default_solver_name,
    get_solver,
    register,
    solver_names,
    solvers_for,
)

__all__ = ["default_solver_name", "get_solver", "register", "solver_names", "solvers_for"]
