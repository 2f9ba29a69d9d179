"""A tiny hand-written dispatch-dir builder for the wave tests (and tests of the builder itself).

`build_dispatch(dir, program, waves)` writes code.json, filenames.json and one wave file per wave.
code.json Hit/Latency/Stall/Idle are summed from the wave records (the invariant real captures
satisfy), so every number in a test comes from the schedule written in that test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

# decoder categories (FORMATS.md §1.2)
SMEM, SALU, VMEM, FLAT, LDS, VALU, JUMP, NEXT, IMMED, MESSAGE = 1, 2, 3, 4, 5, 6, 7, 8, 9, 11
IDLE, EXEC, WAIT, STALL = 1, 2, 3, 4


@dataclass
class W:
    """One wave: records [time, category, stall, duration, line] and an optional edge list."""

    records: list[list[int]]
    begin: int
    se: int = 0
    simd: int = 0
    slot: int = 0
    n: int = 0
    cu: int = 1
    edges: list | None = None
    timeline: list[list[int]] | None = None
    end: int | None = None


@dataclass
class Schedule:
    """Builds records back to back: each op starts when the previous one ends (+ an idle gap)."""

    begin: int
    records: list[list[int]] = field(default_factory=list)
    t: int | None = None

    def op(self, line: int, cat: int, stall: int = 0, issue: int = 4, gap: int = 0) -> "Schedule":
        t = (self.begin if self.t is None else self.t) + gap
        self.records.append([t, cat, stall, stall + issue, line])
        self.t = t + stall + issue
        return self


def timeline_of(w: W) -> list[list[int]]:
    """Idle gaps, then WAIT (IMMED) or STALL (others) for the stall, then EXEC for the issue."""
    out: list[list[int]] = []
    t = w.begin
    for time, cat, stall, duration, _line in w.records:
        if time > t:
            out.append([IDLE, time - t])
        if stall:
            out.append([WAIT if cat == IMMED else STALL, stall])
        if duration - stall:
            out.append([EXEC, duration - stall])
        t = max(t, time + duration)
    return out


def build_dispatch(d: Path, program: list[tuple[str, str]], waves: list[W],
                   kernel: str = "synthetic_kernel") -> Path:
    """program: [(isa, source)] for rows 1..n (row 0 is the kernel pseudo row)."""
    d.mkdir(parents=True, exist_ok=True)
    stats = {n: [0, 0, 0, 0] for n in range(1, len(program) + 1)}
    listing: dict = {}
    for w in waves:
        prev_end = w.begin
        for time, _cat, stall, duration, line in w.records:
            s = stats[line]
            s[0] += 1
            s[1] += duration
            s[2] += stall
            s[3] += max(0, time - prev_end)
            prev_end = time + duration
        end = w.end if w.end is not None else prev_end
        name = f"se{w.se}_sm{w.simd}_sl{w.slot}_wv{w.n}.json"
        wave = {"cu": w.cu, "simd": w.simd, "slot": w.slot, "id": w.n, "begin": w.begin, "end": end,
                "instructions": w.records, "timeline": w.timeline or timeline_of(w),
                "waitcnt": w.edges or []}
        (d / name).write_text(json.dumps({"name": f"SE{w.se}", "duration": end - w.begin,
                                          "num_insts": len(w.records), "wave": wave}))
        listing.setdefault(str(w.se), {}).setdefault(str(w.simd), {}).setdefault(
            str(w.slot), {})[str(w.n)] = [name, w.begin, end]
    code = [[f"; {kernel}", 0, 0, "", 1, 0, 0, 0, 0, 0]]
    for n, (isa, src) in enumerate(program, start=1):
        hit, lat, stall, idle = stats[n]
        code.append([isa, 0, n, src, 1, 0x1000 + 4 * n, hit, lat, stall, idle])
    (d / "code.json").write_text(json.dumps({
        "code": code, "header": "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle",
        "version": "3.0.0"}))
    (d / "filenames.json").write_text(json.dumps({
        "gfxip": 9, "version": "3.0.0", "global_begin_time": 0, "wave_filenames": listing}))
    return d


# --- tests of the builder itself --------------------------------------------------------------


def test_schedule_places_ops_back_to_back():
    s = Schedule(100).op(1, SALU).op(2, IMMED, stall=10).op(3, VALU, gap=6)
    assert s.records == [[100, SALU, 0, 4, 1], [104, IMMED, 10, 14, 2], [124, VALU, 0, 4, 3]]


def test_code_json_sums_the_wave_records(tmp_path):
    s = Schedule(100).op(1, SALU, gap=4).op(1, SALU, stall=2)
    d = build_dispatch(tmp_path / "d", [("s_mov_b32 s0, 0", "k.py:1")], [W(s.records, 100)])
    row = json.loads((d / "code.json").read_text())["code"][1]
    assert row[6:10] == [2, 4 + 6, 2, 4]
    wave = json.loads((d / "se0_sm0_sl0_wv0.json").read_text())["wave"]
    assert sum(c for _, c in wave["timeline"]) == wave["end"] - wave["begin"] == 14
