"""`grid-underfill`: the launch gives the GPU fewer workgroups than it has compute units, so some
CUs sit idle for the whole kernel; the gain is bounded by the idle share (and the roofs), so it ranks
by that bound like every other item. `bandwidth-bound`: the no-counter bandwidth roof; its estimate
is the headroom below it, and the engine caps every other estimate there."""

from __future__ import annotations

from hotspot.arch.classify import VMCNT_WAITS, VMEM_ACCESS, Category
from hotspot.att.launch_match import MATCHED, LaunchOut
from hotspot.att.representativeness import STEADY_LOOP_MIN_SHARE
from hotspot.plan.context import PlanContext, is_kernarg_load
from hotspot.plan.model import UNREPRESENTATIVE, Candidate, Evidence, Outcome, Rule
from hotspot.plan.roofline import known_launch
from hotspot.record import record


# "Mostly idle" only when more than half the CUs have nothing to run.
MOSTLY_IDLE_FRACTION = 0.5
# Spreading the work over every CU wins at most the idle share; the low end allows for what the split
# costs (a split-K reduction or atomics, smaller tiles with less reuse per workgroup).
UNDERFILL_LOW_FACTOR = 0.5


def launch_not_matched(launch: LaunchOut) -> str | None:
    """Why no grid-based item may use this launch (hotspot/att/launch_match.py status), or None."""
    if launch.status == MATCHED:
        return None
    return f"the launch is {launch.status}: {launch.reason or 'no row matches the traced dispatch'}"


def _launch_source(launch: LaunchOut) -> str:
    """`file row N (dispatch D), matched by <how>` for evidence."""
    rows = launch.rows
    where = ", ".join(f"row {r.row}" + (f" (dispatch {r.dispatch_id})" if r.dispatch_id is not None else "")
                      for r in rows[:3])
    more = (launch.row_count or len(rows)) - min(3, len(rows))
    return (f"{launch.source} {where}{f' +{more} more' if more > 0 else ''}, matched by "
            f"{launch.match}")


def grid_underfill(ctx: PlanContext, rule: Rule) -> Outcome:
    known = known_launch(ctx)
    if known is None:
        occ = ctx.occupancy()
        raw = occ.launch if occ is not None else None
        why = ((raw is not None and launch_not_matched(raw))
               or "the launch's grid is unknown (no kernel-trace or rocpd row matched to this dispatch)")
        return underfill_from_capture(ctx, why)
    launch = known.launch
    groups, cus = known.workgroups, known.cus
    if groups >= cus:
        return f"{groups:,} workgroups for {cus} CUs: every CU gets work"
    idle = cus - groups
    idle_share = idle / cus
    ev = [Evidence("workgroups", groups, cus, "<"), Evidence("compute_units", cus),
          Evidence("idle_compute_units", idle), Evidence("idle_share_of_cus", round(idle_share, 3)),
          Evidence("grid", "x".join(str(g) for g in launch.grid or ())),
          Evidence("workgroup", "x".join(str(w) for w in known.workgroup)),
          Evidence("launch_source", _launch_source(launch))]
    if launch.duration_ns is not None:
        ev.append(Evidence("kernel_duration_ns", launch.duration_ns))
        ev.append(Evidence("duration_source", launch.duration_source))
    return _underfill(
        ctx, ev, idle_share, f"{groups} of {cus} CUs work",
        f"the launch makes {groups:,} workgroups for {cus} compute units: {idle} CUs "
        f"({idle_share:.0%}) have nothing to run for the whole kernel",
        f"grid underfill: {groups:,} workgroups on {cus} CUs")


def _underfill(ctx: PlanContext, ev: list[Evidence], idle_share: float, working: str, text: str,
               title: str) -> list[Candidate]:
    """The item for `idle_share` of the CUs idle: high = the idle share less the fixed entry
    latency share, low = UNDERFILL_LOW_FACTOR of it."""
    high, fixed_share = _idle_bound(ctx, idle_share, ev)
    picture = (", and the traced CU's numbers describe a GPU that is mostly idle"
               if idle_share > MOSTLY_IDLE_FRACTION else "")
    # The estimate is a share of the kernel's time, not of the traced waves' cycles: every busy CU
    # runs for the whole kernel, so the target is all of the traced cycles and the removable share
    # is the idle share of the CUs.
    return [Candidate(
        ctx.kernel_location(), ev, ctx.total_cycles, text + picture, title=title,
        removable=(UNDERFILL_LOW_FACTOR * high, high), kernel_time=True,
        basis=(f"{working}, so spreading the same work over all of them shortens the kernel by at "
               f"most the idle {idle_share:.0%} of its time" + _split_costs(fixed_share)))]


def _idle_bound(ctx: PlanContext, idle_share: float, ev: list[Evidence]) -> tuple[float, float]:
    """(high estimate, fixed share): the idle share less the fixed per-workgroup share. Spreading
    the work shrinks each workgroup's loop work, not what every wave pays once: the prologue and
    epilogue outside the loops that repeat (kernel-argument round trips, address setup, the output
    tile's stores). With T = F + L per wave and G workgroups split over C CUs, a wave takes
    F + L x G/C: the gain is the idle share x L / (F + L). A wave with no repeating loop keeps
    only its kernel-argument latency as fixed (its work split is unknown)."""
    fixed = fixed_workgroup_cycles(ctx)
    how = "prologue and epilogue outside the repeating loops"
    if fixed is None:
        fixed, how = fixed_entry_cycles(ctx), "kernel-argument latency"
    fixed_share = min(1.0, fixed / ctx.total_cycles) if ctx.total_cycles else 0.0
    if fixed:
        ev.append(Evidence("fixed_workgroup_share_of_cycles", round(fixed_share, 3)))
        ev.append(Evidence("fixed_workgroup_cost", how))
    return idle_share * (1.0 - fixed_share), fixed_share


def fixed_workgroup_cycles(ctx: PlanContext) -> float | None:
    """Cycles of the traced waves outside every loop that repeats (the once-per-wave prologue and
    epilogue); None when no loop repeats."""
    ranges = ctx.loop_ranges
    if not ranges:
        return None
    return float(sum(i.latency for n, i in ctx.instructions.items()
                     if not any(lo <= n <= hi for lo, hi in ranges)))


def _split_costs(fixed_share: float) -> str:
    return ((f", less the {fixed_share:.0%} of the waves' time that is a fixed cost per workgroup "
             "(the prologue and epilogue around the loops, kernel-argument round trips: they do not "
             "shrink when the work is split)" if fixed_share else "")
            + "; the low end allows for what the split costs (a reduction pass or atomics, less "
              "reuse per smaller tile)")


def underfill_from_capture(ctx: PlanContext, no_launch: str) -> Outcome:
    """Grid underfill measured in occupancy.json when no launch row gives the grid: every traced
    shader engine shows its whole share of the grid resident at once (the one-round rule,
    hotspot/arch/achieved.py) on fewer CUs than the SE has. The idle share is over the traced SEs
    only (a lower bound on the GPU's idle CUs when the other SEs look alike; the grid itself stays
    unknown). An SE is taken to have at least the whole part of the product's CUs per SE (MI300's
    9.5 average: 9), so a capture that could be full never fires; the share uses the average."""
    from hotspot.arch.products import find_product

    occ = ctx.occupancy()
    achieved = occ.achieved if occ is not None else None
    if occ is None or achieved is None or not achieved.busy_cus_per_se:
        return f"{no_launch}; occupancy.json shows no CU per shader engine: no grid-based item"
    busy = achieved.busy_cus_per_se
    rep = ctx.analysis.representativeness
    if rep is not None and rep.level == UNREPRESENTATIVE:
        return f"{no_launch}; the capture does not represent the kernel, so neither does its occupancy.json"
    # With the grid unknown, the capture must show work a split can spread: a loop holding a
    # material share of the stall that repeats per wave (split-K/split-KV divide its iterations).
    # A straight-line wave (one fixed-cost pass) gives no such evidence.
    splittable = [lp for lp in ctx.loops if lp.share >= STEADY_LOOP_MIN_SHARE]
    if not splittable:
        return (f"{no_launch}; no loop holding ≥ {STEADY_LOOP_MIN_SHARE:.0%} of the stall repeats per "
                "wave: with the grid unknown, the capture shows no work a split could spread")
    one_round = achieved.one_round
    if one_round is not True:
        return (f"{no_launch}; occupancy.json shows "
                + ("a CU starting work after work ended (more than one round of workgroups)"
                   if one_round is False else "no wave end, so whether the grid fit in one round is unknown")
                + ": the CUs' spread says nothing about the grid")
    # A dispatcher with work left spreads it over free CUs before it packs a CU to the occupancy
    # limit: busy CUs at that limit beside idle ones mean the idle CUs were not this kernel's to use
    # (a CU mask, another kernel), which a small grid does not explain.
    allowed, peak = occ.waves_per_simd, achieved.peak_waves_per_simd
    if allowed is None or peak >= allowed:
        return (f"{no_launch}; the busy CUs reach {peak} waves/SIMD of the "
                f"{allowed if allowed is not None else 'unknown'} the kernel's occupancy allows: "
                "the capture cannot tell CUs left idle by a small grid from CUs the dispatcher could "
                "not use")
    product = find_product(ctx.analysis.arch.product or "")
    per_se = product.cus_per_se if product is not None else None
    if not per_se or product is None:
        return f"{no_launch}; the product's CUs per shader engine are unknown: no capture-based underfill"
    ses = len(busy)
    busy_cus = sum(int(n) for n in busy.values())
    if busy_cus >= ses * int(per_se):
        return (f"{no_launch}; occupancy.json shows {busy_cus} busy CUs on {ses} traced shader engines "
                f"of {per_se:g} CUs each: every CU gets work")
    capacity = ses * per_se
    idle_share = 1.0 - busy_cus / capacity
    per_se_text = " ".join(f"SE{se}:{n}" for se, n in busy.items())
    ev = [Evidence("busy_cus_on_traced_ses", busy_cus, round(capacity, 1), "<"),
          Evidence("traced_shader_engines", ses), Evidence("busy_cus_per_se", per_se_text),
          Evidence("cus_per_se", int(per_se) if float(per_se).is_integer() else per_se),
          Evidence("cus_per_se_source", product.source("cus_per_se")),
          Evidence("one_round", True), Evidence("peak_waves_per_simd", peak, allowed, "<"),
          Evidence("idle_share_of_cus", round(idle_share, 3)),
          Evidence("launch_source", f"occupancy.json on {ses} traced shader engines (a lower bound on "
                                    "idle CUs in the traced SEs only; the grid itself is unknown)")]
    return _underfill(
        ctx, ev, idle_share, f"{busy_cus} of {capacity:g} CUs of the traced shader engines work in one round",
        f"{no_launch}; measured on the traced shader engines instead: occupancy.json shows {busy_cus} "
        f"of their {capacity:g} CUs ever run a workgroup and none gets a second one after work ends (the "
        f"whole grid was resident at once), so {idle_share:.0%} of the CUs have nothing to run for "
        "the whole kernel",
        f"grid underfill measured on the traced shader engines: {busy_cus} of {capacity:g} CUs busy")


def fixed_entry_cycles(ctx: PlanContext) -> float:
    """Stall the waves spend waiting for kernel arguments (scalar loads outside loops): a cost per
    wave that does not shrink when the work is split over more workgroups."""
    total = 0.0
    for w in ctx.waits():
        for p in w.producers:
            if is_kernarg_load(ctx, w, p):
                total += p.blamed_stall
    return total


# Without counters, bytes come from the ISA: per-lane width x lanes x executions of every VMEM load
# and store. At or above this fraction of the product's peak HBM bandwidth, the kernel is near the
# roof: memory-latency fixes can only win the headroom that is left.
NEAR_PEAK_FRACTION = 0.6
# Above this fraction even the unique bytes exceed the peak: the caches serve part of them and the
# DRAM share is unknown without counters (the bound then caps nothing).
CACHE_SERVED_FRACTION = 1.0


@record
class IsaTraffic:
    """VMEM bytes of the whole grid from the ISA, two ways.

    `requested_bytes` (an upper bound on DRAM bytes): every executed load/store's width x lanes x
    executions per traced wave, times the grid's waves: re-reads the caches serve count every time.
    `unique_bytes` (a lower bound: the bytes the grid needs once, perfect cache reuse): a row whose
    address follows only some workgroup dimensions (hotspot/att/address_taint.py) counts once per
    distinct value of those dimensions (a GEMM's A tile once per row of workgroups; a tensor every
    workgroup reads, once), and a row in a loop whose address registers the loop never writes
    counts once per wave (the same bytes every iteration). Tiles that overlap between workgroups
    some other way (halos, strided windows) are not detected."""

    requested_per_wave: float
    requested_bytes: float
    unique_bytes: float
    same_for_all_workgroups: list[int]   # rows counted once for the grid
    loop_invariant: list[int]            # rows counted once per wave
    shared: list[str]                    # "#row (dims it follows)" for rows following some dims only


AXES = "xyz"
# The categories whose bytes count, in taxonomy order (the order their rows are listed in evidence).
VMEM_ACCESS_ORDER = tuple(c for c in Category if c in VMEM_ACCESS)


def isa_traffic(ctx: PlanContext, wave_size: int, groups_per_dim: list[int],
                waves_per_workgroup: int) -> IsaTraffic | None:
    """The grid's VMEM bytes from the traced waves' ISA (None without traced waves)."""
    from hotspot.att.address_taint import (
        loop_invariant_addresses,
        taint_of_addresses,
        workgroup_dims,
        workgroup_registers,
    )
    from hotspot.plan.access_rules import bytes_per_lane, store_bytes_per_lane

    waves = ctx.traced_waves
    if not waves:
        return None
    grid_groups = 1
    for g in groups_per_dim:
        grid_groups *= g
    order = [(n, ctx.instructions[n].isa) for n in ctx.order if ctx.instructions[n].hit > 0]
    loops = ctx.loop_ranges
    taints = taint_of_addresses(order, loops)
    dims = workgroup_dims(order)
    invariant = loop_invariant_addresses(order, loops)
    requested = unique = 0.0
    same, once, shared = [], [], []
    for cat in VMEM_ACCESS_ORDER:
        for i in ctx.executed(cat):
            isa = i.isa
            width = bytes_per_lane(isa) or store_bytes_per_lane(isa)
            if not width:
                continue
            n, hits = i.line_number, i.hit
            per_wave = width * wave_size * hits / waves
            requested += per_wave
            if n in invariant:
                once.append(n)
                per_wave = width * wave_size * min(hits, waves) / waves  # once per wave
            regs = workgroup_registers(taints.get(n, frozenset()))
            followed = {dims[r] for r in regs} if dims is not None and n in taints and regs <= set(dims) else None
            if followed is None or len(followed) >= len(groups_per_dim):
                unique += per_wave * waves_per_workgroup * grid_groups  # every workgroup its own bytes
                continue
            distinct = 1
            for d in followed:
                distinct *= groups_per_dim[d]
            unique += per_wave * waves_per_workgroup * min(distinct, grid_groups)
            if not followed:
                same.append(n)
            elif distinct < grid_groups:
                shared.append(f"#{n} ({''.join(AXES[d] for d in sorted(followed))})")
    return IsaTraffic(requested, requested * waves_per_workgroup * grid_groups, unique, sorted(same),
                      sorted(once), shared)


def _rows(rows: list[int]) -> str:
    return " ".join(f"#{n}" for n in rows) or "none"


def bandwidth_bound(ctx: PlanContext, rule: Rule) -> Outcome:
    from hotspot.att.launch_match import waves_per_workgroup
    from hotspot.arch.targets import find_target

    if ctx.pmc is not None:
        return "counters (--pmc) measure the bandwidth: the ISA estimate is not used"
    occ = ctx.occupancy()
    launch = occ.launch if occ is not None else None
    target = find_target(ctx.gfx)
    if launch is None or target is None:
        return "no launch (grid, duration) or arch for a bandwidth bound"
    unmatched = launch_not_matched(launch)
    if unmatched:
        return unmatched
    duration, peak = launch.duration_ns, launch.peak_hbm_gbps
    if duration is None or duration <= 0 or not peak:
        return "kernel duration or the product's peak bandwidth is unknown"
    if launch.workgroup is None or launch.grid is None or launch.workgroups is None:
        return "the launch's grid is unknown"
    per_wg = waves_per_workgroup(launch.workgroup, target.wave_size)
    waves = launch.workgroups * per_wg
    groups = [-(-g // w) for g, w in zip(launch.grid, launch.workgroup)]
    traffic = isa_traffic(ctx, target.wave_size, groups, per_wg)
    if traffic is None or not traffic.requested_per_wave:
        return "no VMEM traffic in the traced waves"
    gbps = traffic.unique_bytes / duration  # bytes per ns = GB/s
    requested_gbps = traffic.requested_bytes / duration
    fraction = gbps / peak
    if fraction < NEAR_PEAK_FRACTION:
        return (f"unique ISA bytes ÷ duration = {gbps:,.0f} GB/s, {fraction:.0%} of peak "
                f"(< {NEAR_PEAK_FRACTION:.0%}; {requested_gbps:,.0f} GB/s requested counting re-reads)")
    cache_served = fraction > CACHE_SERVED_FRACTION
    ev = [Evidence("isa_bytes_per_wave", round(traffic.requested_per_wave)), Evidence("waves_in_grid", waves),
          Evidence("requested_bytes", round(traffic.requested_bytes)),
          Evidence("unique_bytes", round(traffic.unique_bytes)),
          Evidence("rows_same_for_all_workgroups", _rows(traffic.same_for_all_workgroups)),
          Evidence("rows_loop_invariant", _rows(traffic.loop_invariant)),
          Evidence("rows_shared_along_workgroup_dims", " ".join(traffic.shared) or "none"),
          Evidence("kernel_duration_ns", duration), Evidence("duration_source", launch.duration_source),
          Evidence("launch_source", _launch_source(launch)),
          Evidence("achieved_gbps", round(gbps)), Evidence("requested_gbps", round(requested_gbps)),
          Evidence("peak_hbm_gbps", peak),
          Evidence("fraction_of_peak", round(fraction, 3), NEAR_PEAK_FRACTION, ">="),
          Evidence("dram_share_known", not cache_served)]
    memory_stall = ctx.category_stall(*VMCNT_WAITS, *VMEM_ACCESS)
    if cache_served:
        return [Candidate(
            ctx.kernel_location(), ev, memory_stall,
            f"even counted once per tensor the traced waves' memory instructions request "
            f"{gbps:,.0f} GB/s over the grid and the kernel's duration, {fraction:.0%} of the "
            f"product's {peak:,.0f} GB/s: more than DRAM can deliver, so caches serve part of it "
            "(cache-served; DRAM share unknown without counters: `--pmc` measures it)",
            title=f"memory traffic above the bandwidth peak: cache-served ({fraction:.0%} of "
                  f"{peak:,.0f} GB/s, no counters)",
            removable=(0.0, 0.0),
            basis="informational: the DRAM share is unknown, so no memory estimate is capped")]
    return [Candidate(
        ctx.kernel_location(), ev, memory_stall,
        f"the traced waves' memory instructions, over the whole grid and the kernel's duration, "
        f"need {gbps:,.0f} GB/s of unique bytes ({requested_gbps:,.0f} GB/s requested counting "
        f"re-reads), {fraction:.0%} of the product's {peak:,.0f} GB/s: the kernel is near the "
        "bandwidth roof (caches may serve part of it; `--pmc` counters measure it)"
        + (f"; its memory waits ({memory_stall / ctx.total_stall:.0%} of stall) are what the roof looks "
           "like from inside a wave, not a scheduling fault" if ctx.total_stall else ""),
        title=f"memory traffic near the bandwidth peak ({fraction:.0%} of {peak:,.0f} GB/s, no counters)",
        removable=(0.0, max(0.0, 1.0 - fraction)), kernel_time=True,
        basis=(f"the roofline: a change that keeps the bytes wins at most the {max(0.0, 1 - fraction):.0%} "
               "of the kernel's time left below the bandwidth peak (every other estimate is capped "
               "there); only fewer bytes win more"))]
