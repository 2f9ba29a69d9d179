"""The one serializable Result per command, and its JSON envelope.

`data` is a plain structure of dicts/lists/scalars or dataclasses (orjson serializes dataclasses in
field order). Machine output uses base units (cycles, bytes, ns) and stable ordering.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Generic, TypeVar

import orjson
from hotspot.jsontypes import JsonObject as JsonObject, JsonValue as JsonValue
from hotspot.record import record

SCHEMA_VERSION = 1
# Commands whose `data` changed meaning since SCHEMA_VERSION (docs/json-schema.md): their envelopes
# carry their own version. diff 2: rows are tested on cycles per execution with an interval and a
# q-value (rows[].threshold and noise.relative_threshold removed), `code` added. diff 3: every row
# per traced wave, the headline time per wave (latency), rows tested on cycles per wave.
COMMAND_SCHEMA_VERSIONS = {"diff": 3}


def schema_version_of(command: str) -> int:
    return COMMAND_SCHEMA_VERSIONS.get(command, SCHEMA_VERSION)


_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
# Compact by default (an agent reads tens of KB less); `--pretty` indents by two spaces.
PRETTY = {"on": False}


def _default(obj: object) -> object:
    # Paths, sets and other simple objects become strings/lists; everything else is a bug.
    from pathlib import PurePath

    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    json_value = getattr(obj, "json_value", None)
    if callable(json_value):  # a value written as another (hotspot/plan/api.py PlannedDispatch)
        return json_value()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


# The type of a Result's data: each command's typed result (`Result[DispatchAnalysis]`, ...).
T = TypeVar("T", covariant=True)  # a Result[PlanData] is a Result[object]


@record(frozen=False)
class Result(Generic[T]):
    command: str
    data: T  # the command's typed result (dataclasses), serialized by orjson
    warnings: list[str] = field(default_factory=list)
    # The command's exit code (docs/exit-codes.md), decided by the use case with its data: the one
    # value every format exits with (hotspot/commands/_run.py returns it; views never decide it).
    # A field, so every copy of the Result (the text views' escaping) keeps it.
    exit_code: int = 0

    def envelope(self) -> dict[str, object]:
        """The JSON document: plain values around `data`, which orjson writes as it is."""
        env: dict[str, object] = {
            "schema_version": schema_version_of(self.command),
            "command": self.command,
            "ok": self.exit_code == 0,
            "data": self.data,
            "warnings": list(self.warnings),
        }
        if self.exit_code:  # a result that is not a success (nothing to do, not comparable...)
            env["exit_code"] = self.exit_code
        return env

    def to_json(self) -> bytes:
        return dumps(self.envelope())

    def plain_data(self) -> JsonValue:
        """`data` as plain dicts/lists (dataclasses converted), e.g. for diffing."""
        return plain(self.data)


def error_envelope(command: str, code: str, exit_code: int, message: str, hint: str,
                   warnings: list[str] | None = None, details: JsonObject | None = None) -> JsonObject:
    err: JsonObject = {"code": code, "exit_code": exit_code, "message": message, "hint": hint}
    if details:
        err["details"] = details
    return {
        "schema_version": schema_version_of(command),
        "command": command,
        "ok": False,
        "error": err,
        "warnings": list(warnings or []),
    }


# `plain` round-trips at most this much JSON text at once: orjson holds ~13 bytes of parse state
# per byte it reads, so the instructions of a 30 MB code.json (~85 MB of JSON) round-tripped whole
# took ~1 GB for a moment. Larger values are converted part by part, lists PLAIN_BATCH items at a
# time. A real kernel's analysis (a few thousand instructions) is one round trip, as before.
PLAIN_BYTES = 1 << 20
PLAIN_BATCH = 512


def plain(obj: object) -> JsonValue:
    """`orjson.loads(dumps(obj))`, the plain JSON value of `obj`, without holding the parse state
    of all of its JSON at once: a value whose JSON is longer than PLAIN_BYTES is converted entry
    by entry (JSON is compositional, so the value is the same). orjson writes a dataclass as its
    instance attributes in order, leaving out `_`-prefixed ones."""
    json_value = getattr(obj, "json_value", None)
    if callable(json_value) and not isinstance(obj, type):  # written as another value: convert that
        obj = json_value()
    text = dumps(obj, pretty=False)  # raises for what orjson cannot write, as the round trip does
    if len(text) <= PLAIN_BYTES or not _divisible(obj):
        value: JsonValue = orjson.loads(text)
        return value
    del text
    if isinstance(obj, (list, tuple)):
        if len(obj) <= PLAIN_BATCH:
            return [plain(x) for x in obj]
        out: list[JsonValue] = []
        for i in range(0, len(obj), PLAIN_BATCH):
            batch = obj[i:i + PLAIN_BATCH]
            rows = _scalar_records(batch)
            out.extend(rows if rows is not None else _plain_list(batch))
        return out
    if type(obj) is dict:
        return {k: plain(v) for k, v in obj.items()}
    return {k: plain(v) for k, v in vars(obj).items() if not k.startswith("_")}


def _plain_list(items: list[Any] | tuple[Any, ...]) -> list[JsonValue]:
    value = plain(items)
    assert isinstance(value, list)  # a list or tuple is written as a JSON array
    return value


def _divisible(obj: object) -> bool:
    """A value `plain` converts part by part: a list, a dict with string keys (other keys are
    written by orjson's OPT_NON_STR_KEYS rules) or a dataclass written from its attributes."""
    if isinstance(obj, (list, tuple)):
        return len(obj) > 0
    if type(obj) is dict:
        return all(type(k) is str for k in obj)
    return _writes_attributes(obj)


def _writes_attributes(obj: object) -> bool:
    return hasattr(type(obj), "__dataclass_fields__") and hasattr(obj, "__dict__") \
        and not isinstance(obj, type)


def _scalar_records(items: list[Any] | tuple[Any, ...]) -> list[JsonObject] | None:
    """Rows that are all records of JSON scalars (the instructions of a dispatch) as dicts holding
    the very same values, which the round trip would give as equal copies: ~450 bytes per
    instruction instead of ~1 KB. None when one is not. (Only for values orjson has written.)"""
    rows = []
    for x in items:
        row = _scalar_record(x)
        if row is None:
            return None
        rows.append(row)
    return rows


def _scalar_record(obj: object) -> JsonObject | None:
    """`obj` as orjson writes and reads it back when it is a dataclass whose attributes are str,
    int, bool, None or float (a NaN or an infinity reads back as None); else None."""
    if not _writes_attributes(obj):
        return None
    out: JsonObject = {}
    for k, v in vars(obj).items():
        if k.startswith("_"):
            continue
        kind = type(v)
        if kind is float:
            if v - v != 0.0:  # nan or +-inf: orjson writes null
                v = None
        elif isinstance(v, str) and kind is not str:  # a str enum or a typed string (Category, SourceRef)
            v = str.__str__(v)  # what the round trip gives: its text
        elif not (kind is str or kind is int or kind is bool or v is None):
            return None
        out[k] = v
    return out


def dumps(obj: object, *, pretty: bool | None = None) -> bytes:
    """One JSON document; indented when `pretty` (default: the command line's `--pretty`)."""
    indent = PRETTY["on"] if pretty is None else pretty
    option = _JSON_OPTIONS | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(obj, default=_default, option=option)
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
    # A name that is not UTF-8 (a path from the file system, Python holds its bytes as lone
    # surrogates) cannot be a JSON string: its bytes are written escaped (b'\xff' as "\\xff"),
    # as the text output shows them.
    return orjson.dumps(_utf8_safe(obj), default=_default, option=option)


def _utf8_safe(obj: object) -> object:
    """`obj` as plain JSON data with every string made valid UTF-8 (undecodable bytes escaped)."""
    import dataclasses
    from pathlib import PurePath

    if isinstance(obj, PurePath):
        obj = str(obj)
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
            return obj
        except UnicodeEncodeError:
            try:  # bytes the file system gave (lone surrogates U+DC80..U+DCFF)
                return obj.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            except UnicodeEncodeError:  # any other lone surrogate: written as its escape
                return obj.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(obj, dict):
        return {_utf8_safe(k): _utf8_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_utf8_safe(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(_utf8_safe(v) for v in obj)  # type: ignore[type-var]  # strings or numbers, as JSON lists them
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _utf8_safe(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not f.name.startswith("_")}
    if callable(getattr(obj, "json_value", None)):
        return _utf8_safe(getattr(obj, "json_value")())  # noqa: B009 - checked just above
    return obj


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
