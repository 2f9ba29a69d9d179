"""The roofline of one traced dispatch: the kernel's point (FLOP/s against FLOP per byte) and the
ceilings of its GPU, every number from the capture and the hardware tables (the report's picture,
hotspot/render/html_roofline.py; docs/report.md).

- FLOPs: every executed code row's count (code.json `hit`, over the traced waves) × the work of one
  execution (hotspot/arch/flops.py: MFMA 2·M·N·K·blocks, VALU FLOPs per lane × the wave's lanes).
  No point when nothing floating-point executed, or when an executed MFMA's work is unknown.
- Bytes: what the traced waves' VMEM loads and stores request (ISA width × wave size per execution,
  from the wave pass: hotspot/att/issue_share.py `vmem_bytes`). Caches serve part of it, so HBM
  moves at most this much: the point's intensity is a lower bound of its HBM intensity.
- Time and scope: with a kernel-trace duration matched to the dispatch, the whole grid (FLOPs and
  bytes per traced wave × the grid's waves, over the duration) against the GPU's ceilings; without
  one, per CU: the traced waves' FLOPs over their SIMDs' time (the union of each SIMD's waves,
  `span_cycles`) × SIMDs per CU, at the product's peak engine clock, against one CU's share of the
  ceilings (the GPU's ÷ its CUs).
- From counters (`report --pmc`), a second point over the whole grid: the same FLOPs (the grid's,
  scaled from the traced waves), the L2→fabric read bytes of one dispatch and its duration as the
  counter analysis gives them (hotspot/pmc/analysis.py: the median over the kernel's dispatches in the
  files). Reads only (the counters hotspot reads count no writes): the intensity is at most this
  much lower. Only with a grid-scope trace point: the FLOPs need the grid's size.
- Ceilings: the matrix cores' dense peak for each MFMA input type the kernel runs (targets.py for
  f16/bf16 and fp8; from the pass table of the executed shape for the others), the VALU's FP32 peak
  (arch/flops.py), HBM (products.py). The tables hold no LDS or L2 bandwidth: not drawn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field

from hotspot.arch.classify import mnemonic_of
from hotspot.arch.flops import VALU_FP32_FLOPS_PER_CLK_PER_CU, mfma_work, valu_work
from hotspot.arch.mfma import CYCLES_PER_PASS, mfma_passes
from hotspot.arch.products import find_product
from hotspot.arch.targets import find_target
from hotspot.att.launch_match import MATCHED
from hotspot.att.model import AnalysisMode, DispatchAnalysis
from hotspot.record import record
from hotspot.strenum import TextEnum

PER_CU = "per-cu"
GRID = "grid"
HZ_PER_MHZ = 1e6
BYTES_PER_GB = 1e9
S_PER_NS = 1e-9
# MFMA input types whose dense peak the target table holds (flops per clock per CU field)
TABLE_PEAKS = {"f16": "dense_f16_flops_per_clk_per_cu", "bf16": "dense_f16_flops_per_clk_per_cu",
               "fp8": "dense_fp8_flops_per_clk_per_cu"}


class CeilingKind(TextEnum):
    COMPUTE = "compute"   # FLOP/s: a horizontal roof
    MEMORY = "memory"     # bytes/s: the diagonal roof


@record
class Ceiling:
    kind: CeilingKind
    name: str          # "MFMA bf16", "VALU FP32", "HBM"
    value: float       # FLOP/s (compute) or bytes/s (memory), in the point's scope
    source: str        # which table entry, and how it was scaled


@record
class Roofline:
    """`available` false: `reason` says why there is no point (and nothing is drawn)."""

    available: bool
    reason: str
    scope: str = ""                 # per-cu | grid
    flops: float = 0.0              # the traced waves' FLOPs (per CU), or the grid's
    bytes: float = 0.0
    seconds: float = 0.0
    flops_per_s: float = 0.0
    intensity: float = 0.0          # FLOP per byte
    waves: int = 0                  # traced waves the point comes from
    simds: int = 0                  # traced SIMDs (per-cu scope)
    cus_traced: int = 0
    clock_mhz: float = 0.0
    ceilings: list[Ceiling] = field(default_factory=list)
    flops_by_type: dict[str, float] = field(default_factory=dict)  # "MFMA bf16", "VALU f32" -> traced FLOPs
    notes: list[str] = field(default_factory=list)
    counters: CounterPoint | None = None  # with counter files (`report --pmc`): their point, or why none


@record
class CounterInput:
    """What the counter files (`--pmc`) say about the traced kernel, per dispatch: the median over
    the dispatches of the kernel they hold (hotspot/pmc/analysis.py `median_per_dispatch`)."""

    files: list[str]
    kernel: str | None          # the counter files' kernel taken as the traced one; None: none matches
    match: str                  # how it was matched, or why none was
    dispatches: int = 0
    bytes_low: float | None = None   # L2→fabric read bytes of one dispatch (a range when a counter is missing)
    bytes_high: float | None = None
    bytes_reason: str = ""      # why the bytes are unknown or a range
    duration_ns: float | None = None


@record
class CounterPoint:
    """The point from counters; `available` false: `reason` says why there is none."""

    available: bool
    reason: str
    kernel: str = ""
    dispatches: int = 0
    flops: float = 0.0              # the grid's FLOPs (from the trace)
    bytes: float = 0.0              # L2→fabric read bytes of one dispatch: the upper bound
    bytes_low: float = 0.0
    seconds: float = 0.0
    flops_per_s: float = 0.0
    intensity: float = 0.0          # FLOPs / bytes (the upper bound of the bytes: the lowest intensity)
    intensity_high: float = 0.0     # FLOPs / bytes_low


def counter_point(r: Roofline, c: CounterInput) -> CounterPoint:
    """The counters' point beside the trace's `r` (grid scope), or why there is none."""
    if c.kernel is None:
        return CounterPoint(False, f"no kernel in the counter files is the traced one ({c.match})")
    if r.scope != GRID:
        return CounterPoint(False, "the counters measured whole dispatches, and the traced waves' FLOPs "
                                   "scale to a dispatch only with its grid size: no kernel-trace launch "
                                   "is matched to this dispatch (name one with --meta)")
    if c.bytes_high is None or c.bytes_high <= 0:
        return CounterPoint(False, "the counter files give no L2→fabric read bytes for "
                                   f"{c.kernel}" + (f" ({c.bytes_reason})" if c.bytes_reason else ""))
    if c.duration_ns is None or c.duration_ns <= 0:
        return CounterPoint(False, f"the counter files give no duration for the dispatches of {c.kernel}")
    seconds = c.duration_ns * S_PER_NS
    low = c.bytes_low if c.bytes_low is not None and c.bytes_low > 0 else c.bytes_high
    return CounterPoint(True, "", c.kernel, c.dispatches, r.flops, c.bytes_high, low, seconds,
                        r.flops / seconds, r.flops / c.bytes_high, r.flops / low)


def _none(reason: str) -> Roofline:
    return Roofline(False, reason)


def traced_flops(rows: Iterable[tuple[str, int]], wave_size: int) -> tuple[dict[str, float], list[str], list[str]]:
    """(FLOPs by type, MFMA mnemonics whose work is unknown, integer MFMA types) of executed rows
    given as (isa, hit)."""
    by_type: dict[str, float] = {}
    unknown: list[str] = []
    integer: list[str] = []
    for isa, hit in rows:
        if hit <= 0:
            continue
        token = mnemonic_of(isa)
        if token.startswith(("v_mfma", "v_smfmac")):
            work = mfma_work(isa)
            if work is None:
                unknown.append(token)
            elif work.integer:
                integer.append(work.kind)
            else:
                key = f"MFMA {work.kind}"
                by_type[key] = by_type.get(key, 0.0) + hit * work.ops
            continue
        v = valu_work(isa)
        if v is not None:
            key = f"VALU {v.dtype}"
            by_type[key] = by_type.get(key, 0.0) + hit * v.flops_per_lane * wave_size
    return by_type, sorted(set(unknown)), sorted(set(integer))


def _mfma_peak_per_clk_cu(kind: str, rows: Iterable[tuple[str, int]], gfx: str) -> tuple[float, str] | None:
    """Dense MFMA FLOPs per clock per CU for an input type: the target table's peak, else the
    fastest executed shape of that type at its pass count (None when neither is known)."""
    target = find_target(gfx)
    if target is None:
        return None
    attr = TABLE_PEAKS.get(kind)
    if attr is not None:
        value = getattr(target, attr)
        return (float(value), f"{gfx} {attr} = {value} ({target.source(attr)})") if value else None
    best: tuple[float, str] | None = None
    for isa, hit in rows:
        work = mfma_work(isa) if hit > 0 else None
        if work is None or work.kind != kind:
            continue
        passes = mfma_passes(isa, gfx)
        if not passes:
            continue
        rate = work.ops / (passes * CYCLES_PER_PASS) * target.simds_per_cu
        mnemonic = mnemonic_of(isa)
        if best is None or rate > best[0]:
            best = (rate, f"{mnemonic}: {work.ops} FLOP per {passes} passes × {CYCLES_PER_PASS} cycles × "
                          f"{target.simds_per_cu} SIMDs (HARDWARE.md §4)")
    return best


def roofline_of(a: DispatchAnalysis, rows: list[tuple[str, int]], counters: CounterInput | None = None
                ) -> Roofline:
    """The dispatch's roofline from its analysis and every code row of the kernel (isa, hit); with
    `counters`, their point too (or why they give none)."""
    r = _roofline(a, rows)
    if counters is not None and r.available:
        from dataclasses import replace

        r = replace(r, counters=counter_point(r, counters))
    return r


def _roofline(a: DispatchAnalysis, rows: list[tuple[str, int]]) -> Roofline:
    if a.mode != AnalysisMode.CYCLES:
        return _none("PC sampling has no traced time: the roofline needs a thread trace")
    target = find_target(a.arch.gfx)
    if target is None:
        return _none(f"the arch {a.arch.gfx or 'unknown'} is not in the hardware tables")
    product = find_product(a.arch.product or "")
    if product is None or product.gfx != target.gfx:
        return _none("the GPU product is unknown (its clock and HBM bandwidth come from the product "
                     "table, hotspot/arch/products.py): no FLOP/s and no memory ceiling")
    tc = a.ceilings
    if tc is None or tc.kernel.span_cycles <= 0 or tc.waves <= 0:
        return _none("no wave files were read: the traced time is unknown")
    by_type, unknown, integer = traced_flops(rows, target.wave_size)
    if unknown:
        return _none("the FLOPs of " + ", ".join(unknown) + " are not known (no MFMA shape hotspot "
                     "parses): a point would be wrong")
    total = sum(by_type.values())
    if total <= 0:
        why = "no MFMA and no floating-point VALU instruction executed"
        if integer:
            why += " (integer MFMA " + ", ".join(integer) + " only: operations, not FLOPs)"
        return _none(why + ": no FLOP count, no point")
    vmem = tc.kernel.vmem_bytes
    if vmem <= 0:
        return _none("the traced waves requested no VMEM bytes of a known width: the arithmetic "
                     "intensity is unbounded")
    clock_hz = product.peak_engine_clock_mhz * HZ_PER_MHZ
    notes = []
    if integer:
        notes.append("integer MFMA (" + ", ".join(integer) + ") not counted: operations, not FLOPs")
    if any(k.startswith("VALU") for k in by_type):
        notes.append(f"VALU FLOPs count all {target.wave_size} lanes (the trace has no EXEC mask): "
                     "an upper bound")

    launch = a.occupancy.launch if a.occupancy is not None else None
    grid_waves = launch.waves_in_grid if launch is not None else None
    duration = launch.duration_ns if launch is not None else None
    waves = a.dispatch.waves or tc.waves
    if launch is not None and launch.status == MATCHED and grid_waves and duration and duration > 0:
        scale = grid_waves / waves
        scope, cus, seconds = GRID, product.cus, duration * S_PER_NS
        flops, nbytes = total * scale, vmem / tc.waves * grid_waves
        per_compute = per_memory = f"× {product.cus} CUs of the {product.name}"
        notes.insert(0, f"whole grid: the FLOPs and bytes of {waves:,} traced waves × {grid_waves:,} / "
                        f"{waves:,} (the grid's waves), over the kernel trace's duration "
                        f"{duration:,} ns ({launch.source})")
        simds = cus_traced = 0
    else:
        scope, cus = PER_CU, 1
        simds = len(tc.kernel.simds)
        cus_traced = len({(s.se, s.cu) for s in tc.kernel.simds})
        # the SIMDs' time is Σ span; a CU has simds_per_cu of them
        seconds = tc.kernel.span_cycles / target.simds_per_cu / clock_hz
        flops, nbytes = total, float(vmem)
        per_compute, per_memory = "(one CU)", f"÷ {product.cus} CUs: one CU's share"
        why = ("no kernel-trace duration matched to this dispatch" if launch is None or not duration
               else "the launch's grid is not matched to this dispatch")
        notes.insert(0, f"per CU ({why}): the FLOPs of {waves:,} traced waves over their {simds} "
                        f"SIMDs' time ({tc.kernel.span_cycles:,} SIMD-cycles on {cus_traced} CU(s)) "
                        f"× {target.simds_per_cu} SIMDs per CU, at the {product.name}'s peak engine "
                        f"clock {product.peak_engine_clock_mhz} MHz")

    ceilings: list[Ceiling] = []
    for kind in sorted({k.split(" ", 1)[1] for k in by_type if k.startswith("MFMA ")}):
        peak = _mfma_peak_per_clk_cu(kind, rows, target.gfx)
        if peak is None:
            notes.append(f"no peak known for MFMA {kind}: its ceiling is not drawn")
            continue
        ceilings.append(Ceiling(CeilingKind.COMPUTE, f"MFMA {kind}", peak[0] * cus * clock_hz,
                                f"{peak[1]} × {product.peak_engine_clock_mhz} MHz {per_compute}"))
    valu = VALU_FP32_FLOPS_PER_CLK_PER_CU.get(target.gfx)
    if valu is not None:
        ceilings.append(Ceiling(CeilingKind.COMPUTE, "VALU FP32", valu.value * cus * clock_hz,
                                f"{valu.value} FLOP/clock/CU ({valu.source}) × "
                                f"{product.peak_engine_clock_mhz} MHz {per_compute}"))
    hbm = product.peak_hbm_gbps * BYTES_PER_GB / (1 if scope == GRID else product.cus)
    ceilings.append(Ceiling(CeilingKind.MEMORY, "HBM", hbm,
                            f"{product.name} peak HBM {product.peak_hbm_gbps:g} GB/s "
                            f"({product.source('peak_hbm_gbps')})" + ("" if scope == GRID else f" {per_memory}")))
    notes.append("LDS and L2 bandwidth are not in the hardware tables: no ceiling drawn for them")
    rate, intensity = flops / seconds, flops / nbytes
    roof = min([c.value for c in ceilings if c.kind == CeilingKind.COMPUTE] or [float("inf")])
    top = max([c.value for c in ceilings if c.kind == CeilingKind.COMPUTE] or [float("inf")])
    attainable = min(top, hbm * intensity)
    if rate > attainable:
        notes.append(f"the point lies above the HBM roof at its intensity ({attainable:.3g} FLOP/s): "
                     "caches served part of the requested bytes, so the kernel's HBM intensity is "
                     "higher than drawn" + ("" if scope == GRID else ", or the traced CU took more "
                                            "than one CU's share of the bandwidth"))
    elif rate > roof:
        notes.append("the point lies above the lower compute ceiling: the FLOPs come from the units "
                     "with the higher one")
    return Roofline(True, "", scope, flops, nbytes, seconds, rate, intensity, waves, simds, cus_traced,
                    float(product.peak_engine_clock_mhz), ceilings, by_type, notes)
