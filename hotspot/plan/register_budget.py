"""The VGPR budget of a dispatch and what a fix that needs more registers costs.

Register double-buffering (ping-pong fragments, prefetch one step ahead) needs one more copy of the
registers it buffers. The room for them is the most a wave may hold at its current occupancy minus
what the ISA really uses (highest register + 1 in the disassembly: the allocation is that rounded
up, so a fix that stays within the rounding is free). When the VGPR limit binds and the room is too
small, the registers cost waves per SIMD; the price of that is counted in rounds of the real grid
(fewer waves per CU can leave the number of rounds unchanged: then it costs about nothing).
"""

from __future__ import annotations

import math

from hotspot.arch.targets import UNIFIED, ArchTarget, find_target
from hotspot.plan.context import PlanContext
from hotspot.plan.roofline import known_launch, waves_per_workgroup
from hotspot.record import record


# A measured grid is a float (an estimate from the traced SEs); rounding it before the ceiling keeps
# 1024.0000001 from counting as one more round.
ROUNDS_DIGITS = 6


@record
class VgprBudget:
    """Registers per wave: what the ISA uses against what the current and the next occupancy allow."""

    in_use: int               # the ISA's VGPRs (arch + AGPRs, as occupancy counts them): highest + 1
    arch_vgprs: int           # highest arch VGPR + 1 in the ISA
    agprs: int                # highest AGPR + 1 in the ISA
    waves: int                # waves/SIMD now
    allowed: int              # the most one wave may hold at `waves`
    allowed_next: int | None  # ... at waves + 1 (None at the hardware cap)
    vgpr_bound: bool          # the VGPR limit is the one that sets `waves`
    gfx: str                  # the arch table the budget comes from

    @property
    def free(self) -> int:
        return max(0, self.allowed - self.in_use)


@record
class RegisterCost:
    needed: int          # VGPRs the fix adds
    headroom: int        # VGPRs free below the current occupancy step (the ISA's real use)
    in_use: int          # VGPRs the ISA uses now
    allowed: int         # the most a wave may hold at `waves`
    waves: int           # waves/SIMD now
    waves_after: int     # waves/SIMD once the registers are added
    rounds: int | None = None        # rounds the real grid takes at `waves` (None: grid unknown)
    rounds_after: int | None = None  # ... at `waves_after`

    @property
    def kept_share(self) -> float:
        """The share of the fix's gain that survives the lost waves: the ratio of the grid's rounds
        when the grid is known (time goes with rounds), else the ratio of waves."""
        if self.rounds is not None and self.rounds_after:
            return min(1.0, self.rounds / self.rounds_after)
        return self.waves_after / self.waves if self.waves else 1.0


def budget_target(ctx: PlanContext) -> ArchTarget | None:
    """The arch table for register arithmetic: the known arch, else the candidate arches of the
    occupancy model when they all have the same register file (gfx942 and gfx950 do)."""
    target = find_target(ctx.gfx)
    if target is not None:
        return target
    occ = ctx.occupancy()
    names = list(occ.candidates.by_arch) if occ is not None and occ.candidates is not None else []
    targets = [t for t in (find_target(g) for g in names) if t is not None]
    files = {(t.vgpr_file, t.vgprs_per_lane, t.vgpr_alloc_granule, t.max_waves_per_simd,
              t.max_arch_vgprs_per_wave, t.agpr_base_align) for t in targets}
    return targets[0] if len(files) == 1 else None


def most_vgprs(target: ArchTarget, waves: int) -> int:
    """The most VGPRs (arch + AGPR) one wave may hold with `waves` waves per SIMD (HARDWARE.md §1)."""
    if waves <= 0:
        return 0
    if target.vgpr_file == UNIFIED:
        return (target.vgprs_per_lane // waves) // target.vgpr_alloc_granule * target.vgpr_alloc_granule
    return (target.max_arch_vgprs_per_wave // waves) // target.vgpr_alloc_granule * target.vgpr_alloc_granule


def waves_for(target: ArchTarget | None, total: int) -> int:
    """The most waves per SIMD at which one wave may hold `total` VGPRs (0: none)."""
    if target is None:
        return 0
    for w in range(target.max_waves_per_simd, 0, -1):
        if total <= most_vgprs(target, w):
            return w
    return 0


def _isa_in_use(ctx: PlanContext, target: ArchTarget) -> tuple[int, int, int]:
    regs = ctx.isa_registers
    arch = (regs.max_vgpr_used + 1) if regs.max_vgpr_used is not None else 0
    agpr = (regs.max_agpr_used + 1) if regs.max_agpr_used is not None else 0
    if target.vgpr_file != UNIFIED:
        return max(arch, agpr), arch, agpr
    base = -(-arch // target.agpr_base_align) * target.agpr_base_align if agpr else arch
    return base + agpr, arch, agpr


def vgpr_budget(ctx: PlanContext) -> VgprBudget | None:
    """The ISA's register use against the budget at the current and the next occupancy; None
    when the occupancy or the arch's register file is unknown."""
    occ = ctx.occupancy()
    target = budget_target(ctx)
    if occ is None or target is None or not occ.waves_per_simd or occ.waves_per_simd <= 0:
        return None
    waves = occ.waves_per_simd
    in_use, arch, agpr = _isa_in_use(ctx, target)
    nxt = most_vgprs(target, waves + 1) if waves < target.max_waves_per_simd else None
    return VgprBudget(in_use, arch, agpr, waves, most_vgprs(target, waves), nxt,
                      occ.limits.vgpr == waves, target.gfx)


@record
class Grid:
    workgroups: float
    waves_per_workgroup: int
    cus: int
    source: str   # "launch" (a matched row) or "capture" (measured: one round in occupancy.json)


def real_grid(ctx: PlanContext) -> Grid | None:
    """The grid: the matched launch row's, else the one a capture that ran in one round shows
    (wave starts on the traced SEs ÷ waves per workgroup × the product's SEs ÷ traced SEs)."""
    from hotspot.arch.products import SES_PER_XCD, find_product
    from hotspot.att.launch_match import capture_workgroups

    target = budget_target(ctx)
    if target is None:
        return None
    launch = known_launch(ctx)
    if launch is not None:
        return Grid(launch.workgroups, waves_per_workgroup(launch, target.wave_size), launch.cus, "launch")
    occ = ctx.occupancy()
    achieved = occ.achieved if occ is not None else None
    per_wg = occ.details.waves_per_workgroup if occ is not None and occ.details is not None else None
    product = find_product(ctx.analysis.arch.product or "")
    if (achieved is None or achieved.one_round is not True or not achieved.busy_cus_per_se or not per_wg
            or product is None or product.cus_per_se is None):
        return None
    workgroups = capture_workgroups(achieved.waves, len(achieved.busy_cus_per_se),
                                    product.xcds * SES_PER_XCD, per_wg)
    return Grid(workgroups, per_wg, product.cus, "capture")


def grid_rounds(ctx: PlanContext, waves: int) -> int | None:
    """Rounds the real (or measured) grid's workgroups take with `waves` waves per SIMD on every CU
    (also bounded by the LDS and workgroup-slot limits); None when the grid is unknown."""
    grid = real_grid(ctx)
    target = budget_target(ctx)
    occ = ctx.occupancy()
    if grid is None or target is None or waves <= 0:
        return None
    per_wg = grid.waves_per_workgroup
    per_cu = (waves * target.simds_per_cu) // per_wg if per_wg else 0
    details = occ.details if occ is not None else None
    for cap in (details.workgroups_per_cu_by_lds, details.workgroups_per_cu_by_slots) if details else ():
        if cap is not None:
            per_cu = min(per_cu, cap)
    if per_cu <= 0:
        return None
    return math.ceil(round(grid.workgroups, ROUNDS_DIGITS) / (grid.cus * per_cu))


def register_cost(ctx: PlanContext, needed: int) -> RegisterCost | None:
    """The occupancy cost of `needed` more VGPRs; None when the budget is unknown, not binding, or
    the registers fit below the current step."""
    budget = vgpr_budget(ctx)
    target = budget_target(ctx)
    if budget is None or target is None or not budget.vgpr_bound or needed <= 0:
        return None  # another limit binds: a few more registers do not change the wave count
    if needed <= budget.free:
        return None
    after = min(budget.waves, waves_for(target, budget.in_use + needed))
    rounds = grid_rounds(ctx, budget.waves)
    rounds_after = grid_rounds(ctx, after) if after > 0 else None
    return RegisterCost(needed, budget.free, budget.in_use, budget.allowed, budget.waves, after,
                        rounds, rounds_after)
