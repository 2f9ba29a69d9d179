"""Per-dispatch and per-kernel metrics from joined dispatches. Pure: never opens a file.

Units: bytes, ns; GB/s = bytes per ns (1 B/ns = 1e9 B/s), so no scale factor is needed.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import field

from hotspot.arch.counter_semantics import ArchCounters
from hotspot.capture import is_runtime_kernel
from hotspot.pmc.estimate import Estimate, median, total
from hotspot.pmc.fabric_bytes import dram_read_bytes, read_bytes_any
from hotspot.pmc.join import JoinedDispatch
from hotspot.pmc.verdicts import KernelFacts, Verdict, verdicts_for
from hotspot.record import record

PERCENT = 100.0


@record
class CounterPlan:
    """Which counters the metrics read, decided once from the arch (or its candidates)."""

    specs: tuple[ArchCounters, ...]     # one when the arch is decided; candidates otherwise
    hit: str | None
    miss: str | None
    read_requests: str | None
    req_32b: str | None
    display: tuple[str, ...]            # counters shown per kernel (null = not collected)


@record
class DispatchReport:
    dispatch_id: int
    kernel: str
    counters: dict[str, float | None]
    l2_hit_pct: float | None
    req_32b_pct: float | None
    fabric_read_bytes: Estimate
    dram_read_bytes: float | None
    over_fetch: Estimate
    duration_ns: float | None
    achieved_gbps: Estimate
    pct_of_peak: Estimate
    files: tuple[str, ...]


@record
class MedianPerDispatch:
    fabric_read_bytes: Estimate
    duration_ns: float | None
    achieved_gbps: Estimate
    l2_hit_pct: float | None


@record
class KernelReport:
    kernel: str
    dispatches: int
    dispatch_ids: list[int]
    counters: dict[str, float | None]
    l2_hit_pct: float | None
    req_32b_pct: float | None
    fabric_read_bytes: Estimate
    fabric_bytes_label: str
    dram_read_bytes: float | None
    inconsistent_dispatches: int
    over_fetch: Estimate
    duration_ns: float | None
    achieved_gbps: Estimate
    peak_gbps: float | None
    peak_source: str
    pct_of_peak: Estimate
    median_per_dispatch: MedianPerDispatch
    verdicts: list[Verdict] = field(default_factory=list)
    runtime: bool = False  # a HIP runtime copy/fill kernel: shown, never given verdicts


# HIP runtime blit kernels (rocclr copy/fill, hotspot/capture/runtime_kernels.py): a verdict about
# their cache behaviour would point at nothing the user can change.

BYTES_LABEL = "L2→fabric read bytes (upper bound on HBM reads; Infinity Cache sits behind them)"


def ratio_pct(part: float | None, whole: float | None) -> float | None:
    """`part` as a percentage of `whole`, a share: None when either is unknown, or when the part
    exceeds its whole (counters from different replay passes, or a damaged file): 500% of all
    requests is not a number the counters support (api.py says which counters disagree)."""
    if part is None or whole is None or whole <= 0 or part < 0 or part > whole:
        return None
    return PERCENT * part / whole


def _hit_pct(plan: CounterPlan, counters: Mapping[str, float]) -> float | None:
    if plan.hit is None or plan.miss is None:
        return None
    hit, miss = counters.get(plan.hit), counters.get(plan.miss)
    if hit is None or miss is None:
        return None
    return ratio_pct(hit, hit + miss)


def _gbps(nbytes: Estimate, duration_ns: float | None) -> Estimate:
    if duration_ns is None or duration_ns <= 0:
        return Estimate.unknown(nbytes.missing, "no duration (timestamps missing)")
    return nbytes.map(lambda b: b / duration_ns)


def _pct_of_peak(gbps: Estimate, peak: float | None) -> Estimate:
    if peak is None:
        return Estimate.unknown(gbps.missing, "peak bandwidth unknown")
    return gbps.map(lambda g: PERCENT * g / peak)


def _over_fetch(nbytes: Estimate, ideal: float | None) -> Estimate:
    if ideal is None:
        return Estimate.unknown(reason="no --ideal-bytes/--ideal-gb given")
    return nbytes.map(lambda b: b / ideal)


@record
class DispatchCalc:
    report: DispatchReport
    inconsistent: bool


def dispatch_metrics(d: JoinedDispatch, plan: CounterPlan, peak: float | None,
                     ideal_bytes: float | None) -> DispatchCalc:
    c = d.counters
    nbytes = read_bytes_any(plan.specs, c) if plan.specs else None
    estimate = nbytes.estimate if nbytes else Estimate.unknown(reason="arch unknown: no byte formula")
    gbps = _gbps(estimate, d.duration_ns)
    dram = dram_read_bytes(plan.specs[0], c) if len(plan.specs) == 1 else None
    req32 = ratio_pct(c.get(plan.req_32b) if plan.req_32b else None,
                      c.get(plan.read_requests) if plan.read_requests else None)
    report = DispatchReport(
        dispatch_id=d.dispatch_id, kernel=d.kernel,
        counters={name: c.get(name) for name in plan.display},
        l2_hit_pct=_hit_pct(plan, c), req_32b_pct=req32,
        fabric_read_bytes=estimate, dram_read_bytes=dram,
        over_fetch=_over_fetch(estimate, ideal_bytes),
        duration_ns=d.duration_ns, achieved_gbps=gbps, pct_of_peak=_pct_of_peak(gbps, peak),
        files=d.files)
    return DispatchCalc(report, bool(nbytes and nbytes.inconsistent))


def _sum_counters(reports: Sequence[DispatchReport], names: Sequence[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in names:
        values = [v for r in reports if (v := r.counters.get(name)) is not None]
        out[name] = sum(values) if values else None
    return out


def kernel_metrics(kernel: str, calcs: Sequence[DispatchCalc], plan: CounterPlan,
                   peak: float | None, peak_source: str, ideal_bytes: float | None) -> KernelReport:
    reports = [c.report for c in calcs]
    counters = _sum_counters(reports, plan.display)
    nbytes = total(r.fabric_read_bytes for r in reports)
    durations = [r.duration_ns for r in reports if r.duration_ns is not None]
    duration = sum(durations) if reports and len(durations) == len(reports) else None  # every one known
    gbps = _gbps(nbytes, duration)
    pct = _pct_of_peak(gbps, peak)
    ideal_total = ideal_bytes * len(reports) if ideal_bytes is not None else None
    over = _over_fetch(nbytes, ideal_total)
    drams = [r.dram_read_bytes for r in reports if r.dram_read_bytes is not None]
    dram = sum(drams) if reports and len(drams) == len(reports) else None  # every one known
    req32 = ratio_pct(counters.get(plan.req_32b) if plan.req_32b else None,
                      counters.get(plan.read_requests) if plan.read_requests else None)
    hit = _hit_pct(plan, {k: v for k, v in counters.items() if v is not None})
    known_durations = [x for x in durations if x is not None]
    hits = [r.l2_hit_pct for r in reports if r.l2_hit_pct is not None]
    med = MedianPerDispatch(
        fabric_read_bytes=median(r.fabric_read_bytes for r in reports),
        duration_ns=statistics.median(known_durations) if known_durations else None,
        achieved_gbps=median(r.achieved_gbps for r in reports),
        l2_hit_pct=statistics.median(hits) if hits else None)
    facts = KernelFacts(l2_hit_pct=hit, req_32b_pct=req32, over_fetch=over, pct_of_peak=pct,
                        achieved_gbps=gbps, peak_gbps=peak)
    return KernelReport(
        kernel=kernel, dispatches=len(reports), dispatch_ids=[r.dispatch_id for r in reports],
        counters=counters, l2_hit_pct=hit, req_32b_pct=req32,
        fabric_read_bytes=nbytes, fabric_bytes_label=BYTES_LABEL, dram_read_bytes=dram,
        inconsistent_dispatches=sum(1 for c in calcs if c.inconsistent),
        over_fetch=over, duration_ns=duration, achieved_gbps=gbps, peak_gbps=peak,
        peak_source=peak_source, pct_of_peak=pct, median_per_dispatch=med,
        verdicts=[] if is_runtime_kernel(kernel) else verdicts_for(facts),
        runtime=bool(is_runtime_kernel(kernel)))


def kernel_sort_key(k: KernelReport) -> tuple[float, float, str]:
    """Longest total time first, then most bytes, then name (stable and deterministic)."""
    high = k.fabric_read_bytes.high if k.fabric_read_bytes.high is not None else -1.0
    return (-(k.duration_ns or 0.0), -high, k.kernel)
