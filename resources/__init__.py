"""Orchard's bundled files, found the same way from a checkout, an install or the frozen app."""

import sys
from pathlib import Path

# The standalone app (packaging/) unpacks its data under sys._MEIPASS, in the same
# layout as this folder; everywhere else the files sit next to this module.
ROOT = (Path(sys._MEIPASS) / "resources" if getattr(sys, "frozen", False)
        else Path(__file__).resolve().parent)
SAMPLES_DIR = ROOT / "samples"
ICONS_DIR = ROOT / "icons"
ICON = ICONS_DIR / "orchard.png"
