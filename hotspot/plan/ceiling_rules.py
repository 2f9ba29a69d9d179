"""`matrix-core-bound`: a loop (or kernel) whose SIMDs keep their matrix core >= 85% busy is at the
roof of its MFMA work: its verdict says so (LOW), instead of latency items that cannot win more
than the idle rest (hotspot/att/issue_share.py measures the busy share in the wave pass)."""

from __future__ import annotations

from hotspot.arch.classify import Category
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.att.issue_share import TraceCeilings, UnitBusy
from hotspot.plan.conventions import PCT

# A matrix core busy this share of the loop's time has no room a reordering can use: the waits
# that remain overlap MFMA work already (issue 33: tuned GEMMs at 90-95% were told 10-13%).
MATRIX_CORE_BOUND_BUSY = 0.85


def bound_scope(ctx: PlanContext) -> UnitBusy | None:
    """The loop (largest share of the waves' time first) or the kernel at the matrix core, if any:
    worked out once per plan (the rule and the engine's ceilings both ask; PlanContext memo)."""
    if ctx.matrix_bound is None:
        ctx.matrix_bound = (_bound_scope(ctx.ceilings),)
    return ctx.matrix_bound[0]


def _bound_scope(tc: TraceCeilings | None) -> UnitBusy | None:
    if tc is None or not tc.pass_counts:
        return None
    bound = [u for u in tc.loops if u.mfma_busy >= MATRIX_CORE_BOUND_BUSY]
    if bound:
        return max(bound, key=lambda u: (u.time_share, u.mfma_busy))
    return tc.kernel if tc.kernel.mfma_busy >= MATRIX_CORE_BOUND_BUSY else None


def matrix_core_bound(ctx: PlanContext, rule: Rule) -> Outcome:
    tc = ctx.ceilings
    if tc is None:
        return "no wave files: the matrix core's issue share is unknown"
    if not tc.pass_counts:
        return "no executed MFMA with a known pass count"
    scope = bound_scope(ctx)
    if scope is None:
        best = max([tc.kernel, *tc.loops], key=lambda u: u.mfma_busy)
        return (f"the matrix core is {best.mfma_busy:.0%} busy at most ({best.scope}; "
                f"< {MATRIX_CORE_BOUND_BUSY:.0%})")
    lo, hi = scope.first_row, scope.last_row
    mfmas = [i for i in ctx.executed(Category.MFMA)
             if lo is None or hi is None or lo <= i.line_number <= hi]
    where = max(mfmas, key=lambda i: (i.hit, -i.line_number), default=None)
    headroom = (1.0 - scope.mfma_busy) * scope.time_share
    in_loop = f" in {scope.scope}" if scope.first_row is not None else ""
    ev = [Evidence("mfma_busy", scope.mfma_busy, MATRIX_CORE_BOUND_BUSY, ">="),
          Evidence("max_simd_mfma_busy", scope.max_simd_mfma_busy),
          Evidence("valu_busy", scope.valu_busy),
          Evidence("scope", scope.scope), Evidence("first_row", scope.first_row),
          Evidence("last_row", scope.last_row), Evidence("time_share", scope.time_share),
          Evidence("mfma_cycles", scope.mfma_cycles), Evidence("simd_cycles", scope.span_cycles),
          Evidence("simds", len(scope.simds)), Evidence("pass_counts", tc.source)]
    return [Candidate(
        ctx.location_of(where), ev, ctx.total_stall,
        f"the SIMDs' matrix cores are busy {scope.mfma_busy:.0%} of the time their waves spend"
        f"{in_loop} ({scope.mfma_cycles:,} MFMA cycles at the pass counts over {scope.span_cycles:,} "
        f"SIMD cycles): the waits that remain overlap MFMA work, so hiding them cannot win more than "
        f"the idle {1 - scope.mfma_busy:.0%}",
        title=f"at {scope.mfma_busy:.0%} of the matrix core{in_loop}",
        removable=(0.0, round(headroom, 4)), kernel_time=True,
        # a kernel-wide verdict: it names no wait, so it explains no row's stall (coverage)
        sites=[Site(None, [], None, None, ctx.total_stall)],
        basis=f"a verdict: only less MFMA work (a faster shape, fewer FLOPs) speeds it up; latency "
              f"work wins at most the idle {PCT * (1 - scope.mfma_busy):.0f}% × {scope.time_share:.0%} "
              f"of the waves' time")]
