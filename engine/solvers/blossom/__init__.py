"""The `blossom` solver (Demirović, Hebrard & Jean, NeurIPS 2021).

`adapter` prepares the 0/1 rows (Section 4.3) and maps the result to a Tree,
`kernel` is the numba search, `parallel` splits the root's features across threads.
"""

from engine.solvers.blossom.adapter import Blossom

__all__ = ["Blossom"]
