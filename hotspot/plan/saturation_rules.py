"""`streaming-saturated`: a streaming kernel already at the hardware wave limit.

When every SIMD holds the most waves the hardware allows (8 on gfx90a/942/950) and the kernel
only moves bytes (no MFMA), its memory waits are what streaming costs: while one wave waits, the
others issue theirs. More waves are impossible, and a wave issuing its load earlier only overlaps
what the other waves already overlap. The bound is the memory system (or issue), not the waits:
the verdict says so, and every latency item is capped by the streaming bound — the bandwidth the
trace shows the resident waves moving, against the product's peak.

The bandwidth from the trace: each traced wave moves B bytes (per-lane width x lanes x executions
of its VMEM loads and stores) over its lifetime T cycles; M waves resident per SIMD (achieved,
else the limit) x SIMDs per CU move M x SIMDs x B / T bytes per cycle per CU; x CUs x the
product's peak engine clock gives bytes per second (the peak clock makes it an upper bound, so the
cap it sets is never optimistic).
"""

from __future__ import annotations

from hotspot.arch.classify import LATENCY_WAITS, VMEM_ACCESS, Category
from hotspot.arch.products import find_product
from hotspot.arch.targets import find_target
from hotspot.plan.access_rules import bytes_per_lane, store_bytes_per_lane
from hotspot.plan.context import PlanContext
from hotspot.plan.conventions import BYTES_PER_GB, HZ_PER_MHZ, PCT
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.plan.resource_rules import OCCUPANCY_MIN_ACHIEVED_FRACTION, OCCUPANCY_MIN_WAIT_SHARE
from hotspot.record import record

# The metric the engine reads to cap the latency items (engine._roof_caps).
TRACE_FRACTION_METRIC = "trace_fraction_of_peak"


@record
class TraceBandwidth:
    bytes_per_wave: float
    cycles_per_wave: float
    waves_per_simd: float
    gbps: float
    peak_gbps: float

    @property
    def fraction(self) -> float:
        return self.gbps / self.peak_gbps if self.peak_gbps else 0.0


def trace_bandwidth(ctx: PlanContext, waves_per_simd: float) -> TraceBandwidth | None:
    """The bandwidth the resident waves move by the trace (module doc); None without the product."""
    product = find_product(ctx.analysis.arch.product or "")
    target = find_target(ctx.gfx)
    waves = ctx.traced_waves
    if product is None or target is None or not waves or not ctx.total_cycles:
        return None
    moved = 0.0
    for cat in (c for c in Category if c in VMEM_ACCESS):
        for i in ctx.executed(cat):
            width = bytes_per_lane(i.isa) or store_bytes_per_lane(i.isa)
            if width:
                moved += width * target.wave_size * i.hit
    if moved <= 0:
        return None
    per_wave, cycles = moved / waves, ctx.total_cycles / waves
    per_cu_cycle = waves_per_simd * target.simds_per_cu * per_wave / cycles
    gbps = per_cu_cycle * product.cus * product.peak_engine_clock_mhz * HZ_PER_MHZ / BYTES_PER_GB
    return TraceBandwidth(per_wave, cycles, waves_per_simd, gbps, product.peak_hbm_gbps)


def streaming_saturated(ctx: PlanContext, rule: Rule) -> Outcome:
    occ = ctx.occupancy()
    if occ is None or not occ.waves_per_simd:
        return "occupancy unknown"
    cap = occ.limits.hardware
    waves = occ.waves_per_simd
    if cap is None or waves < cap:
        return f"{waves} waves/SIMD, below the hardware limit of {cap}: more waves are possible"
    achieved = occ.achieved.mean_waves_per_simd if occ.achieved is not None else None
    if achieved is not None and achieved < OCCUPANCY_MIN_ACHIEVED_FRACTION * cap:
        return (f"achieved {achieved:.2f} of {cap} waves/SIMD: the SIMDs are not full (launch tail or "
                "grid), so the limit is not what the waits face")
    if ctx.executed(Category.MFMA):
        return "the kernel runs MFMAs: not a streaming kernel"
    wait = ctx.category_stall(*LATENCY_WAITS)
    share = wait / ctx.total_stall if ctx.total_stall else 0.0
    if share < OCCUPANCY_MIN_WAIT_SHARE:
        return f"memory waits are {share:.0%} of stall (< {OCCUPANCY_MIN_WAIT_SHARE:.0%}): not a streaming wait"
    resident = float(achieved) if achieved is not None else float(cap)
    bw = trace_bandwidth(ctx, resident)
    ev = [Evidence("waves_per_simd", waves, cap, ">="), Evidence("hardware_wave_limit", cap),
          Evidence("memory_wait_share_of_stall", round(share, 3), OCCUPANCY_MIN_WAIT_SHARE, ">=")]
    if achieved is not None:
        ev.append(Evidence("achieved_mean_waves_per_simd", round(resident, 2)))
    if bw is not None and bw.fraction > 1.0:
        ev += [Evidence("trace_gbps_at_peak_clock", round(bw.gbps)), Evidence("peak_hbm_gbps", bw.peak_gbps)]
        bound = (f"the waves request {bw.gbps:,.0f} GB/s by the trace, more than the {bw.peak_gbps:,.0f} GB/s "
                 "peak: caches serve part of it, so the DRAM share and the streaming bound are unknown "
                 "without counters (--pmc)")
        removable = (0.0, 0.0)
    elif bw is not None:
        fraction = bw.fraction
        ev += [Evidence("bytes_per_wave", round(bw.bytes_per_wave)), Evidence("cycles_per_wave", round(bw.cycles_per_wave)),
               Evidence("trace_gbps_at_peak_clock", round(bw.gbps)), Evidence("peak_hbm_gbps", bw.peak_gbps),
               Evidence(TRACE_FRACTION_METRIC, round(bw.fraction, 3))]
        bound = (f"the resident waves move {bw.gbps:,.0f} GB/s by the trace (at the peak clock), "
                 f"{bw.fraction:.0%} of the {bw.peak_gbps:,.0f} GB/s peak: a latency change wins at most "
                 f"the {PCT * (1 - fraction):.0f}% below that roof")
        removable = (0.0, 1.0 - fraction)
    else:
        bound = "the product (peak bandwidth, clock) is unknown, so the streaming bound is not measured"
        removable = (0.0, 0.0)
    return [Candidate(
        ctx.kernel_location(), ev, wait,
        f"every SIMD holds {resident:.2g} of the hardware's {cap} waves and the kernel only streams bytes "
        f"(no MFMA): its memory waits ({share:.0%} of stall) overlap the other waves' work already, so "
        f"latency hiding is exhausted — no more waves are possible; {bound}",
        title=f"streaming kernel at the hardware wave limit ({cap} waves/SIMD): latency hiding is exhausted",
        removable=removable, kernel_time=True,
        basis=("the streaming bound: " + bound + "; only fewer bytes (narrower types, fusion) or more "
               "bytes in flight per wave below that roof change the time"),
        absorbed_by="bandwidth-bound")]
