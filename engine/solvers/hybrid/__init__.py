"""`hybrid`: the top levels of a deep tree searched exactly, the levels below grown
greedily.  `adapter` holds the solver (it has no kernel of its own)."""

from engine.solvers.hybrid.adapter import Hybrid

__all__ = ["Hybrid"]
