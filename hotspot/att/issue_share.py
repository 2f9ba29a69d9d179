"""How busy each SIMD's matrix core and VALU are, from the wave files alone (issue 33, point 2).

The trace says, per wave, which instruction issued when. A SIMD's MFMA unit is busy passes x 4
cycles per MFMA it issues (HARDWARE.md §4); its VALU for the issue cycles of the other VALU
instructions (each row's mean issue cycles, code.json latency - stall over its executions). Over
the time the SIMD has waves of the kernel (the union of its waves' [begin, end]), or the time its
waves spend in one loop (per wave, the loop header's first execution to the backward branch's
last), that is the unit's issue share. VMEM bytes requested per cycle per CU (ISA width x wave size
per load/store) say how hard the traced CU pulls on memory where the widths are known. No launch
row or kernel duration is needed.

The wave pass (hotspot/att/engine/wavepass.py) hands every wave's columns to an `IssueAccumulator`
as it reads the file (each file is read once); `trace_ceilings` turns the sums into the
`TraceCeilings` the plan caps its estimates with (hotspot/plan/engine.py) and the
`matrix-core-bound` verdict reads (hotspot/plan/ceiling_rules.py).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hotspot.arch.classify import Category, classify, mnemonic_of
from hotspot.arch.mfma import CYCLES_PER_PASS, mfma_passes
from hotspot.arch.targets import TARGETS
from hotspot.arch.vmem_width import lane_bytes
from hotspot.att.engine.native import native
from hotspot.att.loops import loops_in_code
from hotspot.capture import CodeRow
from hotspot.record import record

# Targets whose pass counts agree for the opcodes both have (HARDWARE.md §4: "Old gfx942 shapes
# keep their pass counts"): with the arch unknown among them, a count they share is still exact.
SHARED_PASS_TARGETS: tuple[str, ...] = ("gfx942", "gfx950")
# Every CDNA target runs wave64 (HARDWARE.md §1): the width a VMEM row moves per lane x 64.
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
    mfma_busy: float     # mfma_cycles ÷ span_cycles (at most 1)
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
    source: str                # which waves, which pass table
    waves: int
    pass_counts: dict[str, int]  # MFMA mnemonic -> passes used
    unknown_mfma: list[str]      # executed MFMA mnemonics without a pass count (left out: busy is a floor)
    kernel: UnitBusy
    loops: list[UnitBusy]


def passes_known(mnemonic: str, gfx: str | None) -> int | None:
    """An MFMA's passes on `gfx`, or with the arch unknown the count gfx942 and gfx950 share."""
    return _passes(mnemonic_of(mnemonic), gfx)[0]


def _passes(mnemonic: str, gfx: str | None) -> tuple[int | None, str]:
    if gfx is not None and gfx in TARGETS:
        return mfma_passes(mnemonic, gfx), f"{gfx} (HARDWARE.md §4)"
    counts = {mfma_passes(mnemonic, g) for g in SHARED_PASS_TARGETS}
    if len(counts) == 1:
        return counts.pop(), f"arch unknown: the count {'/'.join(SHARED_PASS_TARGETS)} share (HARDWARE.md §4)"
    return None, "arch unknown and the targets' counts differ"


class IssueWeights:
    """What one execution of each row costs its unit, and the loops, fixed before the wave pass
    (picklable: pool workers get it with the pass options)."""

    __slots__ = ("mfma_cycles", "valu_issue", "vmem_bytes", "loops", "pass_counts", "unknown", "tables",
                 "_by_line")

    def __init__(self, rows: Sequence[CodeRow], gfx: str | None) -> None:
        self.mfma_cycles: dict[int, int] = {}
        self.valu_issue: dict[int, float] = {}
        self.vmem_bytes: dict[int, int] = {}
        self.pass_counts: dict[str, int] = {}
        self.unknown: set[str] = set()
        self.tables: set[str] = set()
        wave_size = TARGETS[gfx].wave_size if gfx is not None and gfx in TARGETS else CDNA_WAVE_SIZE
        for r in rows:
            cat = classify(r.isa).category
            if cat == Category.MFMA:
                mnemonic = mnemonic_of(r.isa)
                passes, table = _passes(mnemonic, gfx)
                if r.hit:
                    self.tables.add(table)
                if passes:
                    self.mfma_cycles[r.line_number] = passes * CYCLES_PER_PASS
                    if r.hit:
                        self.pass_counts[mnemonic] = passes
                elif r.hit:
                    self.unknown.add(mnemonic)
            elif cat == Category.VALU and r.hit:
                self.valu_issue[r.line_number] = r.issue / r.hit
            lane = lane_bytes(r.isa)
            if lane:
                self.vmem_bytes[r.line_number] = lane * wave_size
        self.loops = loops_in_code(rows)
        self._by_line: dict[int, tuple[Any, Any, Any]] | None = None  # made on first use

    def by_line(self) -> dict[int, tuple[Any, Any, Any]]:
        """Each weighted line's (mfma cycles, valu issue, vmem bytes), None where it has none: one
        lookup per executed line instead of six (the three dicts are complete after __init__)."""
        made = self._by_line
        if made is None:
            mf, va, vb = self.mfma_cycles, self.valu_issue, self.vmem_bytes
            made = self._by_line = {n: (mf.get(n), va.get(n), vb.get(n))
                                    for n in mf.keys() | va.keys() | vb.keys()}
        return made

    def __getstate__(self) -> tuple[object, ...]:
        return tuple(getattr(self, s) for s in self.__slots__)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for s, v in zip(self.__slots__, state):
            setattr(self, s, v)


SimdKey = tuple[int, int, int]  # (se, cu, simd)
ScopeKey = tuple[int, int] | None  # a loop (header row, branch row), None for the kernel


Sums = tuple[float, float, float]  # (mfma cycles, valu cycles, vmem bytes) of one wave in one scope
# What one executed sequence gives every wave that runs it: its kernel sums and, per loop it enters,
# the positions of the header's first and the branch's last execution with the loop's sums.
Shape = tuple[Sums, list[tuple[tuple[int, int], int, int, Sums]]]


# A row's weighted counts: (line, mfma cycles, valu cycles, vmem bytes), None where it has no weight
Terms = list[tuple[int, Any, Any, Any]]


def _terms(hits: dict[int, int], w: IssueWeights) -> Terms:
    """Each weighted row's products once, in the order of `hits` (the order its floats are added
    in, so every scope's sums are the floats summing `hits` per scope gives); the same list made
    in C (`line_terms`) for a plain dict."""
    mod = native() if type(hits) is dict else None
    if mod is not None:
        made: Terms | None = mod.line_terms(hits, w.by_line())
        if made is not None:
            return made
    return _terms_py(hits, w)


def _terms_py(hits: dict[int, int], w: IssueWeights) -> Terms:
    """`_terms` in Python (C: `line_terms`, its twin)."""
    get = w.by_line().get
    return [(n, None if m is None else c * m, None if v is None else c * v,
             None if b is None else c * b)
            for n, c in hits.items() if (t := get(n)) is not None for m, v, b in (t,)]


def _sums(terms: Terms) -> Sums:
    # lists, not generators (the same values added in the same order: the same floats)
    return (sum([t[1] for t in terms if t[1] is not None]),
            sum([t[2] for t in terms if t[2] is not None]),
            sum([t[3] for t in terms if t[3] is not None]))


def _shape(lines: Sequence[int], w: IssueWeights, hits: dict[int, int] | None = None) -> Shape:
    """`hits`: Counter(lines) when counted already (the native pass counts an int64 column)."""
    if hits is None:
        hits = Counter(lines)  # counted in C: a wave holds ~10^5 records
    terms = _terms(hits, w)
    loops = []
    backwards: Sequence[int] | None = None  # `lines` reversed, made once for all loops
    for lo, hi in w.loops:
        if lo not in hits or hi not in hits:
            continue
        first = lines.index(lo)  # C scans, stopping at the first hit
        if backwards is None:
            backwards = lines[::-1]
        last = len(lines) - 1 - backwards.index(hi)
        loops.append(((lo, hi), first, last, _sums([t for t in terms if lo <= t[0] <= hi])))
    return _sums(terms), loops


class IssueAccumulator:
    """Per scope and SIMD: MFMA/VALU cycles, VMEM bytes, waves, their time and their spans. Waves
    that run one executed sequence (all of a real dispatch's, usually) share its counts: they are
    worked out once per sequence."""

    __slots__ = ("sums", "spans", "wave_time", "waves", "shapes")

    def __init__(self) -> None:
        self.sums: dict[tuple[ScopeKey, SimdKey], list[float]] = {}  # [mfma, valu, vmem, waves]
        self.spans: dict[tuple[ScopeKey, SimdKey], list[tuple[int, int]]] = {}
        self.wave_time: dict[ScopeKey, int] = {}
        self.waves = 0
        self.shapes: dict[int, tuple[bytes, Shape]] = {}  # sequence hash -> (its lines, its shape)

    def __getstate__(self) -> tuple[object, ...]:
        return (self.sums, self.spans, self.wave_time, self.waves)  # shapes are a cache

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self.sums, self.spans, self.wave_time, self.waves = state  # type: ignore[assignment]  # the tuple __getstate__ gave
        self.shapes = {}

    def _add(self, scope: ScopeKey, key: SimdKey, span: tuple[int, int], sums: Sums) -> None:
        slot = (scope, key)
        acc = self.sums.setdefault(slot, [0.0, 0.0, 0.0, 0.0])
        acc[0] += sums[0]
        acc[1] += sums[1]
        acc[2] += sums[2]
        acc[3] += 1
        self.spans.setdefault(slot, []).append(span)
        self.wave_time[scope] = self.wave_time.get(scope, 0) + max(0, span[1] - span[0])

    def shape(self, w: IssueWeights, lines: Sequence[int],
              sequence: tuple[int, bytes] | None = None) -> Shape:
        """The sums every wave running `lines` gets; `sequence`, the scanner's (hash, raw lines)
        of the executed sequence, lets waves of one sequence share the counting."""
        if sequence is not None:
            known = self.shapes.get(sequence[0])
            if known is not None and known[0] == sequence[1]:
                return known[1]
        mod = native() if isinstance(lines, array) and lines.typecode == "q" else None
        count = getattr(mod, "count_lines", None)
        # an int64 column counted in C (the same dict Counter makes), its rows found in place
        shape = _shape(lines, w, count(lines)) if count is not None else _shape(list(lines), w)
        if sequence is not None:
            self.shapes[sequence[0]] = (sequence[1], shape)
        return shape

    def wave_scopes(self, w: IssueWeights, begin: int, end: int, lines: Sequence[int],
                    times: Sequence[int], durations: Sequence[int],
                    sequence: tuple[int, bytes] | None = None
                    ) -> list[tuple[ScopeKey, tuple[int, int], Sums]]:
        """One wave's (scope, span, sums): the kernel's, then each loop's it entered."""
        kernel, loops = self.shape(w, lines, sequence)
        return [(None, (begin, end), kernel)] + [
            (scope, (int(times[first]), int(times[last]) + int(durations[last])), sums)
            for scope, first, last, sums in loops]

    def add_wave(self, w: IssueWeights, key: SimdKey, begin: int, end: int, lines: Sequence[int],
                 times: Sequence[int], durations: Sequence[int],
                 sequence: tuple[int, bytes] | None = None) -> None:
        """One wave's columns (its executed rows, issue times and durations); `sequence` as for
        `shape`. (The native wave pass adds the same sums in C: engine/groups.py `NativeIssue`.)"""
        self.waves += 1
        for scope, span, sums in self.wave_scopes(w, begin, end, lines, times, durations, sequence):
            self._add(scope, key, span, sums)

    def merge(self, other: IssueAccumulator) -> None:
        for slot, acc in other.sums.items():
            mine = self.sums.setdefault(slot, [0.0, 0.0, 0.0, 0.0])
            for i, v in enumerate(acc):
                mine[i] += v
        for slot, spans in other.spans.items():
            self.spans.setdefault(slot, []).extend(spans)
        for scope, t in other.wave_time.items():
            self.wave_time[scope] = self.wave_time.get(scope, 0) + t
        self.waves += other.waves


def _union(intervals: list[tuple[int, int]]) -> int:
    """Length of the union of [begin, end) intervals."""
    total = 0
    cur: tuple[int, int] | None = None
    for lo, hi in sorted(intervals):
        if cur is None or lo > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = (lo, hi)
        else:
            cur = (cur[0], max(cur[1], hi))
    if cur is not None:
        total += cur[1] - cur[0]
    return total


def _share(cycles: float, span: int) -> float:
    """cycles ÷ span, at most 1: one unit per SIMD cannot be busier than the time (a trace whose
    timing says otherwise, e.g. a synthetic one, is read as fully busy)."""
    return round(min(1.0, cycles / span), ROUND) if span > 0 else 0.0


def _unit(acc: IssueAccumulator, scope: ScopeKey) -> UnitBusy:
    simds = []
    for (sc, key), sums in sorted(acc.sums.items(), key=lambda kv: kv[0][1]):
        if sc != scope:
            continue
        span = _union(acc.spans.get((sc, key), []))
        m, v, b = round(sums[0]), round(sums[1]), round(sums[2])
        simds.append(SimdBusy(key[0], key[1], key[2], int(sums[3]), span, m, v, _share(m, span),
                              _share(v, span), b))
    span = sum(s.span_cycles for s in simds)
    m, v = sum(s.mfma_cycles for s in simds), sum(s.valu_cycles for s in simds)
    mb, vb = _share(m, span), _share(v, span)
    per_cu: dict[tuple[int, int], float] = {}
    for s in simds:
        if s.span_cycles:
            per_cu[(s.se, s.cu)] = per_cu.get((s.se, s.cu), 0.0) + s.vmem_bytes / s.span_cycles
    total_time = acc.wave_time.get(None, 0)
    name = "kernel" if scope is None else f"loop #{scope[0]}-#{scope[1]}"
    return UnitBusy(name, None if scope is None else scope[0], None if scope is None else scope[1],
                    span, m, v, mb, vb, max((s.mfma_busy for s in simds), default=0.0),
                    round(acc.wave_time.get(scope, 0) / total_time, ROUND) if total_time else 0.0,
                    MATRIX_CORE if mb >= vb else VALU_UNIT, simds, sum(s.vmem_bytes for s in simds),
                    round(sum(per_cu.values()) / len(per_cu), 2) if per_cu else 0.0)


def trace_ceilings(acc: IssueAccumulator | None, w: IssueWeights | None,
                   loops: Sequence[tuple[int, int]]) -> TraceCeilings | None:
    """The ceilings of the kernel and of each loop ((first row, last row) of the analysis's loops)
    the waves ran; None when no wave was read."""
    if acc is None or w is None or not acc.waves:
        return None
    scopes = {s for s, _ in acc.sums if s is not None}
    source = (f"{acc.waves} traced waves; MFMA pass counts: "
              + ("; ".join(sorted(w.tables)) if w.tables else "no MFMA executed"))
    return TraceCeilings(source, acc.waves, dict(sorted(w.pass_counts.items())), sorted(w.unknown),
                         _unit(acc, None), [_unit(acc, lp) for lp in loops if lp in scopes])
