"""One manifest row per entry, distilled from its `analyze --plan` JSON and its collect result.

These are the columns of `hotspot sweep report`: what the kernel is, how busy the CU was, where
the stall went, and what the plan says is worth the most.
"""

from __future__ import annotations

from pathlib import Path

from hotspot.result import JsonObject


def traced_dispatch_ns(att_dir: Path, dispatch_id: int | None) -> int | None:
    """End - Start of the traced dispatch in the ATT phase's kernel trace (inflated by tracing;
    the untraced average comes from discovery)."""
    if dispatch_id is None:
        return None
    from hotspot.capture import read_kernel_trace_csv
    from hotspot.errors import HotspotError

    for path in sorted(att_dir.rglob("*kernel_trace.csv")):
        try:
            rows = read_kernel_trace_csv(path)
        except HotspotError:
            continue
        row = next((r for r in rows if r.dispatch_id == dispatch_id), None)
        if row is not None and row.duration_ns is not None:
            return row.duration_ns
    return None


def _top_stall(analysis: JsonObject) -> tuple[str | None, float | None]:
    cats = [c for c in analysis.get("stall_by_category") or [] if c.get("stall")]
    if not cats:
        return None, None
    top = max(cats, key=lambda c: c["stall"])
    return top["category"], top.get("share")


def _hottest_line(analysis: JsonObject) -> JsonObject | None:
    lines = [ln for ln in analysis.get("source_lines") or [] if ln.get("stall")]
    if not lines:
        return None
    top = max(lines, key=lambda ln: ln["stall"])
    return {"file": top.get("file"), "line": top.get("line"), "share": top.get("share"),
            "category": top.get("dominant_category")}


def _top_plan_item(analysis: JsonObject) -> JsonObject | None:
    # item #1: the first item that is not a capture item (those are trust, listed first)
    plan = [i for i in analysis.get("plan") or [] if i.get("kind") != "capture"]
    if not plan:
        return None
    item = plan[0]  # the plan is already in priority order
    est = item.get("estimate") or {}
    loc = item.get("location") or {}
    return {"id": item.get("id"), "priority": item.get("priority"), "title": item.get("title"),
            "file": loc.get("file"), "line": loc.get("line"),
            "estimate_low_pct": est.get("low_pct"), "estimate_high_pct": est.get("high_pct")}


def summarize(analysis: JsonObject, kernel: JsonObject | None,
              traced_ns: int | None = None) -> JsonObject:
    """The report row of one analyzed dispatch (analysis = `analyze --plan` data)."""
    disp = analysis.get("dispatch") or {}
    occ = analysis.get("occupancy") or {}
    achieved = occ.get("achieved") or {}
    category, share = _top_stall(analysis)
    top = _top_plan_item(analysis)
    # Headroom: the best plan item's upper estimate; the sort key of the cross-kernel table.
    headroom = max((p.get("estimate") or {}).get("high_pct") or 0.0 for p in analysis.get("plan") or [{}])
    return {
        "kernel": disp.get("kernel") or (kernel or {}).get("name"),
        "arch": (analysis.get("arch") or {}).get("gfx"),
        "dispatch": disp.get("path"),
        "waves": disp.get("waves"),
        "duration_ns": (kernel or {}).get("avg_ns"),
        "traced_dispatch_ns": traced_ns,
        "total_cycles": (analysis.get("totals") or {}).get("latency"),
        "occupancy_theoretical": occ.get("waves_per_simd") if occ.get("available") else None,
        "occupancy_achieved": achieved.get("mean_waves_per_simd"),
        "occupancy_limiter": occ.get("limiter") if occ.get("available") else None,
        "top_stall_category": category,
        "top_stall_share": share,
        "hottest_line": _hottest_line(analysis),
        "source_collapse": any(f.get("id") == "source-collapse" for f in analysis.get("findings") or []),
        "top_plan_item": top,
        "headroom_pct": headroom if top else None,
    }
