"""Theoretical vs achieved occupancy for a dispatch (filled in once hotspot/arch lands)."""

from __future__ import annotations

from typing import Any


def dispatch_occupancy(d, disp, kernel, rows, arch, warnings: list[str]) -> Any:
    return None
