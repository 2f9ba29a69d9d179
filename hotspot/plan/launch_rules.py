"""`grid-underfill`: the launch gives the GPU fewer workgroups than it has compute units. Then most
CUs sit idle for the whole kernel and no per-instruction change matters: it is item #1."""

from __future__ import annotations

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule


def grid_underfill(ctx: PlanContext, rule: Rule) -> Outcome:
    occ = ctx.occupancy() or {}
    launch = occ.get("launch")
    if not isinstance(launch, dict):
        return "no launch (grid, workgroup size) for this kernel: needs a kernel trace or rocpd row"
    groups, cus = launch.get("workgroups"), launch.get("cus")
    if not isinstance(groups, int) or not isinstance(cus, int) or cus <= 0:
        return "the product's compute-unit count is unknown (arch product not identified)"
    if groups >= cus:
        return f"{groups:,} workgroups for {cus} CUs: every CU gets work"
    idle = cus - groups
    ev = [Evidence("workgroups", groups, cus, "<"), Evidence("compute_units", cus),
          Evidence("idle_compute_units", idle), Evidence("grid", "x".join(str(g) for g in launch["grid"])),
          Evidence("workgroup", "x".join(str(w) for w in launch["workgroup"])),
          Evidence("launch_source", launch.get("source"))]
    if isinstance(launch.get("duration_ns"), int):
        ev.append(Evidence("kernel_duration_ns", launch["duration_ns"]))
    return [Candidate(
        ctx.kernel_location(), ev, ctx.total_stall,
        f"the launch makes {groups:,} workgroups for {cus} compute units: {idle} CUs "
        f"({idle / cus:.0%}) have nothing to run for the whole kernel, and the traced CU's numbers "
        "describe a GPU that is mostly idle",
        title=f"grid underfill: {groups:,} workgroups on {cus} CUs",
        removable=(0.0, 0.0),
        basis=(f"no per-instruction estimate: {groups} of {cus} CUs work, so spreading the same work "
               f"over all of them can shorten the kernel by up to {100 * idle / cus:.0f}% of its time"))]
