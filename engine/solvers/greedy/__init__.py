"""`greedy`: a CART-style tree grown split by split, the baseline every exact solver
is checked against.  `adapter` maps a Dataset and the result, `kernel` is numba."""

from engine.solvers.greedy.adapter import Greedy

__all__ = ["Greedy"]
