"""Occupancy (VGPR- or LDS-limited) and barrier-dominated rules."""

from __future__ import annotations

from hotspot.arch.classify import LATENCY_WAITS, Category
from hotspot.arch.occupancy_model import per_simd
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.pingpong_rules import conditional_barrier
from hotspot.plan.spin_rules import spin_loop
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.register_budget import grid_rounds, real_grid, vgpr_budget
from hotspot.plan.roofline import grid_waves_per_simd, known_launch

# Stall that one more resident wave can hide: waits on memory counters (another wave issues while
# this one waits). Barrier and pipe stalls are not hidden by more waves of other workgroups.
LATENCY_WAIT_CATEGORIES = LATENCY_WAITS
# More waves only pay when the kernel is latency-bound: at least a fifth of all stall is waiting on
# memory counters. Below that the extra wave mostly competes for the same pipes.
OCCUPANCY_MIN_WAIT_SHARE = 0.20
# If the traced CUs reach less than this fraction of the theoretical waves, the limit is not what
# keeps waves away (launch tail, too few workgroups); raising it changes nothing.
OCCUPANCY_MIN_ACHIEVED_FRACTION = 0.75
# One more wave hides at most 1/(W+1) of the latency-wait stall (W waves already take turns); a
# quarter of that is the conservative end (the new wave shares caches and memory pipes).
OCCUPANCY_GAIN_LOW_FACTOR = 0.25
# Barrier stall of at least a tenth of all stall means the workgroup waits for its slowest wave.
BARRIER_MIN_SHARE = 0.10

MFMA_REGISTER_CAP_WARNING = (
    " Do not force a register cap (__launch_bounds__ / amdgpu_waves_per_eu / maxnreg) on this MFMA "
    "kernel: the accumulators then spill to scratch, which costs far more than one extra wave; free "
    "registers by design instead (smaller tile or fewer accumulators per wave, fewer prefetch "
    "buffers held in VGPRs, LDS for data that is read once).")


def _occupancy_rule(ctx: PlanContext, rule: Rule, limiter: str) -> Outcome:
    occ = ctx.occupancy()
    if occ is None:
        return "no occupancy"
    limiters = list(occ.limiters) or [occ.limiter or ""]
    if limiter not in limiters:
        return f"occupancy is limited by {occ.limiter}, not {limiter}"
    waves = occ.waves_per_simd
    hw_cap = occ.limits.hardware
    unknown = [n for n in occ.unknown_limits if n in ("lds", "workgroup", "vgpr")]
    if unknown:
        # an unknown limit may be the real one: one more wave by this limit is not established
        return (f"the {' and '.join(unknown)} limit is unknown ({waves} waves/SIMD is an upper bound): "
                "give the kernel's resources (a kernel trace or rocpd db near the capture, or --meta)")
    if limiters and limiter != limiters[0] and limiters[0] in ("vgpr", "lds"):
        return f"reported with occupancy-{limiters[0]}: {' and '.join(limiters)} limit together"
    if waves is None or waves <= 0:
        return "theoretical waves per SIMD unknown"
    if hw_cap is not None and waves >= hw_cap:
        return f"already at the hardware cap of {hw_cap} waves/SIMD"
    grid = grid_waves_per_simd(ctx)
    if grid is not None and grid < waves + 1:
        # one more wave per SIMD needs the grid to have it: the launch, not the limit, caps occupancy
        return (f"the grid gives {grid:.2f} waves per SIMD when spread over every CU: one more wave "
                f"than the {limiter} limit's {waves} needs more workgroups, not fewer {limiter.upper()}s")
    rounds, rounds_next = grid_rounds(ctx, waves), grid_rounds(ctx, waves + 1)
    if rounds is not None and rounds_next is not None and rounds_next >= rounds:
        # time goes with the rounds of the real grid: the same rounds at W+1 leave it about unchanged
        return (f"the grid's {known_launch_workgroups(ctx)} workgroups take {rounds} round(s) at both "
                f"{waves} and {waves + 1} waves/SIMD: one more wave is about neutral")
    achieved = occ.achieved.mean_waves_per_simd if occ.achieved is not None else None
    if achieved is not None and achieved < OCCUPANCY_MIN_ACHIEVED_FRACTION * waves:
        return (f"achieved {achieved:.2f} of {waves} theoretical waves/SIMD: the {limiter} limit is "
                "not what keeps waves away (launch tail or too few workgroups)")
    wait = ctx.category_stall(*LATENCY_WAIT_CATEGORIES)
    share = wait / ctx.total_stall if ctx.total_stall else 0.0
    if share < OCCUPANCY_MIN_WAIT_SHARE:
        return (f"memory waits are {share:.0%} of stall (< {OCCUPANCY_MIN_WAIT_SHARE:.0%}): not "
                "latency-bound, more waves would not help")
    step = occ.next_step.get(limiter)
    message = step.message if step is not None else None
    high = 1.0 / (waves + 1)
    ev = [Evidence("waves_per_simd", waves), Evidence("limiter", limiter),
          Evidence("memory_wait_share_of_stall", round(share, 3), OCCUPANCY_MIN_WAIT_SHARE, ">=")]
    if achieved is not None:
        ev.append(Evidence("achieved_mean_waves_per_simd", round(float(achieved), 2),
                           round(OCCUPANCY_MIN_ACHIEVED_FRACTION * waves, 2), ">="))
    if message:
        ev.append(Evidence("next_step", message))
    fix_extra = f" Next step: {message}." if message else ""
    others = [name for name in limiters if name and name != limiter]
    title = f"{limiter.upper()}-limited occupancy ({per_simd(waves)}) in a latency-bound kernel"
    if others:
        # Several limits bind at the same wave count: one more wave needs every one of them moved,
        # so they are one item (the gain only comes when both change).
        ev.append(Evidence("also_limited_by", ", ".join(others)))
        for name in others:
            other = occ.next_step.get(name)
            if other is not None and other.message:
                fix_extra += f" And ({name}): {other.message}."
        fix_extra += (f" {' and '.join(n.upper() for n in [limiter] + others)} limit to the same wave "
                      "count: the gain needs all of these changes together.")
        title = (f"{'- and '.join(n.upper() for n in [limiter] + others)}-limited occupancy "
                 f"({per_simd(waves)}) in a latency-bound kernel")
    budget = vgpr_budget(ctx) if limiter == "vgpr" else None
    if budget is not None and budget.allowed_next is not None:
        # the ISA's real use against the next step (the allocation can be the profiler's rounding)
        ev.append(Evidence("vgprs_in_use_isa", budget.in_use, budget.allowed_next, ">"))
        ev.append(Evidence("vgprs_allowed_next", budget.allowed_next))
        if budget.in_use > budget.allowed_next:
            fix_extra += (f" The ISA uses {budget.in_use} VGPRs; {waves + 1} waves/SIMD allow "
                          f"{budget.allowed_next} per wave: free {budget.in_use - budget.allowed_next}.")
        else:
            fix_extra += (f" The ISA names only {budget.in_use} VGPRs, within the {budget.allowed_next} "
                          f"{waves + 1} waves/SIMD allow: the allocation the profiler reports binds, not the "
                          "code (check the compiler's register count and occupancy hints).")
    if limiter == "vgpr" and ctx.mix_dynamic(Category.MFMA) > 0:
        fix_extra += MFMA_REGISTER_CAP_WARNING
    return [Candidate(
        ctx.kernel_location(), ev, wait,
        f"{waves} waves/SIMD, limited by {limiter}: while every resident wave waits on memory the "
        "SIMD has nothing to issue",
        title=title,
        fix_extra=fix_extra,
        removable=(OCCUPANCY_GAIN_LOW_FACTOR * high, high),
        basis=(f"one more wave ({waves} -> {waves + 1}) hides at most 1/{waves + 1} of the memory-wait "
               f"stall; the low end is {OCCUPANCY_GAIN_LOW_FACTOR:g}x that (shared memory pipes)"))]


def occupancy_grid(ctx: PlanContext, rule: Rule) -> Outcome:
    """The launch gives each SIMD fewer waves than the resource limits allow (a persistent grid of
    CUs x k workgroups, or a small grid): more waves per CU, not fewer registers, is the lever."""
    occ = ctx.occupancy()
    waves = occ.waves_per_simd if occ is not None else None
    if occ is None or waves is None or waves <= 0:
        return "theoretical waves per SIMD unknown"
    launch = known_launch(ctx)
    grid = grid_waves_per_simd(ctx)
    if launch is None or grid is None:
        return "the launch's grid is unknown: no grid-based item"
    if launch.workgroups < launch.cus:
        return "fewer workgroups than CUs: reported as grid-underfill"
    if grid >= waves:
        return f"the grid gives {grid:.2f} waves per SIMD, at least the {waves} the resources allow"
    achieved = occ.achieved.mean_waves_per_simd if occ.achieved is not None else None
    if achieved is not None and achieved >= waves * OCCUPANCY_MIN_ACHIEVED_FRACTION:
        return f"achieved {achieved:.2f} of {waves} waves/SIMD: the SIMDs are already near the limit"
    wait = ctx.category_stall(*LATENCY_WAIT_CATEGORIES)
    share = wait / ctx.total_stall if ctx.total_stall else 0.0
    if share < OCCUPANCY_MIN_WAIT_SHARE:
        return (f"memory waits are {share:.0%} of stall (< {OCCUPANCY_MIN_WAIT_SHARE:.0%}): not "
                "latency-bound, more waves would not help")
    have = max(grid, float(achieved)) if achieved is not None else grid
    high = max(0.0, 1.0 - have / waves)
    per_cu = launch.workgroups / launch.cus
    ev = [Evidence("grid_waves_per_simd", round(grid, 2), waves, "<"),
          Evidence("allowed_waves_per_simd", waves), Evidence("limiter", occ.limiter),
          Evidence("workgroups", launch.workgroups), Evidence("compute_units", launch.cus),
          Evidence("workgroups_per_cu", round(per_cu, 2)),
          Evidence("memory_wait_share_of_stall", round(share, 3), OCCUPANCY_MIN_WAIT_SHARE, ">="),
          Evidence("launch_source", launch.launch.source)]
    if achieved is not None:
        ev.append(Evidence("achieved_mean_waves_per_simd", round(float(achieved), 2)))
    return [Candidate(
        ctx.kernel_location(), ev, wait,
        f"the grid ({launch.workgroups:,} workgroups, {per_cu:.2f} per CU) gives each SIMD "
        f"{grid:.2f} waves while registers and LDS allow {waves}: the latency-bound waits have fewer "
        "waves to hide behind than the kernel could hold",
        title=f"grid gives {grid:.2g} of {waves} allowed waves per SIMD (launch below occupancy)",
        removable=(OCCUPANCY_GAIN_LOW_FACTOR * high, high),
        basis=(f"going from {have:.2f} to {waves} waves/SIMD hides at most {high:.0%} of the "
               f"memory-wait stall (the waves already resident cover the rest); the low end is "
               f"{OCCUPANCY_GAIN_LOW_FACTOR:g}x that (shared memory pipes)"))]


def occupancy_vgpr(ctx: PlanContext, rule: Rule) -> Outcome:
    return _occupancy_rule(ctx, rule, "vgpr")


def occupancy_lds(ctx: PlanContext, rule: Rule) -> Outcome:
    return _occupancy_rule(ctx, rule, "lds")


def barrier_dominated(ctx: PlanContext, rule: Rule) -> Outcome:
    stall = ctx.category_stall(Category.BARRIER)
    share = stall / ctx.total_stall if ctx.total_stall else 0.0
    if share < BARRIER_MIN_SHARE:
        return f"barrier stall is {share:.0%} of stall (< {BARRIER_MIN_SHARE:.0%})"
    if ctx.has("loops") and spin_loop(ctx) is not None:
        return "the barrier is held by a wave polling a flag: reported as spin-wait-barrier"
    ahead = conditional_barrier(ctx) if ctx.has("loops") else None
    if ahead is not None:
        return (f"a ping-pong schedule (#{ahead.line_number} runs on part of the waves): its barriers "
                "are judged by what precedes them, reported as pingpong-barrier")
    hot = ctx.hottest(Category.BARRIER)
    ev = [Evidence("barrier_share_of_stall", round(share, 3), BARRIER_MIN_SHARE, ">="),
          Evidence("barrier_stall_cycles", stall),
          Evidence("barrier_rows", len(ctx.executed(Category.BARRIER)))]
    spread = _arrival_spread(ctx, hot)
    if spread is not None:
        ev.append(Evidence("arrival_spread_cycles", spread))
    # every barrier with stall is a site: the item targets all of them (coverage counts each row)
    barriers = sorted((b for b in ctx.executed(Category.BARRIER) if b.stall > 0),
                      key=lambda b: (-b.stall, b.line_number))
    return [Candidate(
        ctx.location_of(hot), ev, stall,
        "waves reach s_barrier at different times and all wait for the slowest one (uneven work "
        "per wave, or one wave's memory wait right before the barrier)",
        sites=[Site(b.line_number, [], b.source.file, b.source.line, b.stall) for b in barriers])]


def _arrival_spread(ctx: PlanContext, hot: InstructionStat | None) -> float | None:
    """Median first-to-last arrival spread of the hottest barrier (`data.barriers`)."""
    if hot is None:
        return None
    for b in ctx.analysis.barriers or []:
        if b.line_number == hot.line_number and b.median_spread_cycles is not None:
            return float(b.median_spread_cycles)
    return None


def known_launch_workgroups(ctx: PlanContext) -> str:
    grid = real_grid(ctx)
    if grid is None:
        return "?"
    return f"{grid.workgroups:,.0f}" + (" (measured in one round)" if grid.source == "capture" else "")
