"""Text/markdown views of the plan (used by `hotspot plan` and by `hotspot analyze --plan`)."""

from __future__ import annotations

from hotspot.render.tables import heading, num, pct, shorten, shorten_left, shorten_words, table
from hotspot.result import Result

ISA_WIDTH = 36
TOP_CATEGORIES = 5


SITES_SHOWN = 6  # sites listed per item in text (JSON lists all)
LOCATION_WIDTH = 48  # file:line shortened from the left beyond this (directories go first)


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


FULL_ITEMS = 2  # items shown in full by default (the rest one line each); --detail shows all


def _site_row(s: object) -> object:
    """The row a site is known by: its wait, else its last producer row (the instruction whose
    source line the site names: the narrow load, the VALU after an s_nop)."""
    wait = _get(s, "wait_row")
    rows = _get(s, "producer_rows") or []
    return wait if wait is not None else (rows[-1] if rows else "?")


def _site(s: object) -> str:
    file, line = _get(s, "file"), _get(s, "line")
    where = f" {str(file).rsplit('/', 1)[-1]}:{line if line is not None else '?'}" if file else ""
    return f"#{_site_row(s)}{where}"


def trust_block(trust: object, capture: list[object], markdown: bool) -> str:
    """The trust verdict in full: its reasons and the capture items (re-capture first), shown once,
    before the items."""
    if trust is None and not capture:
        return ""
    level = _get(trust, "level") if trust is not None else "ok"
    out = [heading(f"Trust: {level}", markdown)]
    told = set()
    for r in (_get(trust, "reasons") or []) if trust is not None else []:
        # a reason that is a capture item's finding carries that item's next step
        it = next((c for c in capture if str(r).startswith(f"{_get(c, 'id')}:")), None)
        out.append(f"- {str(r).rstrip('. ')}" + (f". Next: {_get(it, 'fix')}" if it is not None else ""))
        if it is not None:
            told.add(_get(it, "id"))
    for it in capture:
        if _get(it, "id") not in told:
            out.append(f"- {_get(it, 'id')}: {_get(it, 'title')}. Next: {_get(it, 'fix')}")
    if len(out) == 1:
        out.append("- the capture represents the kernel: estimates stand as computed")
    return "\n".join(out)


def _full_item(i: int, it: object, detail: bool) -> list[str]:
    est = _get(it, "estimate")
    out = ["", f"{i}. [{_get(it, 'priority')}] {_get(it, 'id')}: {_get(it, 'title')}",
           f"   location:   {_loc(_get(it, 'location'))}"]
    if detail:
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
        out.append(f"   estimate:   {_estimate_text(est)} ({_get(est, 'basis')})")
    sites = _get(it, "sites") or []
    if len(sites) > 1:
        shown = sites if detail else sites[:SITES_SHOWN]
        out.append("   sites:      " + ", ".join(_site(s) for s in shown)
                   + (f", +{len(sites) - len(shown)} more" if len(sites) > len(shown) else ""))
    return out


def _short_item(i: int, it: object, width: int) -> str:
    loc = _get(it, "location")
    file, line, n = _get(loc, "file"), _get(loc, "line"), _get(loc, "line_number")
    where = (f"{str(file).rsplit('/', 1)[-1]}:{line if line is not None else '?'}" if file else
             f"#{n}" if n is not None else "kernel")
    head = f"{i}. [{_get(it, 'priority')}] {_estimate_text(_get(it, 'estimate'))}  {_get(it, 'id')}  {where}  "
    return head + shorten_words(str(_get(it, "title")), max(16, width - len(head)))


def items_block(plan: list[object], skipped: list[object] | None, markdown: bool,
                trust: object = None, detail: bool = False) -> str:
    """The trust block (reasons and capture items, once), then the items: the top ones in full,
    the rest one line each; `detail` adds every item in full with its evidence and all its sites,
    and the priority table."""
    capture = [it for it in plan if _get(it, "kind") == "capture"]
    ranked = [it for it in plan if _get(it, "kind") != "capture"]
    out = []
    block = trust_block(trust, capture, markdown)
    if block:
        out += [block, ""]
    out.append(heading(f"Optimization plan ({len(ranked)} item{'s' if len(ranked) != 1 else ''})", markdown))
    if not ranked:
        out.append("(no rule fired" + ("; --format json lists in plan_skipped why each rule did not"
                                       if skipped else "") + ")")
    full = len(ranked) if detail else FULL_ITEMS
    for i, it in enumerate(ranked, 1):
        if i <= full:
            out += _full_item(i, it, detail)
        else:
            if i == full + 1:
                out.append("")
            out.append(_short_item(i, it, _width()))
    if ranked and detail:
        out.append("")
        out.append(heading("Priority order", markdown))
        rows = []
        for i, it in enumerate(ranked, 1):
            loc = _get(it, "location")
            file, line, n = _get(loc, "file"), _get(loc, "line"), _get(loc, "line_number")
            rows.append([i, _get(it, "priority"), _get(it, "id"),
                         f"{file}:{line if line is not None else '?'}" if file else "",
                         f"#{n}" if n is not None else "kernel", _estimate_text(_get(it, "estimate"))])
        out.append(table(rows, ["#", "priority", "rule", "source", "row", "est. gain"], markdown))
    elif ranked:
        out.append("")
        out.append("(evidence, every site and the priority table: --detail; everything: --format json)")
    return "\n".join(out)


def _render(result: Result, markdown: bool, detail: bool = False) -> str:
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
    if detail:
        parts.append(summary_block(_get(d, "summary"), markdown))
    parts.append(items_block(_get(d, "plan") or [], _get(d, "plan_skipped"), markdown, _get(d, "trust"),
                             detail))
    return "\n\n".join(p for p in parts if p)


def render_text(result: Result) -> str:
    return _render(result, markdown=False)


def render_markdown(result: Result) -> str:
    return _render(result, markdown=True)


def render_text_detail(result: Result) -> str:
    return _render(result, markdown=False, detail=True)


def render_markdown_detail(result: Result) -> str:
    return _render(result, markdown=True, detail=True)


BRIEF_DEFAULT_WIDTH = 100


def _width() -> int:
    import os
    import shutil

    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 20:
        return int(env)
    return shutil.get_terminal_size((BRIEF_DEFAULT_WIDTH, 24)).columns


def verdict_block(kernel: str, arch: object, verdict: object, width: int | None = None,
                  more_hint: str = "drop --brief, or --format json", trust_below: bool = False) -> str:
    """At most 15 lines: kernel and arch, trust, where the cycles go, the top items with their
    estimate and file:line (paths shortened from the left so the line number shows)."""
    w = width or _width()
    product = _get(arch, "product")
    lines = [shorten(f"hotspot: {kernel} on {_get(arch, 'gfx')}" + (f" ({product})" if product else ""), w)]
    trust = _get(verdict, "trust")
    reasons = len(_get(trust, "reasons") or []) if trust is not None else 0
    if trust_below:  # the full view prints the reasons once, in its trust block
        lines.append(f"trust: {_get(trust, 'level') if trust is not None else 'ok'}"
                     + (f" ({reasons} reason{'s' if reasons != 1 else ''} below)" if reasons else ""))
    else:
        lines.append(shorten_words(trust_line(trust) or "trust: ok", w))
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
        # the file name and line always show whole (directories go first); the title gives way
        name = where.rsplit("/", 1)[-1]
        loc = shorten_left(where, min(max(min(48, room // 2), len(name) + 2), room - 10))
        lines.append(head + loc + "  " + shorten_words(str(_get(it, "title")), max(10, w - len(head) - len(loc) - 2)))
    more = _get(verdict, "more_items") or 0
    if more:
        lines.append(f"+{more} more item{'s' if more != 1 else ''}: {more_hint}")
    return "\n".join(lines)


def verdict_section(kernel: str, arch: object, verdict: object, markdown: bool) -> str:
    """The verdict block as the first section of a full text/markdown view."""
    block = verdict_block(shorten(kernel, 80), arch, verdict, more_hint="see the plan below",
                          trust_below=True)
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
