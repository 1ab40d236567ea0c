"""Solvers by their stable names (the CLI's `--algo`, the GUI's picker)."""

from __future__ import annotations

from engine.errors import ParameterError
from engine.solvers.protocol import Solver

_SOLVERS: dict[str, type[Solver]] = {}


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator: make a solver available under `cls.name`."""
    _SOLVERS[cls.name] = cls
    return cls


def get_solver(name: str) -> type[Solver]:
    try:
        return _SOLVERS[name]
    except KeyError:
        raise ParameterError(f"Unknown algorithm '{name}' (available: "
                             f"{', '.join(solver_names())}).") from None


def solver_names() -> list[str]:
    return list(_SOLVERS)


# The contract's default is blossom; until it is registered the baseline stands in.
_DEFAULT_PREFERENCE = ("blossom", "greedy")


def default_solver_name() -> str:
    return next(name for name in _DEFAULT_PREFERENCE if name in _SOLVERS)
