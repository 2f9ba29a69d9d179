"""Does a fix that needs more registers fit the kernel's VGPR budget at its current occupancy?

Register double-buffering (ping-pong fragments, prefetch one step ahead) needs one more copy of the
registers it buffers. When the VGPR limit is the binding one and the allocation is already at the
most that many waves allow, those registers cost a wave per SIMD: the latency the fix hides is then
paid back by fewer waves to hide it behind. The gain keeps the share of waves that remain.
"""

from __future__ import annotations

from hotspot.arch.targets import UNIFIED, find_target
from hotspot.plan.context import PlanContext
from hotspot.record import record


@record
class RegisterCost:
    needed: int          # VGPRs the fix adds
    headroom: int        # VGPRs free below the current occupancy step
    waves: int           # waves/SIMD now
    waves_after: int     # waves/SIMD once the registers are added

    @property
    def kept_share(self) -> float:
        return self.waves_after / self.waves if self.waves else 1.0


def register_cost(ctx: PlanContext, needed: int) -> RegisterCost | None:
    """The occupancy cost of `needed` more VGPRs; None when the budget is unknown or not binding."""
    occ = ctx.occupancy()
    target = find_target(ctx.gfx)
    if occ is None or occ.details is None or target is None:
        return None
    waves, allocated = occ.waves_per_simd, occ.details.vgpr_allocated
    if waves is None or waves <= 0:
        return None
    if occ.limits.vgpr != waves or needed <= 0:
        return None  # another limit binds: a few more registers do not change the wave count
    file_size = target.vgprs_per_lane if target.vgpr_file == UNIFIED else target.max_arch_vgprs_per_wave
    granule = target.vgpr_alloc_granule
    most = (file_size // waves) // granule * granule
    headroom = max(0, most - allocated)
    if needed <= headroom:
        return None
    new_alloc = -(-(allocated + needed) // granule) * granule
    after = file_size // new_alloc if new_alloc <= file_size else 0
    return RegisterCost(needed, headroom, waves, min(after, waves))
