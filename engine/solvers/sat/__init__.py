"""`sat-depth` and `sat-size`: the SAT encodings of Avellaneda (AAAI 2020).

`adapter` runs the depth and size searches on python-sat's solvers, `encoding` builds
the clauses.
"""

from engine.solvers.sat.adapter import SatDepth, SatSize

__all__ = ["SatDepth", "SatSize"]
