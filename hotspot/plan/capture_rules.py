"""Capture-quality rules: fix the capture before trusting line-level numbers (no speed-up by itself)."""

from __future__ import annotations

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.result import JsonObject


def _scalar(ev: JsonObject, key: str) -> float | int | str | None:
    """A number or string of a finding's evidence (None when absent or another value)."""
    v = ev.get(key)
    return v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None


def _number(ev: JsonObject, key: str) -> float:
    v = _scalar(ev, key)
    if not isinstance(v, (int, float)):
        raise KeyError(key)  # the finding always has it (hotspot/att/findings.py)
    return float(v)


def source_collapse(ctx: PlanContext, rule: Rule) -> Outcome:
    f = ctx.finding("source-collapse")
    if f is None:
        return "no source line collapses the stall"
    ev = f.evidence  # the fields hotspot/att/findings.py gives a source-collapse finding
    share = _number(ev, "share")
    cats = ev.get("categories")
    file, line = _scalar(ev, "file"), _scalar(ev, "line")
    return [Candidate(
        ctx.line_location(file if isinstance(file, str) else None, line if isinstance(line, int) else None),
        [Evidence("line_share_of_stall", round(share, 3), _scalar(ev, "threshold_share"), ">="),
         Evidence("categories_on_line", len(cats) if isinstance(cats, list) else 0,
                  _scalar(ev, "threshold_categories"), ">=")],
        int(share * ctx.total_stall),
        "compiler-generated code of many kinds was attributed to one source line (typically the "
        "kernel entry or decorator): the line view cannot say which statement to change",
        severity=f.severity)]


def idle_slice(ctx: PlanContext, rule: Rule) -> Outcome:
    f = ctx.finding("idle-slice")
    if f is None:
        return "the traced waves executed a representative part of the kernel"
    ev = f.evidence  # the fields hotspot/att/findings.py gives an idle-slice finding
    return [Candidate(
        ctx.kernel_location(),
        [Evidence("executed_share_of_rows", round(_number(ev, "executed_share"), 4),
                  _scalar(ev, "threshold_share"), "<"),
         Evidence("executed_instructions", _scalar(ev, "executed_instructions")),
         Evidence("code_rows", _scalar(ev, "code_rows"))],
        ctx.total_stall,
        "the traced waves retired early or the traced CU was idle: these numbers describe a sliver "
        "of the kernel, so no other plan item from this capture can be trusted",
        severity=f.severity)]
