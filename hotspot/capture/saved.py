"""Saved hotspot JSON given as an input (`analyze`, `plan`, `report` and `diff` accept a saved
`analyze --format json` output in place of a capture): read here like every other input file, so
the same refusals and messages apply; the callers check its shape."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.files import is_regular_file, parse_json, read_capped
from hotspot.errors import InputError
from hotspot.result import JsonValue

SAVE_HINT = ("pass a ui_output_agent_*_dispatch_* dir (or a folder holding several), or the file "
             "`hotspot analyze DIR --format json > FILE` writes")


def is_saved_input(path: Path | str) -> bool:
    """A regular file where a capture directory is expected: read as a saved analysis."""
    return is_regular_file(path)


def neither(path: Path | str) -> InputError:
    """The refusal of a file that is no capture and no saved analysis (a CSV, a log, a binary); a
    file inside a dispatch dir (its code.json, a wave file) points at that dir."""
    parent = Path(path).parent
    hint = (f"pass the dispatch dir it is in: {parent}" if parent.name.startswith("ui_output_agent_")
            else SAVE_HINT)
    return InputError(f"{path}: neither a capture directory nor a saved `hotspot analyze --format "
                      "json` file", hint, code="bad-input")


def read_saved_json(path: Path) -> JsonValue:
    """The parsed document; a missing or unreadable file is an InputError naming it. A file that
    does not begin as a JSON object is not a saved analysis at all: said so, not as malformed
    JSON at some column; one that does but is cut or broken keeps the malformed-JSON message."""
    data = read_capped(path)
    if not data.lstrip()[:1] == b"{":
        raise neither(path)
    return parse_json(path, data)
