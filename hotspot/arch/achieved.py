"""Achieved occupancy from an ATT `occupancy.json` (FORMATS.md §1.3): reader + pure computation.

Each shader engine lists wave start/end events `[time, cu, simd, slot, start(1)/end(0), kernel_id,
...]` (newer decoders append more fields; the format names none, so the first six are taken by
position and validated). A wave occupies (SE, CU, SIMD, slot) from its start to its end event.

Definition (what `achieved_occupancy` returns):
- the SIMDs counted are those (SE, CU, SIMD) that ever held a wave of the selected kernels;
- each SE's window runs from its first to its last event (shader-clock cycles; SE clocks are not
  compared with each other);
- mean = Σ over counted SIMDs of ∫ resident waves dt over its SE's window
         ÷ Σ over counted SIMDs of its SE's window length — so launch ramps, tails and idle SIMDs
         inside the window pull the mean down, as they do in reality;
- peak = the most waves resident on one SIMD at any instant (ends at a timestamp are applied before
  starts at the same timestamp, i.e. a slot freed and refilled in one cycle counts once).
A start with no end is resident until the window's end; an end with no start counts from the
window's start; a second start on a busy slot closes the first there. All three are counted in
`unmatched_*`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple
from pathlib import Path

import orjson

from hotspot.errors import bad_file

OCCUPANCY_ROW_FIELDS = ("time", "cu", "simd", "slot", "is_start", "kernel_id")
_HINT = "regenerate the ui_output directory with rocprofv3's trace decoder (format 3.0.0)"


class OccupancyEvent(NamedTuple):
    """One wave start/end. A NamedTuple, not a dataclass: a 1 GB capture has ~300k of them."""

    time: int
    cu: int
    simd: int
    slot: int
    is_start: bool
    kernel_id: int


@dataclass(frozen=True)
class OccupancyTrace:
    """The parsed occupancy.json: events per shader engine, and the kernel-id → name map."""

    events_by_se: dict[int, tuple[OccupancyEvent, ...]]
    dispatches: dict[int, str]
    version: str | None


@dataclass(frozen=True)
class AchievedOccupancy:
    mean_waves_per_simd: float | None   # None when no window has any length
    peak_waves_per_simd: int
    simds: int                          # SIMDs that ever held a wave
    waves: int                          # wave start events counted
    window_cycles: dict[int, int]       # per SE: last event − first event
    unmatched_starts: int
    unmatched_ends: int


# --- reader ----------------------------------------------------------------------------------

def _int_field(path: Path | str, se: str, index: int, row: object, pos: int) -> int:
    value = row[pos]  # type: ignore[index]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad_file(path, f"SE {se} row {index}: field {pos} ({OCCUPANCY_ROW_FIELDS[pos]}) must be a "
                             f"non-negative integer, got {value!r}", _HINT)
    return value


def _plain_events(rows: list) -> tuple[OccupancyEvent, ...] | None:
    """The events of one SE when every row is a list of >= 6 plain non-negative ints with a 0/1
    start flag, checked column-wise (a 1 GB capture has ~300k rows); None when any is not."""
    if not rows:
        return ()
    if any(type(r) is not list for r in rows) or min(map(len, rows)) < len(OCCUPANCY_ROW_FIELDS):
        return None
    cols = list(zip(*rows))[:len(OCCUPANCY_ROW_FIELDS)]
    for col in cols:
        if set(map(type, col)) != {int} or min(col) < 0:
            return None
    time, cu, simd, slot, flag, kernel = cols
    if not set(flag) <= {0, 1}:
        return None
    return tuple(map(OccupancyEvent._make, zip(time, cu, simd, slot, map(bool, flag), kernel)))


def parse_occupancy(doc: object, path: Path | str = "occupancy.json",
                    consume: bool = False) -> OccupancyTrace:
    """Validate a decoded occupancy.json document (InputError naming the file, SE, row, field).
    `consume`: drop each SE's rows from `doc` once converted (the caller's own document: a 1 GB
    capture's rows take ~40 MB, and the events as many again)."""
    if not isinstance(doc, dict):
        raise bad_file(path, "top level must be an object keyed by shader engine", _HINT)
    events: dict[int, tuple[OccupancyEvent, ...]] = {}
    for key, rows in doc.items():
        if key in ("dispatches", "version"):
            continue
        if not key.isdigit():
            raise bad_file(path, f"unexpected key {key!r} (expected shader-engine numbers, "
                                 "'dispatches', 'version')", _HINT)
        if not isinstance(rows, list):
            raise bad_file(path, f"SE {key}: expected a list of event rows", _HINT)
        fast = _plain_events(rows)
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
                                     "(a pre-3.0 decoder layout?)", _HINT)
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
        events[int(key)] = tuple(parsed)
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
    """Read and validate one occupancy.json; InputError (bad_file) on anything malformed."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise bad_file(path, f"cannot read: {err.strerror or err}", "check the path") from None
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise bad_file(path, f"not valid JSON ({err})", _HINT) from None
    return parse_occupancy(doc, path, consume=True)


# --- computation -----------------------------------------------------------------------------

_SimdKey = tuple[int, int, int]  # (se, cu, simd)
_TIME_THEN_START = itemgetter(0, 4)  # OccupancyEvent (time, is_start)


def _peak(intervals: list[tuple[int, int]]) -> int:
    # Sweep: ends (-1) sort before starts (+1) at the same time.
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    now = best = 0
    for _, delta in edges:
        now += delta
        best = max(best, now)
    return best


def achieved_occupancy(events_by_se: Mapping[int, Sequence[OccupancyEvent]],
                       kernel_ids: Iterable[int] | None = None) -> AchievedOccupancy | None:
    """Time-weighted mean and peak waves resident per SIMD (see the module docstring).

    `kernel_ids` restricts to those kernels (occupancy.json may include other dispatches); None = all.
    Returns None when no wave of the selected kernels appears.
    """
    wanted = None if kernel_ids is None else set(kernel_ids)
    intervals: dict[_SimdKey, list[tuple[int, int]]] = defaultdict(list)
    windows: dict[int, int] = {}
    unmatched_starts = unmatched_ends = 0
    for se in sorted(events_by_se):
        rows = [e for e in events_by_se[se] if wanted is None or e.kernel_id in wanted]
        if not rows:
            continue
        rows.sort(key=_TIME_THEN_START)  # ends first at equal time; stable otherwise
        begin, end = rows[0].time, rows[-1].time
        windows[se] = end - begin
        open_slots: dict[tuple[int, int, int], int] = {}  # (cu, simd, slot) -> start time
        for time, cu, simd, slot_n, is_start, _kernel in rows:
            slot = (cu, simd, slot_n)
            if is_start:
                if slot in open_slots:  # the decoder lost this slot's end: close it here
                    unmatched_starts += 1
                    intervals[(se, cu, simd)].append((open_slots[slot], time))
                open_slots[slot] = time
            elif slot in open_slots:
                intervals[(se, cu, simd)].append((open_slots.pop(slot), time))
            else:  # resident since before the window
                unmatched_ends += 1
                intervals[(se, cu, simd)].append((begin, time))
        for (cu, simd, _), start in open_slots.items():  # still resident at the window's end
            unmatched_starts += 1
            intervals[(se, cu, simd)].append((start, end))
    if not intervals:
        return None
    busy = sum(e - s for spans in intervals.values() for s, e in spans)
    total_window = sum(windows[se] for se, _, _ in intervals)
    mean = busy / total_window if total_window > 0 else None
    peak = max(_peak(spans) for spans in intervals.values())
    waves = sum(len(spans) for spans in intervals.values())
    return AchievedOccupancy(mean, peak, len(intervals), waves, windows, unmatched_starts, unmatched_ends)
