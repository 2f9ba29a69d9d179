"""`lgkm-cross-lane`: lgkmcnt waits that are really waits on lane shuffles (ds_bpermute/ds_swizzle)."""

from __future__ import annotations

from hotspot.arch.classify import LGKM_WAITS, Category
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.plan.context import Pair
from hotspot.plan.waits_rules import _blamed, pairs_of, row_of

# Same cut as issue 7's `lgkm-cross-lane` finding: when at least half of the lgkmcnt wait is blamed
# on cross-lane ops, the "LDS wait" is a reduction pattern, not LDS traffic.
CROSS_LANE_MIN_SHARE = 0.50


def lgkm_cross_lane(ctx: PlanContext, rule: Rule) -> Outcome:
    breakdown = ctx.analysis.lgkm_breakdown
    classes = breakdown.classes if breakdown is not None else []
    total = sum(c.stall for c in classes)
    cross = sum(c.stall for c in classes if c.producer_class == Category.CROSS_LANE)
    if total <= 0:
        return "no lgkmcnt wait stall to break down"
    share = cross / total
    if share < CROSS_LANE_MIN_SHARE:
        return f"cross-lane ops hold {share:.0%} of the lgkmcnt wait stall (< {CROSS_LANE_MIN_SHARE:.0%})"
    pairs = pairs_of(ctx, rule)
    top = None
    if pairs:
        by_line: dict[int, list[Pair]] = {}
        for pr in pairs:
            by_line.setdefault(row_of(pr.producer), []).append(pr)
        group = max(by_line.values(), key=lambda g: (_blamed(g), -row_of(g[0].producer)))
        top = group[0].producer
    loc = ctx.location_of(top) if top else ctx.location_of(ctx.hottest(*LGKM_WAITS))
    return [Candidate(
        loc,
        [Evidence("cross_lane_share_of_lgkm_wait", round(share, 3), CROSS_LANE_MIN_SHARE, ">="),
         Evidence("cross_lane_stall_cycles", int(cross)),
         Evidence("lgkm_wait_stall_cycles", int(total))],
        int(cross),
        "ds_bpermute/ds_permute/ds_swizzle are lane shuffles that retire on lgkmcnt (no LDS memory "
        "traffic); a serial reduction waits on each step in turn")]
