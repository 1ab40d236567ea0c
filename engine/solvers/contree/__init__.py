"""The `contree` solver (Brița, van der Linden & Demirović, AAAI 2025).

`adapter` turns a Dataset into the kernel's arrays and the result into a Tree,
`kernel` is the numba search, `parallel` splits the root's features across threads;
`regression` is the search of least squared error for a numeric target (its own
kernel: ConTree's similarity bounds do not hold for squared errors).
"""

from engine.solvers.contree.adapter import ConTree

__all__ = ["ConTree"]
