"""Stable entry points into the ATT analysis for other layers (collect, plan, report)."""

from hotspot.att.analyze import AnalyzeOptions, analyze_dispatch, analyze_path

__all__ = ["AnalyzeOptions", "analyze_dispatch", "analyze_path"]
