"""Orchard's engine: data preparation, models, solvers and exports (never imports Qt)."""

__version__ = "0.1.0"
