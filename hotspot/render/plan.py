"""Text/markdown views of the plan (used by `hotspot plan` and by `hotspot analyze --plan`)."""

from __future__ import annotations

from hotspot.render.tables import heading, num, pct, shorten, shorten_left, table
from hotspot.result import Result

ISA_WIDTH = 60
TOP_CATEGORIES = 5


SITES_SHOWN = 6  # sites listed per item in text (JSON lists all)
LOCATION_WIDTH = 60  # file:line shortened from the left beyond this (the line number always shows)


def _get(obj: object, key: str) -> object:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _loc(loc: object) -> str:
    file, line, n, isa = _get(loc, "file"), _get(loc, "line"), _get(loc, "line_number"), _get(loc, "isa")
    parts = []
    if file:
        parts.append(shorten_left(f"{file}:{line if line is not None else '?'}", LOCATION_WIDTH))
    if n is not None:
        parts.append(f"#{n} {shorten(str(isa or ''), ISA_WIDTH)}".rstrip())
    return "  ".join(parts) or f"kernel {shorten(str(_get(loc, 'kernel') or ''), 80)}"


def _value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def summary_block(summary: object, markdown: bool) -> str:
    if summary is None:
        return ""
    lines = [heading("Stall summary", markdown),
             f"  {num(_get(summary, 'total_stall'))} stall cycles of {num(_get(summary, 'total_cycles'))} "
             f"({pct(_get(summary, 'stall_pct_of_cycles'))})"]
    cats = (_get(summary, "top_categories") or [])[:TOP_CATEGORIES]
    if cats:
        lines.append("  " + ", ".join(f"{c['category']} {100 * c['share']:.0f}%" for c in cats))
    return "\n".join(lines)


def _estimate_text(est: object) -> str:
    low, high = _get(est, "low_pct"), _get(est, "high_pct")
    if low is None or high is None:
        return "withheld"
    return f"{low:.1f}–{high:.1f}%"


def trust_line(trust: object) -> str:
    """`trust: limited — reason; reason` (empty when there is no trust verdict)."""
    if trust is None:
        return ""
    reasons = _get(trust, "reasons") or []
    return f"trust: {_get(trust, 'level')}" + (" — " + "; ".join(str(r) for r in reasons) if reasons else "")


def items_block(plan: list[object], skipped: list[object] | None, markdown: bool,
                trust: object = None) -> str:
    out = [heading(f"Optimization plan ({len(plan)} item{'s' if len(plan) != 1 else ''})", markdown)]
    if trust is not None:
        out.append(trust_line(trust))
    if not plan:
        out.append("(no rule fired" + ("; --format json lists in plan_skipped why each rule did not"
                                       if skipped else "") + ")")
    capture = [it for it in plan if _get(it, "kind") == "capture"]
    if capture:
        out.append("Before acting on the rest: " + "; ".join(
            f"{_get(it, 'id')} ({_get(it, 'title')})" for it in capture))
    for i, it in enumerate(plan, 1):
        est = _get(it, "estimate")
        out.append("")
        out.append(f"{i}. [{_get(it, 'priority')}] {_get(it, 'id')}: {_get(it, 'title')}")
        out.append(f"   location:   {_loc(_get(it, 'location'))}")
        ev = []
        for e in _get(it, "evidence") or []:
            thr = _get(e, "threshold")
            cmp = _get(e, "comparison") or ""
            ev.append(f"{_get(e, 'metric')} {_value(_get(e, 'value'))}"
                      + (f" ({cmp} {_value(thr)})" if thr is not None else ""))
        out.append("   evidence:   " + "; ".join(ev))
        out.append(f"   root cause: {_get(it, 'root_cause')}")
        out.append(f"   fix:        {_get(it, 'fix')}")
        if _get(est, "low_pct") is None:
            out.append(f"   estimate:   withheld: {_get(est, 'withheld')}")
        else:
            out.append(f"   estimate:   {_estimate_text(est)} of cycles ({_get(est, 'basis')})")
        sites = _get(it, "sites") or []
        if len(sites) > 1:
            out.append("   sites:      " + ", ".join(
                f"#{_get(s, 'wait_row')}" + (f" ({_get(s, 'file')}:{_get(s, 'line')})" if _get(s, "file") else "")
                for s in sites[:SITES_SHOWN]) + (f", +{len(sites) - SITES_SHOWN} more" if len(sites) > SITES_SHOWN else ""))
    if plan:
        out.append("")
        out.append(heading("Priority order", markdown))
        rows = [[i, _get(it, "priority"), _get(it, "id"), shorten(_loc(_get(it, "location")), 70),
                 _estimate_text(_get(it, "estimate"))]
                for i, it in enumerate(plan, 1)]
        out.append(table(rows, ["#", "priority", "rule", "location", "est. gain"], markdown))
    return "\n".join(out)


def _render(result: Result, markdown: bool) -> str:
    d = result.data
    dispatch, arch = _get(d, "dispatch"), _get(d, "arch")
    title = f"hotspot plan: {shorten(str(_get(dispatch, 'kernel') or ''), 100)}"
    verdict = _get(d, "verdict")
    parts = [f"# {title}" if markdown else title]
    if verdict is not None:
        parts.append(verdict_section(str(_get(dispatch, "kernel") or ""), arch, verdict, markdown))
    parts += [f"  dispatch dir: {_get(dispatch, 'path')}\n  arch: {_get(arch, 'gfx')}"]
    sel = _get(d, "selection")
    if sel:
        parts[-1] += f"\n  chosen because: {_get(sel, 'reason')}"
    pmc = _get(d, "pmc")
    if pmc:
        parts[-1] += (f"\n  counters: {', '.join(pmc.get('files') or [])} -> kernel "
                      f"{pmc.get('kernel') or '(none matched)'} ({pmc.get('match')})")
    parts.append(summary_block(_get(d, "summary"), markdown))
    parts.append(items_block(_get(d, "plan") or [], _get(d, "plan_skipped"), markdown, _get(d, "trust")))
    return "\n\n".join(p for p in parts if p)


def render_text(result: Result) -> str:
    return _render(result, markdown=False)


def render_markdown(result: Result) -> str:
    return _render(result, markdown=True)


BRIEF_DEFAULT_WIDTH = 100


def _width() -> int:
    import os
    import shutil

    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 20:
        return int(env)
    return shutil.get_terminal_size((BRIEF_DEFAULT_WIDTH, 24)).columns


def verdict_block(kernel: str, arch: object, verdict: object, width: int | None = None,
                  more_hint: str = "drop --brief, or --format json") -> str:
    """At most 15 lines: kernel and arch, trust, where the cycles go, the top items with their
    estimate and file:line (paths shortened from the left so the line number shows)."""
    w = width or _width()
    product = _get(arch, "product")
    lines = [shorten(f"hotspot: {kernel} on {_get(arch, 'gfx')}" + (f" ({product})" if product else ""), w)]
    trust = _get(verdict, "trust")
    lines.append(shorten(trust_line(trust) or "trust: ok", w))
    cats = _get(verdict, "top_categories") or []
    lines.append(shorten(f"cycles: {pct(_get(verdict, 'stall_pct_of_cycles'))} stall — " + ", ".join(
        f"{c['category']} {100 * c['share']:.0f}%" for c in cats), w))
    items = _get(verdict, "top_items") or []
    if not items:
        lines.append("no plan item: nothing to change was found in this capture")
    for it in items:
        low, high = _get(it, "low_pct"), _get(it, "high_pct")
        est = "withheld" if low is None or high is None else f"{low:.0f}–{high:.0f}%"
        where = (f"{_get(it, 'file')}:{_get(it, 'line') if _get(it, 'line') is not None else '?'}"
                 if _get(it, "file") else (f"#{_get(it, 'line_number')}" if _get(it, "line_number")
                                           is not None else "kernel"))
        head = f"{_get(it, 'rank')}. [{_get(it, 'priority')}] {est:>8}  "
        room = max(20, w - len(head) - 2)
        loc = shorten_left(where, min(48, room // 2))
        lines.append(head + loc + "  " + shorten(str(_get(it, "title")), max(10, w - len(head) - len(loc) - 2)))
    more = _get(verdict, "more_items") or 0
    if more:
        lines.append(f"+{more} more item{'s' if more != 1 else ''}: {more_hint}")
    return "\n".join(lines)


def verdict_section(kernel: str, arch: object, verdict: object, markdown: bool) -> str:
    """The verdict block as the first section of a full text/markdown view."""
    block = verdict_block(shorten(kernel, 80), arch, verdict, more_hint="see the plan below")
    return f"```text\n{block}\n```" if markdown else block


def render_brief(result: Result) -> str:
    """`--brief`: only the verdict block (analyze --plan, plan)."""
    d = result.data
    dispatch = _get(d, "dispatch")
    kernel = shorten(str(_get(dispatch, "kernel") or ""), 80)
    verdict = _get(d, "verdict")
    if verdict is None:
        return "(no plan: run with --plan)"
    return verdict_block(kernel, _get(d, "arch"), verdict)
