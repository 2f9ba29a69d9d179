"""Per-wave files (se<S>_sm<M>_sl<L>_wv<N>.json): streamed one at a time, never all in memory."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, TypeVar

from hotspot.capture.files import parse_json, read_capped
from hotspot.capture.layout import WaveFile
from hotspot.capture.wavecheck import WAVE_STATES, check_wave, record_ranges
from hotspot.errors import bad_file
from hotspot.result import JsonValue
from hotspot.record import record

T = TypeVar("T")
_INT64_MAX = (1 << 63) - 1  # Fold.files takes its cap as a C long long

# Decoder instruction category enum (FORMATS.md §1.2).
DECODER_CATEGORIES: tuple[str, ...] = ("none", "smem", "salu", "vmem", "flat", "lds", "valu",
                                       "jump", "next", "immed", "context", "message", "bvh")


# The decoder's s_waitcnt edges as the wave file holds them, checked by capture/wavecheck.py:
# [[waitcnt_line, [[producer_line, 0], ...]], ...]. The wave pass folds them as they are (the C
# fold reads these lists directly), so they stay the file's JSON under this name.
WaitcntEdges = list[Any]  # the decoder's [waitcnt, [[producer, ...], ...]] rows, checked where read


@record
class Wave:
    file: WaveFile
    begin: int
    end: int
    # [time, decoder_category, stall, duration, line_number] per executed instruction
    # lists as parsed, or int64 columns read as rows (hotspot/att/engine/native.py Rows)
    instructions: Sequence[list[int]]
    timeline: Sequence[list[int]]  # [state, cycles]
    waitcnt: WaitcntEdges
    cu: int | None = None  # compute unit inside the shader engine (wave.cu), when written


def read_wave(wf: WaveFile, max_bytes: int | None = None) -> Wave:
    """One wave file, its values checked as the wave pass checks them."""
    return wave_of_bytes(wf, read_capped(wf.path, max_bytes))


def read_wave_bytes(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of one wave file (the wave pass parses them itself, in its worker processes)."""
    return read_capped(path, max_bytes)


def wave_of_bytes(wf: WaveFile, data: bytes) -> Wave:
    """The Wave of a wave file's bytes (`read_wave` once read)."""
    wave = wave_from_doc(wf, parse_json(wf.path, data))
    check_wave(wf.where, wave.begin, wave.end,
               *record_ranges(wf.where, wave.instructions, wave.timeline))
    return wave


def wave_from_doc(wf: WaveFile, doc: JsonValue) -> Wave:
    """A parsed wave file as a Wave; a document of another shape is refused naming the file."""
    try:
        w: Any = doc["wave"]  # type: ignore[index, call-overload]  # any shape: a wrong one is caught below
        insts = w["instructions"]
        timeline = w.get("timeline") or []
        waitcnt = w.get("waitcnt") or []
        begin, end, cu = w["begin"], w["end"], w.get("cu")
    except (KeyError, TypeError, ValueError):
        raise bad_file(wf.path, "not a wave file: expected {'wave': {'begin', 'end', "
                       "'instructions', ...}}")
    for name, value in (("begin", begin), ("end", end), ("cu", cu)):
        if type(value) is not int and not (name == "cu" and value is None):
            raise bad_file(wf.path, f"field 'wave.{name}' is {value!r}, not an integer",
                           code="bad-value")
    if not isinstance(insts, list) or not isinstance(timeline, list) or not isinstance(waitcnt, list):
        raise bad_file(wf.path, "field 'wave.instructions', 'wave.timeline' or 'wave.waitcnt' is "
                       "not a list")
    for rec in insts[:1]:
        if not isinstance(rec, list) or len(rec) < 5:
            raise bad_file(wf.path, "field 'wave.instructions' rows must be [time, category, "
                           "stall, duration, line_number]")
    return Wave(wf, begin, end, insts, timeline, waitcnt, cu)


# Waves executing at most this many instruction records keep their per-line sums apart (by record
# count), so a wave that retired early can be taken out of the shares afterwards
# (hotspot/att/representativeness.py); bounded: at most this many lines per distinct count.
SHORT_WAVE_MAX_RECORDS = 64


@record(frozen=False)
class WaveTotals:
    """Sums over the wave files, to cross-check code.json and to report wave states."""

    waves: int = 0
    instructions: int = 0
    per_line: dict[int, list[int]] = field(default_factory=dict)  # line -> [hit, latency, stall]
    states: list[int] = field(default_factory=lambda: [0] * len(WAVE_STATES))
    cycles: int = 0  # Σ (end - begin)
    lengths: dict[int, int] = field(default_factory=dict)  # records executed by a wave -> waves
    # records executed (<= SHORT_WAVE_MAX_RECORDS) -> line -> [hit, latency, stall] of those waves
    short_lines: dict[int, dict[int, list[int]]] = field(default_factory=dict)

    def add_sequence(self, lines: Sequence[int], durations: Sequence[int], stalls: Sequence[int],
                     waves: int) -> None:
        """Count `waves` waves that executed the records `lines` (column sums `durations`,
        `stalls` over those waves) in the length histogram and, when short, the short sums."""
        n = len(lines)
        self.lengths[n] = self.lengths.get(n, 0) + waves
        if n > SHORT_WAVE_MAX_RECORDS:
            return
        acc = self.short_lines.setdefault(n, {})
        for line, d, st in zip(lines, durations, stalls):
            got = acc.get(line)
            if got is None:
                acc[line] = [waves, d, st]
            else:
                got[0] += waves
                got[1] += d
                got[2] += st

    def add(self, wave: Wave) -> None:
        self.waves += 1
        self.instructions += len(wave.instructions)
        self.cycles += wave.end - wave.begin
        self.add_records(wave.instructions)
        per_line = self.per_line
        for rec in wave.instructions:
            acc = per_line.get(rec[4])
            if acc is None:
                per_line[rec[4]] = [1, rec[3], rec[2]]
            else:
                acc[0] += 1
                acc[1] += rec[3]
                acc[2] += rec[2]
        states = self.states
        for state, cycles in wave.timeline:
            if 0 <= state < len(states):
                states[state] += cycles

    def add_records(self, ins: Sequence[list[int]]) -> None:
        """`add_sequence` for one wave's instruction records ([time, category, stall, duration,
        line])."""
        if len(ins) > SHORT_WAVE_MAX_RECORDS:
            self.lengths[len(ins)] = self.lengths.get(len(ins), 0) + 1
            return
        self.add_sequence([rec[4] for rec in ins], [rec[3] for rec in ins], [rec[2] for rec in ins], 1)

    def merge(self, other: "WaveTotals") -> None:
        self.waves += other.waves
        self.instructions += other.instructions
        self.cycles += other.cycles
        for line, (h, lat, st) in other.per_line.items():
            acc = self.per_line.setdefault(line, [0, 0, 0])
            acc[0] += h
            acc[1] += lat
            acc[2] += st
        for i, v in enumerate(other.states):
            self.states[i] += v
        for n, w in other.lengths.items():
            self.lengths[n] = self.lengths.get(n, 0) + w
        for n, lines in other.short_lines.items():
            short = self.short_lines.setdefault(n, {})
            for line, (h, lat, st) in lines.items():
                got = short.setdefault(line, [0, 0, 0])
                got[0] += h
                got[1] += lat
                got[2] += st


def read_natively(batch: "Callable[[list[str], list[int], list[int], int, int, int, bytes | None], T]",
                  paths: list[str], ses: list[int], simds: list[int], start: int, stop: int,
                  max_bytes: int | None, keep: bytes | None = None) -> "T":
    """Wave files start..stop-1 opened and read by the native fold (`Fold.files`) under
    `open_input`'s rules (no link followed, no FIFO waited on, one fstat, the cap); what it leaves
    unread comes back to be read here. The call is made from the capture layer, the one place input
    files are opened (tests/test_layering.py). `keep`: the files whose columns the caller wants
    back (Fold.files). Fold.files's cap is -1 for none: only None maps to it; a negative
    `max_bytes`, under every size, is passed as -2 (C then leaves every file here, and
    `read_capped` refuses each as over the limit); one past int64 as int64's largest."""
    cap = -1 if max_bytes is None else min(max_bytes, _INT64_MAX) if max_bytes >= 0 else -2
    return batch(paths, ses, simds, start, stop, cap, keep)
