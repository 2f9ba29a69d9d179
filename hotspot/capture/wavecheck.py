"""Values no decoder writes in a wave file, refused before the wave is folded.

One check over the ranges of a wave's columns, called by both paths of the wave pass
(hotspot/att/engine/wavepass.py) and by `read_wave`: the native scanner's int64 columns (ranges
from the C helper `col_range` in _wavescan.c) and the pure-Python path's parsed rows (ranges
computed here). The same wave gets the same message either way. Any rewrite of the wave pass (e.g.
one fused native call) must keep calling `check_wave` with the ranges of the columns it read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from hotspot.errors import InputError, bad_file

# Decoder timeline state enum (FORMATS.md §1.2); capture/waves.py re-exports it.
WAVE_STATES: tuple[str, ...] = ("empty", "idle", "exec", "wait", "stall")
# The native scanner's bound (VALUE_LIMIT in _wavescan.c), and code.json's LineNumber bound:
# line ids, and per-instruction stall/duration and timeline segments in cycles (2**40 cycles is
# minutes of GPU time, longer than any trace buffer holds).
LINE_LIMIT = VALUE_LIMIT = 1 << 40
# (min, max) of one column; None when the wave has no rows
Range = tuple[int, int] | None
# Instruction columns in the order of a record [time, category, stall, duration, line].
INSTRUCTION_COLUMNS = ("time", "category", "stall", "duration", "line")

_HINT = "the file was edited or damaged; re-run the decoder on the .att files"


def check_wave(path: str, begin: int, end: int, instructions: Sequence[Range],
               states: Range, cycles: Range) -> None:
    """Refuse (InputError naming the file and field) a wave whose values no decoder writes:
    begin after end, negative instruction fields or timeline cycles, a line id, stall, duration
    or segment of 2**40 or more, a timeline state outside the decoder's enum; timestamps (begin,
    end, instruction times) outside 0..2**40 (the native scanner's bound: both paths agree)."""
    for name, value in (("begin", begin), ("end", end)):
        if not 0 <= value < VALUE_LIMIT:
            raise _bad(path, f"field 'wave.{name}' is {value}, outside the range a decoder writes "
                       f"(0 to {VALUE_LIMIT - 1})")
    if begin > end:
        raise _bad(path, f"field 'wave.begin' ({begin}) is after 'wave.end' ({end})")
    for name, rng in zip(INSTRUCTION_COLUMNS, instructions):
        if rng is not None and rng[0] < 0:
            raise _bad(path, f"field 'wave.instructions' has a negative {name} ({rng[0]})")
    lines = instructions[4] if len(instructions) > 4 else None
    if lines is not None and lines[1] >= LINE_LIMIT:
        raise _bad(path, f"field 'wave.instructions' names line {lines[1]}, beyond any code.json "
                   f"line id (< {LINE_LIMIT})")
    times = instructions[0] if instructions else None
    if times is not None and times[1] >= VALUE_LIMIT:
        raise _bad(path, f"field 'wave.instructions' has a time of {times[1]}, beyond what a "
                   f"decoder writes (< {VALUE_LIMIT})")
    for name, rng in zip(INSTRUCTION_COLUMNS[2:4], instructions[2:4]):
        if rng is not None and rng[1] >= VALUE_LIMIT:
            raise _bad(path, f"field 'wave.instructions' has a {name} of {rng[1]} cycles, beyond "
                       f"what a decoder writes (< {VALUE_LIMIT})")
    if states is not None and (states[0] < 0 or states[1] >= len(WAVE_STATES)):
        bad = states[0] if states[0] < 0 else states[1]
        raise _bad(path, f"field 'wave.timeline' has state {bad}, not one of the decoder's states "
                   f"0..{len(WAVE_STATES) - 1} ({', '.join(WAVE_STATES)})")
    if cycles is not None and cycles[0] < 0:
        raise _bad(path, f"field 'wave.timeline' has a negative cycle count ({cycles[0]})")
    if cycles is not None and cycles[1] >= VALUE_LIMIT:
        raise _bad(path, f"field 'wave.timeline' has a segment of {cycles[1]} cycles, beyond what "
                   f"a decoder writes (< {VALUE_LIMIT})")


def scanned_ranges(mod: ModuleType, wave: Any) -> tuple[list[Range], Range, Range]:  # a ScannedWave (C)
    """Column ranges of a wave read by the native scanner (a ScannedWave)."""
    rng = mod.col_range
    return ([rng(wave.times), rng(wave.cats), rng(wave.stalls), rng(wave.durations),
             rng(wave.lines)], rng(wave.states), rng(wave.cycles))


def record_ranges(path: str, instructions: Sequence[Any], timeline: Sequence[Any]
                  ) -> tuple[list[Range], Range, Range]:
    """Column ranges of a parsed wave (lists of rows); a row of the wrong shape or a value that is
    not an integer (a float, even 7.0: no decoder writes one, and the native scanner refuses it
    too) is refused naming the field."""
    cols: list[Range] = [None] * len(INSTRUCTION_COLUMNS)
    try:
        if instructions:
            for i in range(len(INSTRUCTION_COLUMNS)):
                col = [rec[i] for rec in instructions]
                _integers(path, "wave.instructions", INSTRUCTION_COLUMNS[i], col)
                cols[i] = (min(col), max(col))
    except (TypeError, IndexError, KeyError):
        raise _bad(path, "field 'wave.instructions' rows must be [time, category, stall, "
                   "duration, line_number] numbers") from None
    states = cycles = None
    try:
        if timeline:
            st = [seg[0] for seg in timeline]
            cy = [seg[1] for seg in timeline]
            _integers(path, "wave.timeline", "state", st)
            _integers(path, "wave.timeline", "cycles", cy)
            states, cycles = (min(st), max(st)), (min(cy), max(cy))
    except (TypeError, IndexError, KeyError):
        raise _bad(path, "field 'wave.timeline' rows must be [state, cycles] numbers") from None
    return cols, states, cycles


def _integers(path: str, field: str, column: str, values: list[Any]) -> None:
    """Refuse a column holding anything but JSON integers (bool is not one)."""
    for v in values:
        if type(v) is not int:
            if isinstance(v, (int, float)):
                raise _bad(path, f"field '{field}' has a {column} of {v!r}, not an integer")
            raise TypeError(v)  # the caller's "rows must be ... numbers" message


def _bad(path: str, problem: str) -> InputError:
    return bad_file(Path(path), problem, _HINT, code="bad-value")
