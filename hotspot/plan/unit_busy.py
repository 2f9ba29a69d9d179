"""How busy each SIMD's matrix core and VALU are, from the wave files alone (issue 33, point 2).

The trace says, per wave, which instruction issued when. A SIMD's MFMA unit is busy passes x 4
cycles per MFMA it issues (HARDWARE.md §4); its VALU for the issue cycles of the other VALU
instructions (each row's mean issue cycles, code.json latency - stall over its executions). VMEM
bytes requested per cycle per CU (ISA width × wave size per load/store) say how hard the traced CU
pulls on memory where the widths are known. Over the time the SIMD has waves of the kernel (the union of its waves'
[begin, end]), or the time its waves spend in one loop (per wave, first to last instruction of the
loop's rows), that is the unit's issue share. No launch row or kernel duration is needed.

A fix that does not remove matrix-core (or VALU) work cannot make that loop faster than its unit
allows: `1 - busy` of the busiest unit is the ceiling of every estimate on it (engine), and a loop
whose MFMA unit is >= 85% busy is at the matrix core (`matrix-core-bound`). The saturation rules
read the same numbers (`trace_ceilings`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from hotspot.arch.classify import Category
from hotspot.arch.mfma import CYCLES_PER_PASS, mfma_passes
from hotspot.arch.targets import TARGETS
from hotspot.att.model import DispatchAnalysis
from hotspot.plan.access_rules import bytes_per_lane, store_bytes_per_lane
from hotspot.record import record

WAVE_FILE_RE = re.compile(r"^se(\d+)_sm(\d+)_sl\d+_wv\d+\.json$")
# Targets whose pass counts agree for the opcodes both have (HARDWARE.md §4: "Old gfx942 shapes
# keep their pass counts"): with the arch unknown among them, a count they share is still exact.
SHARED_PASS_TARGETS: tuple[str, ...] = ("gfx942", "gfx950")
# Every CDNA target runs wave64 (HARDWARE.md §1): the width a VMEM row moves per lane × 64.
CDNA_WAVE_SIZE = 64
MATRIX_CORE = "matrix-core"
VALU_UNIT = "valu"
ROUND = 4


@record
class SimdBusy:
    se: int
    cu: int
    simd: int
    waves: int
    span_cycles: int     # union of the waves' time on this SIMD (kernel) or in the loop
    mfma_cycles: int     # Σ passes × 4 of the MFMAs issued
    valu_cycles: int     # Σ issue cycles of the other VALU instructions (rows' mean issue cycles)
    mfma_busy: float     # mfma_cycles ÷ span_cycles
    valu_busy: float
    vmem_bytes: int      # VMEM bytes requested (ISA width × wave size per load/store execution)


@record
class UnitBusy:
    """One scope (the kernel, or one loop): every traced SIMD, and the share over all of them."""

    scope: str                 # "kernel" or "loop #first-#last"
    first_row: int | None
    last_row: int | None
    span_cycles: int           # Σ over the SIMDs
    mfma_cycles: int
    valu_cycles: int
    mfma_busy: float           # Σ mfma cycles ÷ Σ span (the SIMDs' time-weighted mean)
    valu_busy: float
    max_simd_mfma_busy: float
    time_share: float          # the waves' time in this scope ÷ their whole time (1 for the kernel)
    bound_by: str              # the busier unit: "matrix-core" or "valu"
    simds: list[SimdBusy]
    vmem_bytes: int            # Σ over the SIMDs; rows of unknown width are left out
    vmem_bytes_per_cu_cycle: float  # Σ over a CU's SIMDs of bytes ÷ span, averaged over the traced CUs

    @property
    def busy(self) -> float:
        return max(self.mfma_busy, self.valu_busy)


@record
class TraceCeilings:
    source: str                # which files, which pass table
    waves: int
    pass_counts: dict[str, int]  # MFMA mnemonic -> passes used
    unknown_mfma: list[str]      # executed MFMA mnemonics without a pass count (left out: busy is a floor)
    kernel: UnitBusy
    loops: list[UnitBusy]


def passes_known(mnemonic: str, gfx: str | None) -> int | None:
    """An MFMA's passes on `gfx`, or with the arch unknown the count gfx942 and gfx950 share."""
    return _passes(mnemonic.split(None, 1)[0].lower() if mnemonic.strip() else "", gfx)[0]


def _passes(mnemonic: str, gfx: str | None) -> tuple[int | None, str]:
    if gfx is not None and gfx in TARGETS:
        return mfma_passes(mnemonic, gfx), f"{gfx} (HARDWARE.md §4)"
    counts = {mfma_passes(mnemonic, g) for g in SHARED_PASS_TARGETS}
    if len(counts) == 1:
        return counts.pop(), f"arch unknown: the count {'/'.join(SHARED_PASS_TARGETS)} share (HARDWARE.md §4)"
    return None, "arch unknown and the targets' counts differ"


def wave_paths(dispatch_dir: Path) -> list[tuple[int, str]]:
    """(shader engine, path) of every wave file in the dispatch dir, sorted."""
    try:
        names = sorted(os.listdir(dispatch_dir))
    except OSError:
        return []
    out = []
    for name in names:
        m = WAVE_FILE_RE.match(name)
        if m:
            out.append((int(m.group(1)), os.path.join(dispatch_dir, name)))
    return out


def _merge(intervals: list[tuple[int, int]]) -> int:
    """Length of the union of [begin, end) intervals."""
    total, cur_lo, cur_hi = 0, None, None
    for lo, hi in sorted(intervals):
        if cur_hi is None or lo > cur_hi:
            if cur_hi is not None and cur_lo is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    if cur_hi is not None and cur_lo is not None:
        total += cur_hi - cur_lo
    return total


def _share(cycles: int, span: int) -> float:
    """cycles ÷ span, at most 1: one unit per SIMD cannot be busier than the time (a trace whose
    timing says otherwise, e.g. a synthetic one, is read as fully busy)."""
    return round(min(1.0, cycles / span), ROUND) if span > 0 else 0.0


class _Scope:
    __slots__ = ("lo", "hi", "mfma", "valu", "vmem", "spans", "wave_time", "waves")

    def __init__(self, lo: int | None, hi: int | None) -> None:
        self.lo, self.hi = lo, hi
        self.mfma: dict[tuple[int, int, int], int] = {}
        self.valu: dict[tuple[int, int, int], int] = {}
        self.vmem: dict[tuple[int, int, int], int] = {}
        self.spans: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
        self.wave_time = 0
        self.waves: dict[tuple[int, int, int], int] = {}

    def unit(self, total_wave_time: int) -> UnitBusy:
        simds = []
        for key in sorted(self.spans):
            span = _merge(self.spans[key])
            m, v = self.mfma.get(key, 0), self.valu.get(key, 0)
            simds.append(SimdBusy(key[0], key[1], key[2], self.waves.get(key, 0), span, m, v,
                                  _share(m, span), _share(v, span), self.vmem.get(key, 0)))
        span = sum(s.span_cycles for s in simds)
        m, v = sum(s.mfma_cycles for s in simds), sum(s.valu_cycles for s in simds)
        mb, vb = _share(m, span), _share(v, span)
        scope = "kernel" if self.lo is None else f"loop #{self.lo}-#{self.hi}"
        per_cu: dict[tuple[int, int], float] = {}
        for sb in simds:
            if sb.span_cycles:
                per_cu[(sb.se, sb.cu)] = per_cu.get((sb.se, sb.cu), 0.0) + sb.vmem_bytes / sb.span_cycles
        return UnitBusy(scope, self.lo, self.hi, span, m, v, round(mb, ROUND), round(vb, ROUND),
                        max((s.mfma_busy for s in simds), default=0.0),
                        round(self.wave_time / total_wave_time, ROUND) if total_wave_time else 0.0,
                        MATRIX_CORE if mb >= vb else VALU_UNIT, simds, sum(sb.vmem_bytes for sb in simds),
                        round(sum(per_cu.values()) / len(per_cu), 2) if per_cu else 0.0)


Column = Sequence[int]


def _wave_columns(path: str) -> tuple[int, int, int, int, Column, Column, Column]:
    """(cu, simd, begin, end, times, durations, line numbers) of one wave file: through the native
    scanner when built (int64 columns, no list per record), else orjson."""
    from hotspot.att.engine.native import native, scan

    with open(path, "rb") as f:
        data = f.read()
    simd = int(WAVE_FILE_RE.match(os.path.basename(path)).group(2))  # type: ignore[union-attr]
    mod = native()
    found = scan(mod, data) if mod is not None else None
    if found is not None:
        return (int(found.cu or 0), simd, int(found.begin), int(found.end), found.column("times"),
                found.column("durations"), found.column("lines"))
    w = orjson.loads(data).get("wave") or {}
    ins = w.get("instructions") or []
    return (int(w.get("cu") or 0), int(w.get("simd", simd) or 0), int(w.get("begin") or 0),
            int(w.get("end") or 0), [r[0] for r in ins], [r[3] for r in ins], [r[4] for r in ins])


def _add(sc: _Scope, key: tuple[int, int, int], span: tuple[int, int], hits: Counter[int],
         mfma_cycles: dict[int, int], valu_issue: dict[int, float], vmem_bytes: dict[int, int]) -> None:
    sc.spans.setdefault(key, []).append(span)
    sc.waves[key] = sc.waves.get(key, 0) + 1
    sc.wave_time += max(0, span[1] - span[0])
    sc.mfma[key] = sc.mfma.get(key, 0) + sum(c * mfma_cycles[n] for n, c in hits.items() if n in mfma_cycles)
    sc.valu[key] = sc.valu.get(key, 0) + round(sum(c * valu_issue[n] for n, c in hits.items() if n in valu_issue))
    sc.vmem[key] = sc.vmem.get(key, 0) + sum(c * vmem_bytes[n] for n, c in hits.items() if n in vmem_bytes)


def trace_ceilings(dispatch_dir: Path, rows: Iterable[tuple[int, Category, str, float]],
                   loops: Sequence[tuple[int, int]], gfx: str | None) -> TraceCeilings | None:
    """MFMA and VALU busy per SIMD over the kernel and over each loop ((first, last) code rows), from
    the wave files; `rows` are (code row, category, ISA, mean issue cycles per execution) of the
    executed instructions. None when the dispatch dir holds no wave file."""
    paths = wave_paths(dispatch_dir)
    if not paths:
        return None
    mfma_cycles: dict[int, int] = {}
    valu_issue: dict[int, float] = {}
    vmem_bytes: dict[int, int] = {}
    wave_size = TARGETS[gfx].wave_size if gfx is not None and gfx in TARGETS else CDNA_WAVE_SIZE
    pass_counts: dict[str, int] = {}
    unknown: set[str] = set()
    tables: set[str] = set()
    for line, cat, isa, issue in rows:
        if cat == Category.MFMA:
            mnemonic = isa.split(None, 1)[0].lower() if isa.strip() else ""
            passes, table = _passes(mnemonic, gfx)
            tables.add(table)
            if passes:
                mfma_cycles[line] = passes * CYCLES_PER_PASS
                pass_counts[mnemonic] = passes
            else:
                unknown.add(mnemonic)
        elif cat == Category.VALU:
            valu_issue[line] = issue
        lane = bytes_per_lane(isa) or store_bytes_per_lane(isa)
        if lane:
            vmem_bytes[line] = lane * wave_size
    kernel = _Scope(None, None)
    scopes = [_Scope(lo, hi) for lo, hi in loops]
    total_time = 0
    waves = 0
    for se, path in paths:
        cu, simd, begin, end, times, durations, lines = _wave_columns(path)
        key = (se, cu, simd)
        waves += 1
        total_time += max(0, end - begin)
        hits = Counter(lines)  # counted in C: a wave holds ~10^5 records
        _add(kernel, key, (begin, end), hits, mfma_cycles, valu_issue, vmem_bytes)
        for sc in scopes:
            lo, hi = sc.lo or 0, sc.hi or 0
            first = next((i for i, n in enumerate(lines) if lo <= n <= hi), None)
            if first is None:
                continue
            last = next(i for i in range(len(lines) - 1, -1, -1) if lo <= lines[i] <= hi)
            inside = Counter({n: c for n, c in hits.items() if lo <= n <= hi})
            _add(sc, key, (times[first], times[last] + durations[last]), inside, mfma_cycles, valu_issue, vmem_bytes)
    source = (f"{waves} wave files of {dispatch_dir.name}; MFMA pass counts: "
              + ("; ".join(sorted(tables)) if tables else "no MFMA executed"))
    return TraceCeilings(source, waves, dict(sorted(pass_counts.items())), sorted(unknown),
                         kernel.unit(total_time), [s.unit(total_time) for s in scopes if s.spans])


def ceilings_of(analysis: DispatchAnalysis) -> TraceCeilings | None:
    """The trace ceilings of an analysis whose dispatch dir (with its wave files) is at hand."""
    if analysis.mode != "cycles":
        return None
    rows = [(i.line_number, i.category, i.isa, i.issue / i.hit) for i in analysis.instructions if i.hit > 0]
    loops = [(lp.first_line_number, lp.last_line_number) for lp in analysis.loops or []]
    arch = analysis.arch
    return trace_ceilings(Path(analysis.dispatch.path), rows, loops, arch.gfx if arch.known else None)
