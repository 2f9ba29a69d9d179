"""The roofs that bound every estimate, from the launch (grid, duration) and the product tables.

A fix that hides latency cannot make the kernel faster than its bytes at peak bandwidth or its
matrix-core work at peak rate allow: its gain is at most the headroom below the higher roof. The
launch also bounds launch items: spreading work over idle CUs wins at most the idle share.
"""

from __future__ import annotations

from hotspot.arch.mfma import CYCLES_PER_PASS, mfma_passes
from hotspot.arch.products import find_product
from hotspot.arch.targets import find_target
from hotspot.record import record
from hotspot.arch.classify import Category
from hotspot.att.launch_match import MATCHED, LaunchOut
from hotspot.plan.context import PlanContext
from hotspot.plan.conventions import CYCLES_PER_NS_PER_MHZ



@record
class KnownLaunch:
    """A matched launch whose grid is known: what grid-based rules may claim from."""

    launch: LaunchOut
    workgroups: int
    cus: int
    workgroup: list[int]


def known_launch(ctx: PlanContext) -> KnownLaunch | None:
    """The matched launch when its grid is known (workgroup count, workgroup shape, CU count)."""
    occ = ctx.occupancy()
    launch = occ.launch if occ is not None else None
    if launch is None or launch.status != MATCHED:
        return None  # rows that may belong to another dispatch: no grid-based claim
    if not launch.workgroups or launch.workgroups <= 0 or not launch.cus or launch.cus <= 0:
        return None
    if not launch.workgroup:
        return None
    return KnownLaunch(launch, launch.workgroups, launch.cus, launch.workgroup)


def waves_per_workgroup(launch: KnownLaunch, wave_size: int) -> int:
    threads = 1
    for w in launch.workgroup:
        threads *= int(w)
    return -(-threads // wave_size)


def grid_waves_per_simd(ctx: PlanContext) -> float | None:
    """Waves the grid gives each SIMD if spread evenly over every CU (the most any occupancy can use)."""
    launch = known_launch(ctx)
    target = find_target(ctx.gfx)
    if launch is None or target is None:
        return None
    waves = launch.workgroups * waves_per_workgroup(launch, target.wave_size)
    return waves / (launch.cus * target.simds_per_cu)


def mfma_busy_fraction(ctx: PlanContext) -> float | None:
    """Share of the kernel's duration the matrix cores must run for the grid's MFMAs (the compute
    roof): the traced waves' MFMA pipe cycles per wave x the grid's waves, spread over every SIMD at
    the product's peak clock, over the launch's duration."""
    launch = known_launch(ctx)
    target = find_target(ctx.gfx)
    product = find_product(ctx.analysis.arch.product or "")
    traced = ctx.traced_waves
    duration = launch.launch.duration_ns if launch else None
    if launch is None or target is None or product is None or not traced or duration is None \
            or duration <= 0:
        return None
    busy = 0
    for ins in ctx.executed(Category.MFMA):
        passes = mfma_passes(ins.isa, target.gfx)
        if passes:
            busy += ins.hit * passes * CYCLES_PER_PASS
    if not busy:
        return None
    grid_waves = launch.workgroups * waves_per_workgroup(launch, target.wave_size)
    per_simd_cycles = busy / traced * grid_waves / (launch.cus * target.simds_per_cu)
    return per_simd_cycles / (product.peak_engine_clock_mhz * CYCLES_PER_NS_PER_MHZ) / duration
