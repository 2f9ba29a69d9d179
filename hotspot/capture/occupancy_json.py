"""Reader for an ATT `occupancy.json` (FORMATS.md §1.3): wave start/end events per shader engine.

Each shader engine lists `[time, cu, simd, slot, start(1)/end(0), kernel_id, ...]` (newer decoders
append more fields; the format names none, so the first six are taken by position and validated).
The computation over the events (achieved occupancy) is hotspot/arch/achieved.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from hotspot.arch.achieved import EventColumns, OccupancyEvent, events_to_columns
from hotspot.capture.files import read_capped
from hotspot.capture.session import memoized
from hotspot.errors import bad_file
from hotspot.record import record

OCCUPANCY_ROW_FIELDS = ("time", "cu", "simd", "slot", "is_start", "kernel_id")
_HINT = "regenerate the ui_output directory with rocprofv3's trace decoder (format 3.0.0)"


@record
class OccupancyTrace:
    """The parsed occupancy.json: events per shader engine as columns (hotspot/arch/achieved.py
    `EventColumns`), and the kernel-id → name map."""

    columns_by_se: dict[int, EventColumns]
    dispatches: dict[int, str]
    version: str | None

    @property
    def events_by_se(self) -> dict[int, tuple[OccupancyEvent, ...]]:
        """The events as OccupancyEvent tuples (built on demand)."""
        return {se: tuple(map(OccupancyEvent._make, zip(*cols[:4], map(bool, cols[4]), cols[5])))
                for se, cols in self.columns_by_se.items()}


def _int_field(path: Path | str, se: str, index: int, row: object, pos: int) -> int:
    value = row[pos]  # type: ignore[index]  # a parsed row: a wrong shape raises, caught by the caller
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad_file(path, f"SE {se} row {index}: field {pos} ({OCCUPANCY_ROW_FIELDS[pos]}) must be a "
                             f"non-negative integer, got {value!r}", _HINT)
    return value


def _plain_events(rows: list[Any], decoded: bool) -> EventColumns | None:
    """The event columns of one SE when every row is a list of >= 6 plain non-negative ints with
    a 0/1 start flag, checked column-wise (a 1 GB capture has ~300k rows); None when any is not.
    `decoded`: the rows come from a JSON decoder, so hold nothing but JSON's own types (the digits
    shortcut is then exact; given other Python objects an Enum would pass it)."""
    if not rows:
        return ((), (), (), (), (), ())
    if set(map(type, rows)) != {list}:
        return None
    cols = list(zip(*rows))  # as many columns as the shortest row has fields
    if len(cols) < len(OCCUPANCY_ROW_FIELDS):
        return None
    del cols[len(OCCUPANCY_ROW_FIELDS):]
    if not (decoded and _digits_only(cols)):
        for col in cols:
            if set(map(type, col)) != {int} or min(col) < 0:
                return None
    if max(cols[4]) > 1:  # non-negative ints: 0 or 1
        return None
    return tuple(cols)  # type: ignore[return-value]  # the six columns, each checked above


# What orjson writes for columns of non-negative ints once their digits and commas are taken out.
_DIGITS_AND_COMMAS = b"0123456789,"


def _digits_only(cols: list[tuple[Any, ...]]) -> bool:
    """True when orjson writes every value of `cols` (decoded JSON) with digits alone: each is then
    a non-negative int (a float has a point or an exponent, a bool, None or a string letters or
    quotes, a negative int its sign, a list or dict brackets); ~6x faster than checking each
    column's types and minimum. False (check them one by one) for anything else, such as ints
    past 64 bits, which orjson does not write."""
    try:
        text = orjson.dumps(cols, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return False
    return text.translate(None, _DIGITS_AND_COMMAS) == b"[" + b"[]" * len(cols) + b"]"


def parse_occupancy(doc: object, path: Path | str = "occupancy.json",
                    consume: bool = False, decoded: bool = False) -> OccupancyTrace:
    """Validate a decoded occupancy.json document (InputError naming the file, SE, row, field).
    `consume`: drop each SE's rows from `doc` once converted (the caller's own document: a 1 GB
    capture's rows take ~40 MB, and the events as many again). `decoded`: `doc` is a JSON
    decoder's output (nothing but dict, list, str, int, float, bool, None)."""
    if not isinstance(doc, dict):
        raise bad_file(path, "top level must be an object keyed by shader engine", _HINT)
    events: dict[int, EventColumns] = {}
    for key, rows in doc.items():
        if key in ("dispatches", "version"):
            continue
        if not key.isdigit():
            raise bad_file(path, f"unexpected key {key!r} (expected shader-engine numbers, "
                                 "'dispatches', 'version')", _HINT)
        if not isinstance(rows, list):
            raise bad_file(path, f"SE {key}: expected a list of event rows", _HINT)
        fast = _plain_events(rows, decoded)
        if fast is not None:
            events[int(key)] = fast
            if consume:
                rows.clear()
            continue
        parsed = []  # something is off: find and name the first bad row
        for i, row in enumerate(rows):
            if not isinstance(row, list):
                raise bad_file(path, f"SE {key} row {i}: expected a list of at least "
                                     f"{len(OCCUPANCY_ROW_FIELDS)} integers, got {type(row).__name__} "
                                     + ("(each event packed into one integer: an early format-3.0.0 "
                                        "or pre-3.0 decoder layout)" if isinstance(row, int)
                                        else "(a pre-3.0 decoder layout?)"), _HINT)
            if len(row) < len(OCCUPANCY_ROW_FIELDS):
                raise bad_file(path, f"SE {key} row {i}: {len(row)} fields, need at least "
                                     f"{len(OCCUPANCY_ROW_FIELDS)} ({', '.join(OCCUPANCY_ROW_FIELDS)})", _HINT)
            time, cu, simd, slot, flag, kernel = row[:6]
            # Fast path: six non-negative plain ints (bool is a subclass of int, hence `type is`).
            if not (type(time) is int and type(cu) is int and type(simd) is int  # noqa: E721
                    and type(slot) is int and type(flag) is int and type(kernel) is int  # noqa: E721
                    and min(time, cu, simd, slot, kernel) >= 0):
                for p in range(6):
                    _int_field(path, key, i, row, p)  # raises naming the field
            if flag not in (0, 1):
                raise bad_file(path, f"SE {key} row {i}: field 4 (is_start) must be 0 or 1, got {flag}", _HINT)
            parsed.append(OccupancyEvent(time, cu, simd, slot, flag == 1, kernel))
        events[int(key)] = events_to_columns(parsed)
    dispatches_raw = doc.get("dispatches", {})
    if not isinstance(dispatches_raw, dict):
        raise bad_file(path, "'dispatches' must be an object of kernel id → name", _HINT)
    dispatches: dict[int, str] = {}
    for kid, name in dispatches_raw.items():
        if not str(kid).isdigit() or not isinstance(name, str):
            raise bad_file(path, f"'dispatches' entry {kid!r}: expected a numeric id and a name", _HINT)
        dispatches[int(kid)] = name
    version = doc.get("version")
    return OccupancyTrace(events, dispatches, version if isinstance(version, str) else None)


def read_occupancy_json(path: Path | str) -> OccupancyTrace:
    """The parsed occupancy.json (read once per capture session)."""
    return memoized("occupancy.json", str(path), lambda: _read_occupancy_json(path))


def _read_occupancy_json(path: Path | str) -> OccupancyTrace:
    """Read and validate one occupancy.json; InputError (bad_file) on anything malformed."""
    raw = read_capped(path)  # an unreadable file is an InputError naming it
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise bad_file(path, f"not valid JSON ({err})", _HINT) from None
    return parse_occupancy(doc, path, consume=True, decoded=True)


# --- computation -----------------------------------------------------------------------------
