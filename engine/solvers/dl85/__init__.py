"""`dl85` and `cadl85`: DL8.5 and Complete Anytime DL8.5 (Kiossou, Nijssen & Schaus).

`adapter` prepares the 0/1 rows and maps the result to a Tree, `kernel` is the numba
search, `cache` its table of solved branches and tree records, `counts` the row and
pair counting (depth-two step, feature order), `rules` CA-DL8.5's pruning rules.
"""

from engine.solvers.dl85.adapter import CADL85, DL85

__all__ = ["CADL85", "DL85"]
