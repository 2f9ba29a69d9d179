"""A saved `hotspot analyze --format json` output read back as the typed analysis (what `diff` and
`report` take when given a file instead of a dispatch dir).

The envelope (hotspot/result.py) is checked first: a newer schema_version, an error envelope or
another command's output is refused naming the field; then `data` is decoded by the records' type
hints (hotspot/decode.py), so a value of the wrong shape is named by its field (`data.totals.stall`).
A bare `data` object (the envelope taken off) reads too.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from hotspot.att.model import DispatchAnalysis, MultiAnalysis
from hotspot.decode import from_plain
from hotspot.errors import bad_file
from hotspot.record import record
from hotspot.result import JsonValue, check_saved_envelope

SAVED_COMMAND = "analyze"
HINT = "pass the output of hotspot analyze --format json"


@record
class _SavedOne:
    data: DispatchAnalysis
    warnings: list[str] = field(default_factory=list)


@record
class _SavedMany:
    data: MultiAnalysis
    warnings: list[str] = field(default_factory=list)


def read_analysis(path: Path) -> tuple[DispatchAnalysis | MultiAnalysis, list[str]]:
    """The saved file at `path` (read by hotspot.capture, as every input) as the typed analysis,
    and the warnings saved with it."""
    from hotspot.capture import read_saved_json

    return analysis_of(read_saved_json(path), path)


def analysis_of(doc: JsonValue, source: Path | str) -> tuple[DispatchAnalysis | MultiAnalysis, list[str]]:
    """A parsed saved document as the typed analysis and its saved warnings."""
    if not isinstance(doc, dict):
        raise bad_file(source, "top level is not a JSON object",
                       "pass a dispatch dir, or the output of hotspot analyze --format json")
    if "schema_version" in doc or "command" in doc:
        check_saved_envelope(source, doc)
        if doc.get("ok") is False:
            raise bad_file(source, "holds an error envelope, not analysis data",
                           "re-run hotspot analyze --format json on a dispatch with executed waves")
        if doc.get("command") != SAVED_COMMAND:
            raise bad_file(source, f"field 'command' is {doc.get('command')!r}, expected "
                                   f"{SAVED_COMMAND!r}", HINT)
    else:
        doc = {"data": doc}
    body = doc.get("data")
    many = isinstance(body, dict) and isinstance(body.get("dispatches"), list)
    if not isinstance(body, dict) or not (many or isinstance(body.get("dispatch"), dict)):
        raise bad_file(source, "field 'data.dispatch' is missing: not hotspot analyze output", HINT)
    hint = "pass an unedited hotspot analyze --format json output"
    if many:
        saved_many = from_plain(_SavedMany, doc, source=source, hint=hint)
        if not saved_many.data.dispatches:
            raise bad_file(source, "field 'data.dispatches' is empty: no dispatch analysis", HINT)
        return saved_many.data, saved_many.warnings
    saved = from_plain(_SavedOne, doc, source=source, hint=hint)
    return saved.data, saved.warnings
