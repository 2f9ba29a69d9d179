"""One manifest row per entry, distilled from its `analyze --plan` JSON and its collect result.

These are the columns of `hotspot sweep report`: what the kernel is, how busy the CU was, where
the stall went, and what the plan says is worth the most.
"""

from __future__ import annotations

from pathlib import Path

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hotspot.collect.run_result import Kernel, KernelDiscovered
from hotspot.plan.model import Kind
from hotspot.record import record
from hotspot.sweep_records import HottestLine, Summary, TopPlanItem

if TYPE_CHECKING:
    from hotspot.att.model import DispatchAnalysis
    from hotspot.plan.model import PlanItem


@record
class TraceTiming:
    """What the ATT phase's kernel trace says of the traced kernel: the traced dispatch's End - Start
    (slowed by tracing) and the average over the kernel's dispatches that were not traced."""

    traced_ns: int | None = None
    untraced_avg_ns: float | None = None
    untraced_calls: int = 0


def trace_timing(att_dir: Path, dispatch_id: int | None, traced_ids: Sequence[int],
                 names: Sequence[str]) -> TraceTiming:
    """The kernel trace the ATT phase writes (`--kernel-trace` rides along with the trace) lists every
    dispatch of the kernel the include regex selects, traced or not: a `kernel:` entry, which has no
    discovery (the only other source of an average), takes its average from the untraced ones. The
    kernel is the traced dispatch's row's name; when that dispatch id is not in the file, rows are
    matched by the analysed kernel's `names`."""
    from hotspot.capture import read_kernel_trace_csv, same_kernel
    from hotspot.errors import HotspotError

    traced = set(traced_ids)
    for path in sorted(att_dir.rglob("*kernel_trace.csv")):
        try:
            rows = read_kernel_trace_csv(path)
        except HotspotError:
            continue
        mine = next((r for r in rows if dispatch_id is not None and r.dispatch_id == dispatch_id), None)
        same = [r for r in rows if (r.kernel_name == mine.kernel_name if mine is not None
                                    else same_kernel(r.kernel_name, names))]
        if not same:
            continue
        untraced = [d for r in same if r.dispatch_id not in traced and (d := r.duration_ns) is not None]
        return TraceTiming(mine.duration_ns if mine is not None else None,
                           sum(untraced) / len(untraced) if untraced else None, len(untraced))
    return TraceTiming()


def _top_stall(analysis: DispatchAnalysis) -> tuple[str | None, float | None]:
    cats = [c for c in analysis.stall_by_category if c.stall]
    if not cats:
        return None, None
    top = max(cats, key=lambda c: c.stall)
    return top.category, top.share


def _hottest_line(analysis: DispatchAnalysis) -> HottestLine | None:
    lines = [ln for ln in analysis.source_lines if ln.stall]
    if not lines:
        return None
    top = max(lines, key=lambda ln: ln.stall)
    return HottestLine(top.file, top.line, top.share, top.dominant_category)


def plan_columns(plan: Sequence[PlanItem]) -> tuple[TopPlanItem | None, float | None]:
    """Item #1 (the first that is not a capture item: those are trust, listed first) and the
    headroom, the best item's upper estimate (the sort key of the cross-kernel table); None
    without an item #1."""
    code = [i for i in plan if i.kind != Kind.CAPTURE]
    if not code:
        return None, None
    item = code[0]  # the plan is already in priority order
    top = TopPlanItem(item.id, item.priority, item.title, item.location.file, item.location.line,
                      item.estimate.low_pct, item.estimate.high_pct)
    return top, max((p.estimate.high_pct or 0.0 for p in plan), default=0.0)


def summarize(analysis: DispatchAnalysis, plan: Sequence[PlanItem], kernel: Kernel | None,
              dispatch: str | None, traced_ns: int | None = None, trace_avg_ns: float | None = None) -> Summary:
    """The report row of one analyzed dispatch (`analyze --plan`'s analysis and plan). The average
    duration is discovery's, else the untraced dispatches' of the ATT run's kernel trace."""
    disp = analysis.dispatch
    occ = analysis.occupancy
    available = occ is not None and occ.available
    theoretical = occ if available else None  # the model's numbers, when there are some
    category, share = _top_stall(analysis)
    top, headroom = plan_columns(plan)
    return Summary(
        kernel=disp.kernel or (kernel.name if kernel is not None else None),
        arch=analysis.arch.gfx,
        dispatch=dispatch,
        waves=disp.waves,
        duration_ns=kernel.avg_ns if isinstance(kernel, KernelDiscovered) else trace_avg_ns,
        traced_dispatch_ns=traced_ns,
        total_cycles=analysis.totals.latency,
        occupancy_theoretical=theoretical.waves_per_simd if theoretical else None,
        occupancy_achieved=occ.achieved.mean_waves_per_simd if occ is not None and occ.achieved else None,
        occupancy_limiter=theoretical.limiter if theoretical else None,
        top_stall_category=category,
        top_stall_share=share,
        hottest_line=_hottest_line(analysis),
        source_collapse=any(f.id == "source-collapse" for f in analysis.findings),
        top_plan_item=top,
        headroom_pct=headroom,
    )
