"""Text and markdown views of the `occupancy` Result (format only; every number comes from the
Occupancy)."""

from __future__ import annotations

from hotspot.arch.occupancy_model import LIMIT_NAMES, Occupancy, per_simd
from hotspot.render.tables import heading, num, table
from hotspot.result import Result

LIMITER_MARK = "◀"


def _detail(occ: Occupancy, name: str) -> str:
    d, inp = occ.details, occ.inputs
    if occ.limits[name] is None:
        return "unknown"
    if name == "hardware":
        return f"max waves per SIMD on {occ.arch}"
    if name == "vgpr":
        return f"total {d.vgpr_total} → {d.vgpr_allocated} allocated"
    if name == "sgpr":
        implicit = "" if inp.sgpr_includes_implicit else " incl. implicit"
        return f"{d.sgpr_total}{implicit} → {d.sgpr_allocated} allocated"
    if name == "lds":
        if inp.lds_bytes == 0:
            return "no LDS"
        return (f"{num(inp.lds_bytes)} B → {num(d.lds_allocated_bytes)} B allocated, "
                f"{_count(d.workgroups_per_cu_by_lds, 'workgroup')}/CU")
    return (f"{_count(d.waves_per_workgroup, 'wave')}/workgroup, "
            f"{_count(d.workgroups_per_cu_by_slots, 'workgroup slot')}/CU")


def _count(n: int | None, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _inputs_line(occ: Occupancy) -> str:
    inp = occ.inputs
    parts = [f"vgpr {inp.vgpr}", f"agpr {inp.agpr}",
             f"sgpr {'?' if inp.sgpr is None else inp.sgpr}", f"LDS {num(inp.lds_bytes)} B",
             "workgroup ?" if inp.wg_threads is None
             else f"workgroup {inp.wg_threads} work-items ({occ.details.waves_per_workgroup} waves)"]
    return "inputs: " + ", ".join(parts)


def occupancy_lines(occ: Occupancy, markdown: bool = False) -> list[str]:
    """The occupancy block (also reusable by other reports, e.g. `analyze`)."""
    title = f"Occupancy on {occ.arch}: {per_simd(occ.waves_per_simd)} (limiter: {', '.join(occ.limiters)})"
    rows = []
    for name in LIMIT_NAMES:
        value = occ.limits[name]
        mark = f" {LIMITER_MARK}" if name in occ.limiters else ""
        rows.append([f"{name}{mark}", "?" if value is None else str(value), _detail(occ, name)])
    lines = [heading(title, markdown), _inputs_line(occ), "",
             table(rows, ["limit", "waves/SIMD", "detail"], markdown=markdown)]
    if occ.next_step:
        lines += ["", "Next step:"]
        lines += [f"  - {name}: {step.message}" for name, step in occ.next_step.items()]
    elif occ.limiter == "hardware":
        lines += ["", "At the hardware cap: no resource limits occupancy."]
    if occ.notes:
        lines += ["", "Notes:"] + [f"  - {note}" for note in occ.notes]
    return lines


def render_text(result: Result[Occupancy]) -> str:
    return "\n".join(occupancy_lines(result.data))


def render_markdown(result: Result[Occupancy]) -> str:
    return "\n".join(occupancy_lines(result.data, markdown=True))
