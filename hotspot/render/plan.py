"""Text/markdown views of the plan (used by `hotspot plan` and by `hotspot analyze --plan`)."""

from __future__ import annotations

from hotspot.att.model import ArchOut
from hotspot.plan.coverage import Coverage, gap_row_text
from hotspot.plan.engine import StallSummary, Verdict, VerdictItem
from hotspot.plan.location import Location
from hotspot.plan.model import Estimate, Kind, PlanItem, Site, Skipped, Trust
from hotspot.render.sections import Sections, wanted
from hotspot.render.tables import (heading, num, pct, shorten, shorten_left, shorten_middle, shorten_words, table,
                                   wrap_words)
from hotspot.result import Result

ISA_WIDTH = 36
TOP_CATEGORIES = 5


SITES_SHOWN = 6  # sites listed per item in text (JSON lists all)
LOCATION_WIDTH = 48  # file:line shortened from the left beyond this (directories go first)


def _loc(loc: Location) -> str:
    file, line, n, isa = loc.file, loc.line, loc.line_number, loc.isa
    parts = []
    if file:
        parts.append(shorten_left(f"{file}:{line if line is not None else '?'}", LOCATION_WIDTH))
    if n is not None:
        parts.append(f"#{n} {shorten(str(isa or ''), ISA_WIDTH)}".rstrip())
    return "  ".join(parts) or f"kernel {shorten(loc.kernel, 80)}"


def _value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def summary_block(summary: StallSummary | None, markdown: bool) -> str:
    if summary is None:
        return ""
    lines = [heading("Stall summary", markdown),
             f"  {num(summary.total_stall)} stall cycles of {num(summary.total_cycles)} "
             f"({pct(summary.stall_pct_of_cycles)})"]
    cats = summary.top_categories[:TOP_CATEGORIES]
    if cats:
        lines.append("  " + ", ".join(f"{c.category} {100 * c.share:.0f}%" for c in cats))
    return "\n".join(lines)


def _estimate_text(est: Estimate) -> str:
    low, high = est.low_pct, est.high_pct
    if low is None or high is None:
        return "withheld"
    return f"{low:.1f}–{high:.1f}%"


def trust_line(trust: Trust | None) -> str:
    """`trust: limited — reason; reason` (empty when there is no trust verdict)."""
    if trust is None:
        return ""
    reasons = trust.reasons
    return f"trust: {trust.level}" + (" — " + "; ".join(reasons) if reasons else "")


FULL_ITEMS = 2  # items shown in full by default (the rest one line each); --detail shows all


def _site_row(s: Site) -> int | str:
    """The row a site is known by: its wait, else its last producer row (the instruction whose
    source line the site names: the narrow load, the VALU after an s_nop)."""
    rows = s.producer_rows
    return s.wait_row if s.wait_row is not None else (rows[-1] if rows else "?")


def _site(s: Site) -> str:
    file, line = s.file, s.line
    where = f" {file.rsplit('/', 1)[-1]}:{line if line is not None else '?'}" if file else ""
    return f"#{_site_row(s)}{where}"


def trust_block(trust: Trust | None, capture: list[PlanItem], markdown: bool) -> str:
    """The trust verdict in full: its reasons and the capture items (re-capture first), shown once,
    before the items."""
    if trust is None and not capture:
        return ""
    level = trust.level if trust is not None else "ok"
    out = [heading(f"Trust: {level}", markdown)]
    told = set()
    for r in trust.reasons if trust is not None else []:
        # a reason that is a capture item's finding carries that item's next step
        it = next((c for c in capture if r.startswith(f"{c.id}:")), None)
        out.append(f"- {r.rstrip('. ')}" + (f". Next: {it.fix}" if it is not None else ""))
        if it is not None:
            told.add(it.id)
    for it in capture:
        if it.id not in told:
            out.append(f"- {it.id}: {it.title}. Next: {it.fix}")
    if len(out) == 1:
        out.append("- the capture represents the kernel: estimates stand as computed")
    return "\n".join(out)


def _full_item(i: int, it: PlanItem, detail: bool) -> list[str]:
    est = it.estimate
    out = ["", f"{i}. [{it.priority}] {it.id}: {it.title}",
           f"   location:   {_loc(it.location)}"]
    if detail:
        ev = []
        for e in it.evidence:
            thr = e.threshold
            cmp = e.comparison or ""
            ev.append(f"{e.metric} {_value(e.value)}" + (f" ({cmp} {_value(thr)})" if thr is not None else ""))
        out.append("   evidence:   " + "; ".join(ev))
    out.append(f"   root cause: {it.root_cause}")
    out.append(f"   fix:        {it.fix}")
    if est.low_pct is None:
        out.append(f"   estimate:   withheld: {est.withheld}")
    else:
        out.append(f"   estimate:   {_estimate_text(est)} ({est.basis})")
    sites = it.sites
    if len(sites) > 1:
        shown = sites if detail else sites[:SITES_SHOWN]
        out.append("   sites:      " + ", ".join(_site(s) for s in shown)
                   + (f", +{len(sites) - len(shown)} more" if len(sites) > len(shown) else ""))
    return out


def _short_item(i: int, it: PlanItem, width: int) -> str:
    loc = it.location
    file, line, n = loc.file, loc.line, loc.line_number
    where = (f"{file.rsplit('/', 1)[-1]}:{line if line is not None else '?'}" if file else
             f"#{n}" if n is not None else "kernel")
    head = f"{i}. [{it.priority}] {_estimate_text(it.estimate)}  {it.id}  {where}  "
    return head + shorten_words(it.title, max(16, width - len(head)))


def items_block(plan: list[PlanItem], skipped: list[Skipped] | None, markdown: bool,
                trust: Trust | None = None, detail: bool = False) -> str:
    """The trust block (reasons and capture items, once), then the items: the top ones in full,
    the rest one line each; `detail` adds every item in full with its evidence and all its sites,
    and the priority table."""
    capture = [it for it in plan if it.kind == Kind.CAPTURE]
    ranked = [it for it in plan if it.kind != Kind.CAPTURE]
    out = []
    block = trust_block(trust, capture, markdown)
    if block:
        out += [block, ""]
    out.append(heading(f"Optimization plan ({len(ranked)} item{'s' if len(ranked) != 1 else ''})", markdown))
    if not ranked:
        out.append("(no rule fired" + ("; --format json lists in plan_skipped why each rule did not"
                                       if skipped else "") + ")")
    full = len(ranked) if detail else FULL_ITEMS
    for n, it in enumerate(ranked, 1):
        i = it.rank if it.rank is not None else n  # the number JSON and HTML give it
        if n <= full:
            out += _full_item(i, it, detail)
        else:
            if n == full + 1:
                out.append("")
            out.append(_short_item(i, it, _width()))
    if ranked and detail:
        out.append("")
        out.append(heading("Priority order", markdown))
        rows: list[list[object]] = []
        for k, it in enumerate(ranked, 1):
            loc = it.location
            file, src_line, row = loc.file, loc.line, loc.line_number
            where = f"{file}:{src_line if src_line is not None else '?'}" if file else ""
            rows.append([it.rank if it.rank is not None else k, it.priority, it.id, where,
                         f"#{row}" if row is not None else "kernel", _estimate_text(it.estimate)])
        out.append(table(rows, ["#", "priority", "rule", "source", "row", "est. gain"], markdown))
    elif ranked:
        out.append("")
        out.append("(evidence, every site and the priority table: --detail; everything: --format json)")
    return "\n".join(out)


def gap_block(coverage: Coverage | None, markdown: bool) -> str:
    """The top stall class the items leave mostly unexplained: its rows and what they wait for."""
    gap = coverage.gap if coverage is not None else None
    if gap is None:
        return ""
    out = [heading(f"Not explained: {gap.category}, {100 * (1 - gap.share_explained):.0f}% of it in no item",
                   markdown)]
    for g in gap.rows:
        out.append(shorten_words(f"- {num(g.unexplained)} stall cycles at {gap_row_text(g)}", _width()))
    return "\n".join(out)


def _render(result: Result[object], markdown: bool, detail: bool = False) -> str:
    from hotspot.plan.api import PlanData

    d = result.data
    assert isinstance(d, PlanData)
    dispatch, arch = d.dispatch, d.arch
    out = Sections()
    # one header: the verdict's first line (kernel on arch), in markdown the `# hotspot plan:` title
    out.add("verdict", verdict_section(dispatch.kernel, arch, d.verdict, markdown, title="hotspot plan",
                                       plan_below=wanted("plan")))
    where = f"  dispatch dir: {dispatch.path}\n  arch: {arch.gfx}"
    if d.selection:
        where += f"\n  chosen because: {d.selection.reason}"
    if d.pmc:
        where += (f"\n  counters: {', '.join(d.pmc.files)} -> kernel "
                  f"{d.pmc.kernel or '(none matched)'} ({d.pmc.match})")
    out.add("dispatch", where)
    out.add("summary", summary_block(d.summary, markdown), detail)
    out.add("plan", items_block(d.plan, d.plan_skipped, markdown, d.trust, detail))
    out.add("gap", gap_block(d.coverage, markdown))
    return out.text()


def render_text(result: Result[object]) -> str:
    return _render(result, markdown=False)


def render_markdown(result: Result[object]) -> str:
    return _render(result, markdown=True)


def render_text_detail(result: Result[object]) -> str:
    return _render(result, markdown=False, detail=True)


def render_markdown_detail(result: Result[object]) -> str:
    return _render(result, markdown=True, detail=True)


BRIEF_DEFAULT_WIDTH = 100


def _width() -> int:
    import os
    import shutil

    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 20:
        return int(env)
    return shutil.get_terminal_size((BRIEF_DEFAULT_WIDTH, 24)).columns


TRUST_LINES = 3  # the verdict's trust text wraps over at most this many lines (the rest: drop --brief)
TITLE_LINES = 3  # an item's title wraps over at most this many lines
BRIEF_LINES = 15  # the verdict block's most lines (--brief's help promises it)
_CONT = "  "  # continuation lines of a wrapped verdict line
MIN_WORD_ROOM = 10  # a word is elided to no fewer characters than this, however deep its indent


def _wrap_at_most(text: str, width: int, max_lines: int, indent: str = _CONT) -> list[str]:
    """wrap_words, keeping the first `max_lines` lines; what does not fit is dropped by whole words
    and marked by a separate ` …` (never a cut word)."""
    lines = wrap_words(text, width, hang=indent, min_room=MIN_WORD_ROOM)
    if len(lines) <= max_lines:
        return lines
    kept = lines[:max_lines]
    last = kept[-1]
    while len(last) + 2 > width and " " in last.strip():
        last = last.rstrip().rsplit(" ", 1)[0]
    kept[-1] = last.rstrip(" ,;:—–-") + " …"
    return kept


def _fit_list(prefix: str, parts: list[str], width: int) -> str:
    """`prefix` then as many whole `parts` (comma-separated) as fit the width; the rest are dropped
    whole (the full view and JSON list them all)."""
    text = prefix
    for i, part in enumerate(parts):
        piece = (", " if i else "") + part
        if len(text) + len(piece) > width:
            break
        text += piece
    return text.rstrip(" —")


def _trust_lines(trust: Trust, width: int) -> list[str]:
    """The trust level and its reasons over at most TRUST_LINES lines: each reason whole if they
    fit, else without their remedies (after ` — `), else their names only."""
    reasons = list(trust.reasons)
    for shown in (reasons, [r.split(" — ", 1)[0] for r in reasons]):
        lines = wrap_words(f"trust: {trust.level}" + (" — " + "; ".join(shown) if shown else ""), width,
                           hang=_CONT, min_room=MIN_WORD_ROOM)
        if len(lines) <= TRUST_LINES:
            return lines
    names = "; ".join(r.split(":", 1)[0] for r in reasons)
    return _wrap_at_most(f"trust: {trust.level} — {names} (why: drop --brief)", width, TRUST_LINES)


def _header(kernel: str, arch: ArchOut, width: int) -> str:
    """`hotspot: KERNEL on gfx950 (product)`: the product goes first, then the kernel name is
    elided in its middle (its start and end show), so no word is cut at the end."""
    tail = f" on {arch.gfx}"
    full = tail + (f" ({arch.product})" if arch.product else "")
    for suffix in (full, tail):
        if len("hotspot: " + kernel + suffix) <= width:
            return "hotspot: " + kernel + suffix
    return "hotspot: " + shorten_middle(kernel, max(10, width - len("hotspot: ") - len(tail))) + tail


def verdict_block(kernel: str, arch: ArchOut, verdict: Verdict, width: int | None = None,
                  more_hint: str = "drop --brief, or --format json", trust_below: bool = False) -> str:
    """At most BRIEF_LINES lines (with the usual three items), each within the width: kernel and arch, trust, where the cycles go, the top
    items with their estimate and file:line (paths shortened from the left so the line number
    shows). Long lines wrap between words or drop whole parts; no word is ever cut."""
    w = width or _width()
    lines = [_header(kernel, arch, w)]
    trust = verdict.trust
    reasons = len(trust.reasons)
    if trust_below:  # the full view prints the reasons once, in its trust block
        lines.append(f"trust: {trust.level}"
                     + (f" ({reasons} reason{'s' if reasons != 1 else ''} below)" if reasons else ""))
    else:
        lines.extend(_trust_lines(trust, w))
    lines.append(_fit_list(f"cycles: {pct(verdict.stall_pct_of_cycles)} stall — ",
                           [f"{c.category} {100 * c.share:.0f}%" for c in verdict.top_categories], w))
    if verdict.explained_share is not None:
        lines.append(_fit_list(f"explained by the items: {100 * verdict.explained_share:.0f}% of stall — ",
                               [f"{c.category} {100 * c.share:.0f}%" for c in verdict.explained_by_class], w))
    if verdict.unexplained:
        lines.extend(_wrap_at_most("not explained: " + verdict.unexplained, w, 2))
    items = verdict.top_items
    if not items:
        lines.extend(wrap_words("no plan item: nothing to change was found in this capture", w, hang=_CONT,
                                min_room=MIN_WORD_ROOM))
    more = verdict.more_items
    tail = (wrap_words(f"+{more} more item{'s' if more != 1 else ''}: {more_hint}", w, hang=_CONT,
                       min_room=MIN_WORD_ROOM) if more else [])
    # titles wrap over TITLE_LINES lines while the block stays within BRIEF_LINES; else one line each
    for title_lines in (TITLE_LINES, 1):
        shown = _item_lines(items, w, title_lines)
        if len(lines) + len(shown) + len(tail) <= BRIEF_LINES:
            break
    return "\n".join(lines + shown + tail)


def _item_lines(items: list[VerdictItem], w: int, title_lines: int) -> list[str]:
    """The verdict's top items: rank, priority, estimate, file:line, then the title wrapped."""
    lines: list[str] = []
    for it in items:
        low, high = it.low_pct, it.high_pct
        est = "withheld" if low is None or high is None else f"{low:.0f}–{high:.0f}%"
        where = (f"{it.file}:{it.line if it.line is not None else '?'}" if it.file
                 else (f"#{it.line_number}" if it.line_number is not None else "kernel"))
        head = f"{it.rank}. [{it.priority}] {est:>8}  "
        room = max(20, w - len(head) - 2)
        # the file name and line always show whole (directories go first); the title wraps below
        name = where.rsplit("/", 1)[-1]
        loc = shorten_left(where, min(max(min(48, room // 2), len(name) + 2), room - 10))
        first = head + loc + "  "
        if w - len(first) < 20:  # a long file name: the title goes on its own lines below
            lines.append(first.rstrip())
            first = " " * len(head)
        title = _wrap_at_most(it.title, w - len(first), title_lines, indent="")
        lines.append(first + title[0])
        lines.extend(" " * len(first) + t for t in title[1:])
    return lines


def verdict_section(kernel: str, arch: ArchOut, verdict: Verdict, markdown: bool, title: str = "hotspot",
                    plan_below: bool = True) -> str:
    """The verdict block as the first section of a full text/markdown view: its first line (kernel
    on arch) is the view's one header; in markdown that line becomes the `# title: ...` heading.
    `plan_below`: the view prints the plan (trust reasons and every item) further down."""
    more = "see the plan below" if plan_below else "add --plan, or run hotspot plan"
    block = verdict_block(kernel, arch, verdict, more_hint=more, trust_below=plan_below)
    if not markdown:
        return block
    first, _, rest = block.partition("\n")
    return f"# {title}: {first.removeprefix('hotspot: ')}\n\n```text\n{rest}\n```"


def render_brief(result: Result[object]) -> str:
    """`--brief`: only the verdict block (analyze --plan, plan)."""
    from hotspot.plan.api import planned_view

    view = planned_view(result.data)
    if view is None:
        return "(no plan: run with --plan)"
    dispatch, arch, verdict = view
    return verdict_block(dispatch.kernel, arch, verdict)
