"""`grid-underfill`: the launch gives the GPU fewer workgroups than it has compute units, so some
CUs sit idle for the whole kernel; the gain is bounded by the idle share (and the roofs), so it ranks
by that bound like every other item. `bandwidth-bound`: the no-counter bandwidth roof; its estimate
is the headroom below it, and the engine caps every other estimate there."""

from __future__ import annotations

from hotspot.plan.context import PlanContext, is_kernarg_load
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.plan.roofline import known_launch


# "Mostly idle" only when more than half the CUs have nothing to run.
MOSTLY_IDLE_FRACTION = 0.5
# Spreading the work over every CU wins at most the idle share; the low end allows for what the split
# costs (a split-K reduction or atomics, smaller tiles with less reuse per workgroup).
UNDERFILL_LOW_FACTOR = 0.5


def grid_underfill(ctx: PlanContext, rule: Rule) -> Outcome:
    launch = known_launch(ctx)
    if launch is None:
        return ("the launch's grid is unknown (no kernel-trace or rocpd row matched to this dispatch): "
                "no grid-based item")
    groups, cus = launch["workgroups"], launch["cus"]
    if groups >= cus:
        return f"{groups:,} workgroups for {cus} CUs: every CU gets work"
    idle = cus - groups
    idle_share = idle / cus
    ev = [Evidence("workgroups", groups, cus, "<"), Evidence("compute_units", cus),
          Evidence("idle_compute_units", idle), Evidence("idle_share_of_cus", round(idle_share, 3)),
          Evidence("grid", "x".join(str(g) for g in launch.get("grid") or ())),
          Evidence("workgroup", "x".join(str(w) for w in launch["workgroup"])),
          Evidence("launch_source", launch.get("source"))]
    if isinstance(launch.get("duration_ns"), int):
        ev.append(Evidence("kernel_duration_ns", launch["duration_ns"]))
    # Spreading the work shrinks each workgroup's work, not the fixed latency every wave pays
    # (kernel-argument round trips at the entry): that share of the waves' time stays.
    fixed = fixed_entry_cycles(ctx)
    fixed_share = min(1.0, fixed / ctx.total_cycles) if ctx.total_cycles else 0.0
    high = idle_share * (1.0 - fixed_share)
    if fixed:
        ev.append(Evidence("fixed_entry_share_of_cycles", round(fixed_share, 3)))
    picture = (", and the traced CU's numbers describe a GPU that is mostly idle"
               if idle_share > MOSTLY_IDLE_FRACTION else "")
    # The estimate is a share of the kernel's time, not of the traced waves' cycles: every busy CU
    # runs for the whole kernel, so the target is all of the traced cycles and the removable share
    # is the idle share of the CUs.
    return [Candidate(
        ctx.kernel_location(), ev, ctx.total_cycles,
        f"the launch makes {groups:,} workgroups for {cus} compute units: {idle} CUs "
        f"({idle_share:.0%}) have nothing to run for the whole kernel{picture}",
        title=f"grid underfill: {groups:,} workgroups on {cus} CUs",
        removable=(UNDERFILL_LOW_FACTOR * high, high), kernel_time=True,
        basis=(f"{groups} of {cus} CUs work, so spreading the same work over all of them shortens the "
               f"kernel by at most the idle {idle_share:.0%} of its time"
               + (f", less the {fixed_share:.0%} of the waves' time that is fixed entry latency "
                  "(kernel-argument round trips do not shrink with the work)" if fixed else "")
               + "; the low end allows for what the split costs (a reduction pass or atomics, less "
                 "reuse per smaller tile)"))]


def fixed_entry_cycles(ctx: PlanContext) -> float:
    """Stall the waves spend waiting for kernel arguments (scalar loads outside loops): a cost per
    wave that does not shrink when the work is split over more workgroups."""
    total = 0.0
    for w in ctx.waits():
        for p in w.get("producers") or []:
            if isinstance(p, dict) and is_kernarg_load(ctx, w, p):
                total += float(p.get("blamed_stall") or 0.0)
    return total


# Without counters, bytes come from the ISA: per-lane width x lanes x executions of every VMEM load
# and store. At or above this fraction of the product's peak HBM bandwidth, the kernel is near the
# roof: memory-latency fixes can only win the headroom that is left.
NEAR_PEAK_FRACTION = 0.6
VMEM_CATEGORIES = ("vmem-load", "vmem-store", "flat")


def isa_bytes_per_wave(ctx: PlanContext, wave_size: int) -> float | None:
    """Bytes the traced waves' VMEM instructions request, per wave (ISA widths x lanes x hits)."""
    from hotspot.plan.access_rules import store_bytes_per_lane, bytes_per_lane

    waves = int((ctx.data.get("dispatch") or {}).get("waves") or 0)
    if not waves:
        return None
    total = 0
    for cat in VMEM_CATEGORIES:
        for i in ctx.executed(cat):
            isa = str(i.get("isa") or "")
            width = bytes_per_lane(isa) or store_bytes_per_lane(isa)
            if width:
                total += width * wave_size * int(i.get("hit") or 0)
    return total / waves


def bandwidth_bound(ctx: PlanContext, rule: Rule) -> Outcome:
    from hotspot.arch.targets import find_target

    occ = ctx.occupancy() or {}
    launch = occ.get("launch")
    target = find_target(ctx.gfx)
    if not isinstance(launch, dict) or target is None:
        return "no launch (grid, duration) or arch for a bandwidth bound"
    duration, peak = launch.get("duration_ns"), launch.get("peak_hbm_gbps")
    if not isinstance(duration, int) or duration <= 0 or not peak:
        return "kernel duration or the product's peak bandwidth is unknown"
    per_wave = isa_bytes_per_wave(ctx, target.wave_size)
    if not per_wave:
        return "no VMEM traffic in the traced waves"
    wg_threads = 1
    for w in launch["workgroup"]:
        wg_threads *= w
    waves = launch["workgroups"] * -(-wg_threads // target.wave_size)
    gbps = per_wave * waves / duration  # bytes per ns = GB/s
    fraction = gbps / peak
    if fraction < NEAR_PEAK_FRACTION:
        return f"ISA bytes ÷ duration = {gbps:,.0f} GB/s, {fraction:.0%} of peak (< {NEAR_PEAK_FRACTION:.0%})"
    ev = [Evidence("isa_bytes_per_wave", round(per_wave)), Evidence("waves_in_grid", waves),
          Evidence("kernel_duration_ns", duration), Evidence("achieved_gbps", round(gbps)),
          Evidence("peak_hbm_gbps", peak), Evidence("fraction_of_peak", round(fraction, 3),
                                                    NEAR_PEAK_FRACTION, ">=")]
    memory_stall = ctx.category_stall("wait-vmcnt", "wait-mixed", *VMEM_CATEGORIES)
    return [Candidate(
        ctx.kernel_location(), ev, memory_stall,
        f"the traced waves' memory instructions, over the whole grid and the kernel's duration, "
        f"request {gbps:,.0f} GB/s, {fraction:.0%} of the product's {peak:,.0f} GB/s: the kernel is "
        "near the bandwidth roof (caches may serve part of it; `--pmc` counters measure it)"
        + (f"; its memory waits ({memory_stall / ctx.total_stall:.0%} of stall) are what the roof looks "
           "like from inside a wave, not a scheduling fault" if ctx.total_stall else ""),
        title=f"memory traffic near the bandwidth peak ({fraction:.0%} of {peak:,.0f} GB/s, no counters)",
        removable=(0.0, max(0.0, 1.0 - fraction)), kernel_time=True,
        basis=(f"the roofline: a change that keeps the bytes wins at most the {max(0.0, 1 - fraction):.0%} "
               "of the kernel's time left below the bandwidth peak (every other estimate is capped "
               "there); only fewer bytes win more"))]
