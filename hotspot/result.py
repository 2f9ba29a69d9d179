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
        return plain(self.data)


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


# `plain` converts a list of more than PLAIN_LONG items (a dispatch's instructions, source lines,
# listing) PLAIN_BATCH items at a time: orjson holds ~13 bytes of parse state per byte of JSON, so
# the 400,000 instructions of a 30 MB code.json round-tripped whole took ~1 GB for a moment.
# Shorter lists (real kernels: a few thousand instructions) take one round trip, which is faster.
PLAIN_LONG = 4096
PLAIN_BATCH = 512
# Lists of at most this many items are looked into for long lists (the dispatches of `analyze
# --all`); the items of longer ones (rows of a table) are small.
PLAIN_FEW = 16
# How deep `plain` looks for such a list before round-tripping a value whole (a dispatch's
# tables sit at depth 1, those of `analyze --all` at depth 3).
PLAIN_DEPTH = 4


def plain(obj: object) -> JsonValue:
    """`orjson.loads(dumps(obj))`, the plain JSON value of `obj`, without its whole JSON text and
    parse state at once: a value holding a long list is converted entry by entry, the long list
    PLAIN_BATCH items at a time (JSON is compositional, so the value is the same); anything else
    in one round trip. orjson writes a dataclass as its instance attributes in order, leaving out
    `_`-prefixed ones."""
    if not _holds_long_list(obj, PLAIN_DEPTH):
        return orjson.loads(dumps(obj, pretty=False))
    if isinstance(obj, (list, tuple)):
        if len(obj) <= PLAIN_LONG:
            return [plain(x) for x in obj]
        out: list[JsonValue] = []
        for i in range(0, len(obj), PLAIN_BATCH):
            out.extend(_plain_batch(obj[i:i + PLAIN_BATCH]))
        return out
    items = obj.items() if type(obj) is dict else vars(obj).items()
    return {k: plain(v) for k, v in items if not k.startswith("_") or type(obj) is dict}


def _plain_batch(items: list | tuple) -> list[JsonValue]:
    """The round trip of some rows of a long list. Rows that are records of JSON scalars (the
    instructions of a dispatch) become dicts holding the very same values, which the round trip
    would give as equal copies: a plain instruction is then ~450 bytes instead of ~1 KB."""
    text = dumps(items, pretty=False)  # refuses what orjson cannot write, as the round trip does
    rows = []
    for x in items:
        row = _scalar_record(x)
        if row is None:
            return orjson.loads(text)
        rows.append(row)
    return rows


def _scalar_record(obj: object) -> JsonObject | None:
    """`obj` as orjson writes and reads it back when it is a dataclass whose attributes are str,
    int, bool, None or float (a NaN or an infinity reads back as None); else None."""
    if not hasattr(type(obj), "__dataclass_fields__") or not hasattr(obj, "__dict__"):
        return None
    out: JsonObject = {}
    for k, v in vars(obj).items():
        if k.startswith("_"):
            continue
        kind = type(v)
        if kind is float:
            if v - v != 0.0:  # nan or +-inf: orjson writes null
                v = None
        elif not (kind is str or kind is int or kind is bool or v is None):
            return None
        out[k] = v
    return out


def _holds_long_list(obj: object, depth: int) -> bool:
    """`obj` is or holds (within `depth` levels of lists, string-keyed dicts and dataclasses) a
    list longer than PLAIN_LONG."""
    if isinstance(obj, (list, tuple)):
        if len(obj) > PLAIN_LONG:
            return True
        # the items of a list of rows are small; a few large ones (`analyze --all`) are looked in
        return depth > 0 and len(obj) <= PLAIN_FEW and any(
            _holds_long_list(x, depth - 1) for x in obj if not isinstance(x, (str, int, float)))
    if depth <= 0:
        return False
    if type(obj) is dict:
        if not all(type(k) is str for k in obj):
            return False  # round-tripped whole: keys written by orjson's OPT_NON_STR_KEYS
        values = obj.values()
    elif hasattr(type(obj), "__dataclass_fields__") and hasattr(obj, "__dict__"):
        values = (v for k, v in vars(obj).items() if not k.startswith("_"))
    else:
        return False
    return any(_holds_long_list(v, depth - 1) for v in values
               if not isinstance(v, (str, int, float)) and v is not None)


def dumps(obj: object, *, pretty: bool | None = None) -> bytes:
    """One JSON document; indented when `pretty` (default: the command line's `--pretty`)."""
    indent = PRETTY["on"] if pretty is None else pretty
    option = _JSON_OPTIONS | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(obj, default=_default, option=option)


# Sections of a saved analysis (`hotspot analyze --format json`) read back by diff and report:
# the object sections and the lists of objects, checked by shape before any is used.
_SAVED_OBJECTS = ("dispatch", "totals")
_SAVED_LISTS = ("stall_by_category", "source_lines", "instructions", "blamed_lines", "findings",
                "files", "waits", "loops", "barriers", "instruction_mix")


def check_saved_envelope(path: object, doc: JsonObject) -> None:
    """A saved envelope from a newer hotspot is refused by name (its fields may mean other
    things); this one reads schema_version SCHEMA_VERSION."""
    from hotspot.errors import InputError

    version = doc.get("schema_version")
    if version is not None and (isinstance(version, bool) or version != SCHEMA_VERSION):
        raise InputError(f"{path}: field 'schema_version' is {str(version)[:40]!r}, this hotspot "
                         f"reads {SCHEMA_VERSION}",
                         "re-run hotspot analyze --format json with this version of hotspot",
                         code="unsupported-schema")


def check_saved_analysis(path: object, where: str, a: JsonValue) -> None:
    """The sections of one saved dispatch analysis have the shapes analyze writes: objects, lists
    of objects, numeric totals. Anything else is bad input naming the field."""
    from hotspot.errors import InputError

    def bad(field_name: str, expected: str) -> InputError:
        return InputError(f"{path}: field '{where}.{field_name}' is not {expected}",
                          "pass an unedited hotspot analyze --format json output",
                          code="bad-input")

    if not isinstance(a, dict):
        raise InputError(f"{path}: field '{where}' is not an object",
                         "pass an unedited hotspot analyze --format json output")
    for name in _SAVED_OBJECTS:
        if name in a and not isinstance(a[name], dict):
            raise bad(name, "an object")
    for name in _SAVED_LISTS:
        value = a.get(name)
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(v, dict) for v in value)):
            raise bad(name, "a list of objects")
    totals = a.get("totals") or {}
    for name, value in totals.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise bad(f"totals.{name}", "a number")
