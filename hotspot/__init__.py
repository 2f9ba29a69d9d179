"""hotspot: which instruction is waiting, for what, and what to change (AMD CDNA ATT analysis)."""

from hotspot._version import __version__

__all__ = ["__version__"]
