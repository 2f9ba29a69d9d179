"""The one serializable Result per command, and its JSON envelope.

`data` is a plain structure of dicts/lists/scalars or dataclasses (orjson serializes dataclasses in
field order). Machine output uses base units (cycles, bytes, ns) and stable ordering.
"""

from __future__ import annotations

from dataclasses import field
from typing import Union

import orjson
from hotspot.record import record

SCHEMA_VERSION = 1

# JSON as Python holds it: what orjson reads and what plain-data sections (saved results, rocprofv3
# documents, evidence maps) are made of.
JsonValue = Union[None, bool, int, float, str, list["JsonValue"], dict[str, "JsonValue"]]
JsonObject = dict[str, JsonValue]

_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
# Compact by default (an agent reads tens of KB less); `--pretty` indents by two spaces.
PRETTY = {"on": False}


def _default(obj: object) -> JsonValue:
    # Paths, sets and other simple objects become strings/lists; everything else is a bug.
    from pathlib import PurePath

    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


@record(frozen=False)
class Result:
    command: str
    data: object  # the command's typed result (dataclasses), serialized by orjson
    warnings: list[str] = field(default_factory=list)

    def envelope(self) -> JsonObject:
        return {
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "ok": True,
            "data": self.data,
            "warnings": list(self.warnings),
        }

    def to_json(self) -> bytes:
        return dumps(self.envelope())

    def plain_data(self) -> JsonValue:
        """`data` as plain dicts/lists (dataclasses converted), e.g. for diffing."""
        return orjson.loads(dumps(self.data))


def error_envelope(command: str, code: str, exit_code: int, message: str, hint: str,
                   warnings: list[str] | None = None, details: dict | None = None) -> JsonObject:
    err: JsonObject = {"code": code, "exit_code": exit_code, "message": message, "hint": hint}
    if details:
        err["details"] = details
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "ok": False,
        "error": err,
        "warnings": list(warnings or []),
    }


def dumps(obj: object, *, pretty: bool | None = None) -> bytes:
    """One JSON document; indented when `pretty` (default: the command line's `--pretty`)."""
    indent = PRETTY["on"] if pretty is None else pretty
    option = _JSON_OPTIONS | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(obj, default=_default, option=option)
