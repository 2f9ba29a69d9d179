"""`grid-underfill`: the launch gives the GPU fewer workgroups than it has compute units. Then most
CUs sit idle for the whole kernel and no per-instruction change matters: it is item #1."""

from __future__ import annotations

from hotspot.att.launch import MATCHED
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule


def launch_not_matched(launch: dict) -> str | None:
    """Why no grid-based item may use this launch (hotspot/att/launch.py status), or None."""
    status = launch.get("status", MATCHED)
    if status == MATCHED:
        return None
    return f"the launch is {status}: {launch.get('reason') or 'no row matches the traced dispatch'}"


def _launch_source(launch: dict) -> str:
    """`file row N (dispatch D), matched by <how>` for evidence."""
    rows = launch.get("rows") or []
    where = ", ".join(f"row {r.get('row')}" + (f" (dispatch {r['dispatch_id']})"
                                               if r.get("dispatch_id") is not None else "")
                      for r in rows[:3] if isinstance(r, dict))
    more = (launch.get("row_count") or len(rows)) - min(3, len(rows))
    return (f"{launch.get('source')} {where}{f' +{more} more' if more > 0 else ''}, matched by "
            f"{launch.get('match')}")


def grid_underfill(ctx: PlanContext, rule: Rule) -> Outcome:
    occ = ctx.occupancy() or {}
    launch = occ.get("launch")
    if not isinstance(launch, dict):
        return "no launch (grid, workgroup size) for this kernel: needs a kernel trace or rocpd row"
    unmatched = launch_not_matched(launch)
    if unmatched:
        return unmatched
    groups, cus = launch.get("workgroups"), launch.get("cus")
    if not isinstance(groups, int) or not isinstance(cus, int) or cus <= 0:
        return "the product's compute-unit count is unknown (arch product not identified)"
    if groups >= cus:
        return f"{groups:,} workgroups for {cus} CUs: every CU gets work"
    idle = cus - groups
    ev = [Evidence("workgroups", groups, cus, "<"), Evidence("compute_units", cus),
          Evidence("idle_compute_units", idle), Evidence("grid", "x".join(str(g) for g in launch["grid"])),
          Evidence("workgroup", "x".join(str(w) for w in launch["workgroup"])),
          Evidence("launch_source", _launch_source(launch))]
    if isinstance(launch.get("duration_ns"), int):
        ev.append(Evidence("kernel_duration_ns", launch["duration_ns"]))
        ev.append(Evidence("duration_source", launch.get("duration_source")))
    return [Candidate(
        ctx.kernel_location(), ev, ctx.total_stall,
        f"the launch makes {groups:,} workgroups for {cus} compute units: {idle} CUs "
        f"({idle / cus:.0%}) have nothing to run for the whole kernel, and the traced CU's numbers "
        "describe a GPU that is mostly idle",
        title=f"grid underfill: {groups:,} workgroups on {cus} CUs",
        removable=(0.0, 0.0),
        basis=(f"no per-instruction estimate: {groups} of {cus} CUs work, so spreading the same work "
               f"over all of them can shorten the kernel by up to {100 * idle / cus:.0f}% of its time"))]


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
    unmatched = launch_not_matched(launch)
    if unmatched:
        return unmatched
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
        "near the bandwidth roof (caches may serve part of it; `--pmc` counters measure it)",
        title=f"memory traffic near the bandwidth peak ({fraction:.0%} of {peak:,.0f} GB/s, no counters)",
        removable=(0.0, 0.0),
        basis=f"informational: every memory-latency estimate is capped at the {max(0.0, 1 - fraction):.0%} "
              "of time the bandwidth headroom allows")]
