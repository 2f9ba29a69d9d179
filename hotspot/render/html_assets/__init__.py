"""Inline CSS and JavaScript of the self-contained HTML report (no network, works from file://)."""

from hotspot.render.html_assets.script import SCRIPT
from hotspot.render.html_assets.style import STYLE

__all__ = ["SCRIPT", "STYLE"]
