"""Saved hotspot JSON given as an input (`diff` and `report` accept a saved `analyze --format json`
output in place of a capture): read here like every other input file, so the same refusals and
messages apply; the callers check its shape."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.files import load_json
from hotspot.result import JsonValue


def read_saved_json(path: Path) -> JsonValue:
    """The parsed document; a missing, unreadable or malformed file is an InputError naming it."""
    return load_json(path)
