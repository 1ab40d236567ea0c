"""`odd`: optimal decision diagrams (Florio, Martins, Schiffer, Serra & Vidal, AAAI 2023).

`adapter` runs the two steps through the Monitor, `heuristic` is step 1 (the
multi-start construction), `milp` step 2 (the MILP on HiGHS), `lns` the MILP on
neighbourhoods of the heuristic's diagram, `common` what they share (skeleton,
scaling, side constraints).
"""

from engine.solvers.odd.adapter import Odd, parity_groups

__all__ = ["Odd", "parity_groups"]
