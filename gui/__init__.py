"""Orchard's desktop interface (PySide6); it reaches the engine only through its public modules."""
