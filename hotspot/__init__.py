"""hotspot: which instruction is waiting, for what, and what to change (AMD CDNA ATT analysis)."""

__version__ = "0.1.0"
