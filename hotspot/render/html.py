"""Self-contained HTML view of an `analyze` / `report` Result (inline CSS and JS, no network).

Rendered from the typed analysis (hotspot/att/model.py) of each dispatch and the report's own views
(hotspot/render/report_model.py); a saved JSON file is read back into the same types
(hotspot/att/load.py), so it renders the same. Every optional section (occupancy, waits,
blamed_lines, plan, listing, wave_timelines, ...) may be None or empty.

Safety: every string from the inputs goes through `esc` (server-rendered parts) or into the embedded
JSON blob, where `<`, `>` and `&` are written as \\u escapes so no input can close the script
element; the script only ever assigns it with textContent. A Content-Security-Policy forbids every
fetch, so the file works offline from file:// and cannot leak data.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any, Union

import orjson

from hotspot._version import __version__
from hotspot.render.html_assets import SCRIPT, STYLE
from hotspot.render.tables import num, pct, shorten_left, shorten_middle
from hotspot.att.code_totals import FileStat, InstructionStat, MixEntry, SourceLineStat
from hotspot.att.barriers import BarrierStat
from hotspot.att.findings import Finding
from hotspot.att.loops import Loop
from hotspot.att.model import AnalysisMode, DetailLine, DispatchAnalysis, MultiAnalysis
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.att.states import WaveStates
from hotspot.att.waits.reduce import BlamedLine, LgkmBreakdown, Producer
from hotspot.capture import DispatchCandidate
from hotspot.plan.location import Location
from hotspot.plan.model import Evidence, Kind, PlanItem
from hotspot.render.report_model import ListingRow, ReportDispatch, ReportPage, page_of
from hotspot.result import JsonValue, Result, plain

Scalar = Union[str, int, float, bool, None]  # one table cell's value
Row = Union[ListingRow, InstructionStat]  # a row of the ISA view: the full listing or the executed rows

# Viewer palette (FORMATS.md §1.2, rocprof-compute-viewer), mapped onto hotspot's categories.
_VIEWER = {"SMEM": "#f0ff00", "SALU": "#a0ffa0", "VMEM": "#ffc432", "FLAT": "#80d0f8",
           "LDS": "#ff7000", "VALU": "#00a000", "JUMP": "#5038ff", "NEXT": "#8020ff",
           "IMMED": "#404040"}
CATEGORY_COLORS: dict[str, str] = {
    "vmem-load": _VIEWER["VMEM"], "vmem-store": _VIEWER["VMEM"], "vmem-atomic": _VIEWER["VMEM"],
    "scratch": _VIEWER["VMEM"], "flat": _VIEWER["FLAT"], "smem": _VIEWER["SMEM"],
    "lds": _VIEWER["LDS"], "cross-lane": _VIEWER["LDS"], "mfma": _VIEWER["VALU"],
    "valu": _VIEWER["VALU"], "salu": _VIEWER["SALU"], "branch": _VIEWER["JUMP"],
    "wait-vmcnt": _VIEWER["IMMED"], "wait-lgkmcnt": _VIEWER["IMMED"], "wait-expcnt": _VIEWER["IMMED"],
    "wait-mixed": _VIEWER["IMMED"], "barrier": _VIEWER["IMMED"], "nop": _VIEWER["IMMED"],
    "message": "#9a9a9a", "other": "#cccccc",
}
UNKNOWN_COLOR = "#cccccc"
STATE_COLORS: dict[str, str] = {"empty": "#e6e6e6", "idle": "#707070", "exec": "#00fe00",
                                "wait": "#fefe00", "stall": "#ff0000"}
STATE_ORDER = ("exec", "wait", "stall", "idle", "empty")

TIMELINE_WIDTH = 1000  # SVG user units (the chart scales to the page width)
TIMELINE_ROW = 22
TIMELINE_GAP = 30
TIMELINE_LEFT = 0
TIMELINE_TICKS = 8  # about this many axis ticks
TOP_PRODUCERS = 25  # rows in the "top blamed loads" table when built from `waits`
TOP_WAITS = 25
# The page is rendered in pieces (page_chunks): data-blob rows per piece, and characters of the
# source table after which a piece ends (a source line's panel lists all its instructions).
CHUNK_ROWS = 2048
CHUNK_CHARS = 1 << 20
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:")


def esc(value: Scalar) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_html(result: Result[DispatchAnalysis | MultiAnalysis | ReportPage]) -> str:
    return render_page(result.data, list(result.warnings))


def render_page(data: DispatchAnalysis | MultiAnalysis | ReportPage,
                warnings: list[str] | None = None) -> str:
    return "".join(page_chunks(data, warnings))


def page_chunks(data: DispatchAnalysis | MultiAnalysis | ReportPage,
                warnings: list[str] | None = None) -> Iterator[str]:
    """The page of `render_page` in consecutive pieces, so that a writer never holds all of it:
    the source table and the data blob grow with the code rows (hotspot/export/report_file.py)."""
    page = page_of(data)
    views = page.dispatches
    kernel = (views[0].analysis.dispatch.kernel if views else "") or "(no dispatch)"
    from hotspot.kernel_names import short_kernel_name

    short = short_kernel_name(kernel)  # the heading; the full name is shown once, below it
    full = (f'<details class="meta" data-part="kernel-full"><summary>full kernel name</summary>'
            f'<span class="mono">{esc(kernel)}</span></details>' if short != kernel else "")
    nav = _nav("d0") if len(views) == 1 else ""
    meta = _page_meta(views[0].analysis) if views else ""
    warn = ""
    if warnings:
        warn = ('<div class="warn" data-section="warnings"><b>Warnings</b><ul>'
                + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul></div>")
    yield ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           "<link rel=\"icon\" href=\"data:,\">"
           f"<title>hotspot report: {esc(short)}</title><style>{STYLE}</style></head>\n<body>"
           f"<header class=\"top\"><h1>hotspot report: <span class=\"kernel\">"
           f"{esc(short)}</span></h1>{full}"
           f"{meta}{nav}</header>\n<main>{warn}")
    if page.ranking:
        yield _ranking(page.ranking)
    for i, view in enumerate(views):
        yield from _dispatch(view, f"d{i}", multi=len(views) > 1)
    yield ("</main>\n"
           f"<footer>Generated by hotspot {esc(__version__)} from one ATT dispatch. Self-contained: no "
           "network access; every number is on the page and in the embedded data.</footer>\n"
           f"<script>{SCRIPT}</script></body></html>\n")


# ------------------------------------------------------------------------------------------ helpers

def _s(value: Scalar) -> str:
    return "" if value is None else str(value)


def _n(value: Scalar) -> str:
    return num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else esc(value)


def _share(value: float | None) -> str:
    return pct(100 * value) if isinstance(value, (int, float)) else ""


def _color(category: str | None, default: str = UNKNOWN_COLOR) -> str:
    return CATEGORY_COLORS.get(_s(category), default)


def _state_color(state: str) -> str:
    return STATE_COLORS.get(state, UNKNOWN_COLOR)


def _swatch(color: str) -> str:
    return f'<span class="sw" style="background:{color}"></span>'


def _loc(file: str, line: int | None) -> str:
    return f"{_s(file)}:{line if line is not None else '?'}"


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def fmt_value(value: object) -> str:
    """Plain text for any JSON value (used for fields whose shape is open)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(fmt_value(v) for v in value)
    if isinstance(value, dict):
        # a key without a value (`lds: ;`) says nothing: it is left out
        return "; ".join(f"{k}: {fmt_value(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    return str(value)


def _section(prefix: str, name: str, title: str, inner: str, sub: str = "") -> str:
    sub_html = f' <span class="sub">{sub}</span>' if sub else ""
    return (f'<section class="part" id="{prefix}-{name}" data-section="{name}">'
            f"<h2>{esc(title)}{sub_html}</h2>{inner}</section>")


def _hbar(fraction: float, color: str, title: str = "") -> str:
    w = max(0.0, min(1.0, fraction)) * 100
    return (f'<div class="hbar" title="{esc(title)}"><span style="width:{w:.2f}%;'
            f'background:{color}"></span></div>')


def _kv(pairs: list[tuple[str, str]]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


# ------------------------------------------------------------------------------------- page parts

def _page_meta(a: DispatchAnalysis) -> str:
    d, arch = a.dispatch, a.arch
    bits = [_s(arch.gfx)]
    if arch.product:
        bits.append(arch.product)
    bits.append(f"{num(d.waves) if isinstance(d.waves, int) else '?'} waves traced")
    bits.append(_s(d.path))
    return '<p class="meta">' + " · ".join(esc(b) for b in bits if b) + "</p>"


def _nav(prefix: str) -> str:
    links = [("summary", "Summary"), ("roofline", "Roofline"), ("categories", "Stall by category"),
             ("source", "Source"),
             ("isa", "ISA"), ("loads", "Blamed loads"), ("timeline", "Wave timeline"),
             ("more", "More")]
    return '<nav class="toc">' + "".join(f'<a href="#{prefix}-{k}">{t}</a>' for k, t in links) + "</nav>"


def _ranking(ranking: list[DispatchCandidate]) -> str:
    rows = []
    for i, r in enumerate(ranking):
        rows.append(f"<tr><td class=\"num\">{i + 1}</td><td class=\"mono\">{esc(r.path)}</td>"
                    f"<td>{esc(r.kernel)}</td><td class=\"num\">{_n(r.waves)}</td>"
                    f"<td class=\"num\">{_n(r.executed_instructions)}</td>"
                    f"<td>{esc(r.status)}</td></tr>")
    inner = ('<table class="grid"><thead><tr><th class="num">#</th><th>dir</th><th>kernel</th>'
             '<th class="num">waves</th><th class="num">executed</th><th>status</th></tr></thead>'
             f"<tbody>{''.join(rows)}</tbody></table>")
    return _section("all", "ranking", "Dispatch dirs", inner)


def _dispatch(view: ReportDispatch, prefix: str, multi: bool) -> Iterator[str]:
    a = view.analysis
    unit = "samples" if a.mode == AnalysisMode.PC_SAMPLING else "cycles"
    yield f'<section class="dispatch" id="{prefix}">'
    if multi:
        yield (f'<h2 class="dispatch-title">{esc(a.dispatch.kernel)} '
               f'<span class="note mono">{esc(a.dispatch.path)}</span></h2>' + _nav(prefix))
    yield _summary(a, view.plan, prefix, unit)
    yield _roofline(view, prefix)
    yield _categories(a, prefix, unit)
    yield from _source(view, prefix, unit)
    yield _isa(view, prefix, unit)
    yield _loads(a, prefix)
    yield _timeline(view, prefix)
    yield _more(a, prefix)
    yield '<script type="application/json" class="hotspot-data">'
    yield from _blob(view, prefix)
    yield "</script></section>"


def _summary(a: DispatchAnalysis, plan: list[PlanItem] | None, prefix: str, unit: str) -> str:
    d, arch, t = a.dispatch, a.arch, a.totals
    pairs = [("kernel", esc(d.kernel))]
    if d.symbol and d.symbol != d.kernel:
        pairs.append(("symbol", f'<span class="mono">{esc(d.symbol)}</span>'))
    arch_text = _s(arch.gfx) + (f" ({arch.product})" if arch.product else "")
    pairs.append(("arch", esc(arch_text) + f' <span class="note">from {esc(arch.source)}</span>'))
    pairs.append(("dispatch dir", f'<span class="mono">{esc(d.path)}</span>'))
    pairs.append(("waves traced", _n(d.waves)))
    pairs.append(("instructions", f"{_n(d.executed_instructions)} executed of "
                                  f"{_n(d.code_rows)} rows; "
                                  f"{pct(d.source_mapped_pct or 0, 0)} source-mapped"))
    samples = a.samples
    if unit == "samples" and samples is not None:
        pairs.append(("samples", f"{_n(samples.total)} ({_n(samples.issued)} issued, "
                                 f"{_n(samples.stalled)} stalled)"))
    else:
        lat, stall = t.latency or 0, t.stall or 0
        pairs.append(("latency (Σ cycles)", _n(lat)))
        pairs.append(("stall", f"{_n(stall)} ({pct(100 * stall / lat if lat else 0)} of latency)"))
        pairs.append(("issue / idle", f"{_n(t.issue)} / {_n(t.idle)}"))
    if a.selection is not None and a.selection.reason:
        pairs.append(("chosen because", esc(a.selection.reason)))
    cards = [f'<div class="card"><h3>Dispatch</h3>{_kv(pairs)}</div>']
    cards.append(f'<div class="card" data-part="occupancy"><h3>Occupancy</h3>{_occupancy(a.occupancy)}'
                 f'{_state_summary(a.wave_states)}</div>')
    inner = f'<div class="cards">{"".join(cards)}</div>'
    inner += "<h3>Findings</h3>" + _findings(a.findings)
    inner += "<h3>Plan</h3>" + _plan(plan)
    return _section(prefix, "summary", "Summary", inner)


def _roofline(view: ReportDispatch, prefix: str) -> str:
    """The roofline picture (hotspot/render/html_roofline.py) from every executed row's count: the
    report's full listing, or an analysis that holds every executed instruction (a saved one whose
    tables are complete); a page with only the top rows says so."""
    from hotspot.att.kernel_roofline import Roofline, roofline_of
    from hotspot.render.html_roofline import figure

    rows, complete = _isa_rows(view)
    complete = complete or view.analysis.tables_complete is True  # rows never executed add no FLOPs
    if complete:
        model = roofline_of(view.analysis, [(r.isa, r.hit) for r in rows], view.counters)
    else:
        model = Roofline(False, "it counts the FLOPs of every executed instruction, and this page "
                                "holds only the top ones; hotspot report on the dispatch folder draws it")
    return _section(prefix, "roofline", "Roofline", figure(model))


def _occupancy(occ: DispatchOccupancy | None) -> str:
    if occ is None:
        return '<p class="note">Occupancy is not in this data (needs the occupancy analysis).</p>'
    theo = occ.waves_per_simd
    achieved = occ.achieved
    mean = achieved.mean_waves_per_simd if achieved is not None else None
    peak = achieved.peak_waves_per_simd if achieved is not None else None
    scale = max([v for v in (theo, mean, peak) if isinstance(v, (int, float))] or [1]) or 1
    rows: list[tuple[str, int | float, str]] = []
    if isinstance(theo, (int, float)):
        rows.append(("theoretical", theo, f"limited by {_s(occ.limiter)}"))
    if isinstance(mean, (int, float)):
        rows.append(("achieved mean", mean, "occupancy.json"))
    if isinstance(peak, (int, float)):
        rows.append(("achieved peak", peak, "occupancy.json"))
    out = ['<table class="occ"><tbody>']
    for label, value, note in rows:
        out.append(f"<tr><td>{esc(label)}</td><td class=\"num\">{esc(fmt_value(value))}</td>"
                   f"<td style=\"width:50%\">{_hbar(value / scale, '#6b8fd6', label)}</td>"
                   f"<td class=\"note\">{esc(note)}</td></tr>")
    out.append("</tbody></table>")
    if not rows:
        out.append(f"<p>{esc(fmt_value(plain(occ)))}</p>")
    if occ.limits.items():
        out.append('<p class="note">waves/SIMD allowed by each resource: '
                   + esc(fmt_value(dict(occ.limits.items()))) + "</p>")
    if occ.resources:
        out.append('<p class="note">resources: ' + esc(fmt_value(plain(occ.resources))) + "</p>")
    for name, step in occ.next_step.items():
        if step.message:
            out.append(f'<p class="hint">next step ({esc(name)}): {esc(fmt_value(step.message))}</p>')
    return "".join(out)


def _state_summary(ws: WaveStates | None) -> str:
    if ws is None:
        return ""
    states = ws.states
    total = sum(v for v in states.values() if isinstance(v, (int, float))) or 0
    if not total:
        return ""
    spans, legend = [], []
    for name in [s for s in STATE_ORDER if s in states] + [s for s in states if s not in STATE_ORDER]:
        v = states[name]
        if not isinstance(v, (int, float)) or v <= 0:
            continue
        color = _state_color(name)
        spans.append(f'<span style="width:{100 * v / total:.3f}%;background:{color}" '
                     f'title="{esc(name)} {num(v)} cycles"></span>')
        legend.append(f"<span>{_swatch(color)}{esc(name)} {pct(100 * v / total)}</span>")
    return (f'<h3>Wave states <span class="note">({_n(ws.waves_read)} waves, '
            f'{_n(total)} cycles)</span></h3><div class="stack">{"".join(spans)}</div>'
            f'<div class="legend">{"".join(legend)}</div>')


def _findings(findings: list[Finding]) -> str:
    if not findings:
        return '<p class="note">No findings.</p>'
    items = []
    for f in findings:
        sev = _s(f.severity) or "info"
        hint = f'<div class="hint">next: {esc(f.hint)}</div>' if f.hint else ""
        items.append(f'<li><span class="sev {esc(sev)}">{esc(sev)}</span><b>{esc(f.id)}</b>: '
                     f"{esc(f.message)}{hint}</li>")
    return f'<ul class="findings">{"".join(items)}</ul>'


def _plan(plan: list[PlanItem] | None) -> str:
    if not plan:
        return '<p class="note">No optimization plan in this data.</p>'
    items, trust = [], []
    for n, p in enumerate((p for p in plan if p.kind != Kind.CAPTURE), 1):
        items.append(_plan_item(p, p.rank if p.rank is not None else n))
    for p in plan:
        if p.kind == Kind.CAPTURE:  # trust: no number, as in the text plan
            trust.append(_plan_item(p, None))
    # the same number as text, markdown and JSON (`rank`): capture items are trust, not item 1
    head = f'<ul class="plan trust">{"".join(trust)}</ul>' if trust else ""
    return head + f'<ol class="plan">{"".join(items)}</ol>'


def _plan_item(p: PlanItem, rank: int | None) -> str:
    """One plan item; `rank` None for a capture (trust) item."""
    est = p.estimate
    est_text = ""
    if est.low_pct is not None or est.high_pct is not None:
        est_text = (f" · estimated gain {esc(fmt_value(est.low_pct))}–"
                    f"{esc(fmt_value(est.high_pct))}%")
        if est.basis:
            est_text += f' <span class="note">({esc(fmt_value(est.basis))})</span>'
    prio = f'<span class="sev info">{esc(fmt_value(p.priority))}</span>' \
        if p.priority is not None else ""
    loc = f' <span class="mono">{esc(_plan_location(p.location))}</span>' if p.location else ""
    ev = f'<div class="note">evidence: {esc(_plan_evidence(p.evidence))}</div>' if p.evidence else ""
    cause = f'<div class="note">why: {esc(fmt_value(p.root_cause))}</div>' if p.root_cause else ""
    fix = f'<div class="hint">fix: {esc(fmt_value(p.fix))}</div>' if p.fix else ""
    value = f' value="{rank}"' if rank is not None else ""
    label = "" if rank is not None else '<span class="sev info">trust</span>'
    return f"<li{value}>{label}{prio}<b>{esc(p.title or p.id)}</b>{loc}{est_text}{ev}{cause}{fix}</li>"


def _plan_location(loc: Location) -> str:
    """`file:line` and the instruction (`#ordinal isa`) of a plan item, when present."""
    parts = []
    if loc.file:
        parts.append(f"{loc.file}:{loc.line if loc.line is not None else '?'}")
    if loc.line_number is not None:
        parts.append(f"#{loc.line_number} {loc.isa or ''}".rstrip())
    if not parts and loc.kernel:
        from hotspot.kernel_names import short_kernel_name

        parts.append(f"kernel {short_kernel_name(loc.kernel)}")  # the whole kernel: no line to name
    return " ".join(parts) or fmt_value(plain(loc))


def _plan_evidence(evidence: list[Evidence]) -> str:
    """`metric = value (threshold: cmp limit)` per evidence entry."""
    out = []
    for e in evidence:
        text = f"{e.metric} = {fmt_value(e.value)}"
        if e.threshold is not None:
            text += f" (threshold {e.comparison or ''} {fmt_value(e.threshold)})"
        out.append(text)
    return "; ".join(out)


def _categories(a: DispatchAnalysis, prefix: str, unit: str) -> str:
    cats = [c for c in a.stall_by_category if c.stall or c.latency]
    if not cats:
        return _section(prefix, "categories", "Stall by category", '<p class="note">No stall.</p>')
    rows = []
    for c in cats:
        color = _color(c.category)
        share = c.share or 0.0
        rows.append(f"<tr><td>{_swatch(color)}{esc(c.category)}</td>"
                    f'<td class="barcol">{_hbar(share, color, _share(share))}</td>'
                    f'<td class="num">{_n(c.stall)}</td><td class="num">{_share(share)}</td>'
                    f'<td class="num">{_n(c.hit)}</td><td class="num">{_n(c.instructions)}</td></tr>')
    inner = (f'<table class="cats grid"><thead><tr><th>category</th><th>share of stall</th>'
             f'<th class="num">stall ({unit})</th><th class="num">share</th><th class="num">hits</th>'
             f'<th class="num">instructions</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return _section(prefix, "categories", "Stall by category", inner,
                    "summed over waves; waits and barriers count every waiting wave")


def _instruction_index(view: ReportDispatch) -> dict[int, Row]:
    """line_number -> instruction (from the full listing when present, else `instructions`)."""
    out: dict[int, Row] = {}
    for src in (view.analysis.instructions, view.listing or []):
        for i in src:
            out[i.line_number] = i
    return out


def _source(view: ReportDispatch, prefix: str, unit: str) -> Iterator[str]:
    a = view.analysis
    lines = a.source_lines
    if not lines:
        yield _section(prefix, "source", "Source lines",
                       '<p class="note">No source locations in this trace (the code carried no line '
                       "tables); the ISA view below is the reliable one.</p>")
        return
    by_line = _instruction_index(view)
    details = {(d.file, d.line): d for d in a.detail or []}
    max_stall = max((s.stall or 0 for s in lines), default=0) or 1
    files = _files(a.files)
    head, tail = _section(prefix, "source", "Source lines", "\0", f"{len(lines)} lines").split("\0")
    yield (head + f"{files}{_sources_found(list(details.values()))}"
           "<p class=\"note\">Click a line to see its source and instructions.</p>"
           '<table class="src grid"><thead><tr><th>stall</th><th>source line</th>'
           f'<th class="num">stall ({unit})</th><th class="num">share</th>'
           '<th class="num">stall rate</th><th>dominant</th><th class="num">instrs</th></tr></thead>'
           "<tbody>")
    rows: list[str] = []
    size = 0
    for k, s in enumerate(lines):
        loc = _loc(s.file, s.line)
        color = _color(s.dominant_category)
        insts = s.instructions or []
        rows.append(
            f'<tr class="src-row" id="{prefix}-src-{k}" tabindex="0" aria-expanded="false" '
            f'data-instructions="{len(insts)}">'
            f'<td style="width:18%">{_hbar((s.stall or 0) / max_stall, color, _share(s.share))}</td>'
            f'<td class="loc mono" title="{esc(loc)}">{esc(_base(_s(s.file)))}:'
            f'{esc(s.line if s.line is not None else "?")}</td>'
            f'<td class="num">{_n(s.stall)}</td><td class="num">{_share(s.share)}</td>'
            f'<td class="num">{_share(s.stall_rate)}</td>'
            f'<td>{_swatch(color)}{esc(s.dominant_category)}</td>'
            f'<td class="num">{len(insts)}</td></tr>')
        detail = details.get((s.file, s.line))
        rows.append(f'<tr class="src-detail" hidden><td colspan="7">'
                    f'{_source_detail(s, by_line, prefix, detail)}</td></tr>')
        size += len(rows[-2]) + len(rows[-1])
        if size >= CHUNK_CHARS:
            yield "".join(rows)
            rows, size = [], 0
    yield "".join(rows) + "</tbody></table>" + tail


def _sources_found(details: list[DetailLine]) -> str:
    """Where the source text came from, per file: the capture's snapshot, a local checkout named
    by --source-map, or nowhere (with the option that fixes it)."""
    if not details:
        return ""
    where: dict[str, tuple[str, str]] = {}
    for d in details:
        f = _s(d.file)
        if f and (f not in where or d.source_found):
            where[f] = (_s(d.source_found), _s(d.source_path))
    found = sum(1 for v in where.values() if v[0])
    items = []
    for f, (how, local) in sorted(where.items()):
        said = ("snapshot" if how == "snapshot" else f"checkout {local} (--source-map)" if how
                else "not found")
        items.append(f'<li><span class="mono">{esc(f)}</span>: {esc(said)}</li>')
    hint = ("" if found == len(where) else
            " Sources not found: pass <code>--source-map OLD=NEW</code> to read them from a local checkout.")
    return (f'<details class="sources" data-part="sources-found"><summary>Source text: {found} of '
            f'{len(where)} files found.{hint}</summary><ul>{"".join(items)}</ul></details>')


def _snippet(detail: DetailLine | None) -> str:
    if detail is None:
        return ""
    if not detail.snippet:
        return ('<div class="note">source not available: no snapshot in the capture; pass '
                "--source-map OLD=NEW to read it from a local checkout</div>")
    how = detail.source_found
    origin = ("from the capture's snapshot" if how == "snapshot" else
              f"from {_s(detail.source_path)} (--source-map)")
    lines = "".join(f'<span class="{"hot" if x.hot else "ctx"}">{esc(x.line)!s:>6} | '
                    f'{esc(x.text)}</span>\n' for x in detail.snippet)
    return f'<div class="note">{esc(origin)}</div><pre class="snippet">{lines}</pre>'


def _source_detail(s: SourceLineStat, by_line: dict[int, Row], prefix: str,
                   detail: DetailLine | None = None) -> str:
    full = _loc(s.file, s.line)
    head = f'<div class="mono note">{esc(full)}</div>'
    chains = s.chains or []
    if chains:
        head += "".join(f'<div class="mono note">inlined: {esc(c)}</div>' for c in chains)
    head += _snippet(detail)
    rows = []
    for n in s.instructions or []:
        i = by_line.get(n)  # None: a line number the listing does not hold
        color = _color(i.category if i else None)
        rows.append(f'<tr><td class="num"><a href="#{prefix}-isa-{esc(n)}">#{esc(n)}</a></td>'
                    f'<td class="isa-text">{_swatch(color)}{esc(i.isa if i else "")}</td>'
                    f'<td>{esc(i.category if i else "")}</td><td class="num">{_n(i.hit if i else None)}</td>'
                    f'<td class="num">{_n(i.stall if i else None)}</td>'
                    f'<td class="num">{_n(i.latency if i else None)}</td></tr>')
    return (head + '<table class="insts"><thead><tr><th class="num">#</th><th>instruction</th>'
            '<th>category</th><th class="num">hits</th><th class="num">stall</th>'
            f'<th class="num">latency</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _files(files: list[FileStat]) -> str:
    if len(files) < 2:
        return ""
    rows = "".join(f'<tr><td class="mono">{esc(f.file)}</td><td class="num">{_n(f.stall)}</td>'
                   f'<td class="num">{_share(f.share)}</td><td class="num">{_n(f.lines)}</td></tr>'
                   for f in files)
    return ('<table class="grid files"><thead><tr><th>file</th><th class="num">stall</th>'
            f'<th class="num">share</th><th class="num">lines</th></tr></thead><tbody>{rows}</tbody></table>')


def _isa_rows(view: ReportDispatch) -> tuple[list[Row], bool]:
    """The rows of the ISA view in program order, and whether they are the full listing."""
    if view.listing:
        return list(view.listing), True
    return sorted(view.analysis.instructions, key=lambda i: i.line_number or 0), False


def _isa(view: ReportDispatch, prefix: str, unit: str) -> str:
    rows, complete = _isa_rows(view)
    executed = sum(1 for r in rows if r.hit)
    if complete:
        sub = f"{num(len(rows))} rows, {num(executed)} executed"
    else:
        sub = (f"{num(len(rows))} executed instructions (the full listing, with never-executed rows, "
               "is in hotspot report)")
    wait_note = ("Click a row: an <code>s_waitcnt</code> shows arrows from the loads it waits for "
                 "(share of its stall); a load shows arrows to its waits." if view.analysis.waits else
                 "Wait → producer blame is not in this data, so no arrows.")
    inner = (f'<div class="isa-tools"><label><input type="checkbox" class="hide-cold"> hide '
             f'never-executed rows</label><span class="note">{wait_note} Bars are relative to the '
             f'column maximum; {unit} are summed over waves.</span></div>'
             f'<div class="isa-scroll"><div class="isa-inner"><svg class="arrows" aria-hidden="true">'
             f'<defs><marker id="{prefix}-arrowhead" viewBox="0 0 10 10" refX="9" refY="5" '
             'markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" '
             'fill="#c0392b"/></marker></defs></svg>'
             '<div class="isa" role="table"><div class="isa-head" role="row"><span></span>'
             '<span class="num">#</span><span>instruction</span><span>category</span>'
             '<span class="num">hit</span><span class="num">latency</span><span class="num">stall'
             '</span><span class="num">idle</span><span>waits on (share)</span><span>source</span>'
             '</div><div class="isa-body"></div></div></div></div>'
             '<noscript><p class="note">The ISA table needs JavaScript; the same data is in '
             "hotspot analyze --format json.</p></noscript>")
    return _section(prefix, "isa", "ISA", inner, sub)


def _loads(a: DispatchAnalysis, prefix: str) -> str:
    blamed = a.blamed_lines
    waits = a.waits or []
    parts = []
    if blamed:
        parts.append(_blamed_lines_table(blamed))
    elif waits:
        prods = [(w, p) for w in waits for p in w.producers]
        prods.sort(key=lambda wp: (-(wp[1].blamed_stall or 0), wp[1].line_number or 0,
                                   wp[0].line_number or 0))
        rows = []
        for w, p in prods[:TOP_PRODUCERS]:
            first = (f'<a href="#{prefix}-isa-{esc(p.line_number)}">#{esc(p.line_number)}</a>'
                     if p.line_number is not None else "")
            rows.append(
                f'<tr><td class="num">{first}</td><td class="isa-text">'
                f'{_swatch(_color(p.category))}{esc(p.isa)}</td>'
                f'<td class="num">{_n(p.blamed_stall)}</td><td class="num">{_share(p.share)}</td>'
                f'<td class="num"><a href="#{prefix}-isa-{esc(w.line_number)}">'
                f'#{esc(w.line_number)}</a> <span class="mono">{esc(w.isa)}</span></td>'
                f'<td class="num">{_n(p.median_distance_cycles)}</td>'
                f'<td class="num">{_n(p.median_distance_instructions)}</td>'
                f'<td class="mono" title="{esc(p.source)}">{esc(_base(_s(p.source)))}</td></tr>')
        parts.append('<table class="grid loads"><thead><tr><th class="num">#</th><th>producer</th>'
                     '<th class="num">blamed stall</th><th class="num">share of wait</th>'
                     '<th>waited at</th><th class="num">median distance (cycles)</th>'
                     '<th class="num">(instructions)</th><th>source</th></tr></thead>'
                     f'<tbody>{"".join(rows)}</tbody></table>')
    else:
        parts.append('<p class="note">Wait → producer blame is not in this data.</p>')
    if waits:
        rows = []
        for w in waits[:TOP_WAITS]:
            links = " ".join(_producer_link(prefix, p) for p in w.producers)
            rows.append(f'<tr><td class="num"><a href="#{prefix}-isa-{esc(w.line_number)}">'
                        f'#{esc(w.line_number)}</a></td><td class="isa-text">{esc(w.isa)}</td>'
                        f'<td class="num">{_n(w.stall)}</td><td class="prods">{links}</td></tr>')
        parts.append('<h3>Waits and what they wait for</h3><table class="grid waits"><thead><tr>'
                     '<th class="num">#</th><th>wait</th><th class="num">stall</th><th>producers (share)'
                     f'</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return _section(prefix, "loads", "Top blamed loads", "".join(parts))


def _producer_link(prefix: str, p: Producer) -> str:
    """One producer of a wait: a link to its instruction, or plain text when the wait had nothing
    outstanding (no producer instruction to point at)."""
    if p.line_number is None:
        what = esc(p.isa) if p.isa else "nothing outstanding"
        return f'<span class="note">{what} {_share(p.share)}</span>'
    return (f'<a href="#{prefix}-isa-{esc(p.line_number)}" title="{esc(p.isa)}">'
            f'#{esc(p.line_number)} {_share(p.share)}</a>')


def _timeline(view: ReportDispatch, prefix: str) -> str:
    wt = view.wave_timelines
    waves = wt.waves if wt is not None else []
    if not waves:
        inner = ('<p class="note">Per-wave timelines are not in this data (hotspot report DIR reads '
                 "them from the wave files).</p>") + _state_summary(view.analysis.wave_states)
        return _section(prefix, "timeline", "Wave timeline", inner)
    assert wt is not None
    span = max((w.cycles or 0 for w in waves), default=0) or 1
    scale = TIMELINE_WIDTH / span
    row_h = TIMELINE_ROW + TIMELINE_GAP
    height = row_h * len(waves) + 24
    svg = [f'<svg class="timeline" viewBox="0 0 {TIMELINE_WIDTH} {height}" '
           f'preserveAspectRatio="none" role="img" aria-label="wave state timelines">']
    for k, w in enumerate(waves):
        y = k * row_h + 14
        label = (f"{_s(w.role)}: SE{_s(w.se)} SIMD{_s(w.simd)} slot "
                 f"{_s(w.slot)} wave {_s(w.wave)} · {num(w.cycles)} cycles · "
                 f"{num(w.instructions)} instructions · begins at cycle {num(w.begin)}"
                 + (" · merged to the chart's resolution" if w.downsampled else ""))
        svg.append(f'<text x="0" y="{y - 3}">{esc(label)}</text>')
        rects = []
        for state, start, cycles in w.segments:
            x = TIMELINE_LEFT + start * scale
            rects.append(f'<rect x="{x:.2f}" y="{y}" width="{max(cycles * scale, 0.05):.2f}" '
                         f'height="{TIMELINE_ROW}" fill="{_state_color(_s(state))}">'
                         f"<title>{esc(state)} {num(cycles)} cycles at +{num(start)}</title></rect>")
        svg.append(f'<g class="wave" data-role="{esc(w.role)}">{"".join(rects)}</g>')
    axis_y = row_h * len(waves) + 6
    step = _nice_step(span / TIMELINE_TICKS)
    tick = 0
    while tick <= span:
        x = tick * scale
        anchor = "start" if tick == 0 else ("end" if x > TIMELINE_WIDTH - 30 else "middle")
        svg.append(f'<line x1="{x:.2f}" y1="{axis_y - 4}" x2="{x:.2f}" y2="{axis_y}" stroke="#777"/>'
                   f'<text x="{x:.2f}" y="{axis_y + 11}" text-anchor="{anchor}">{num(tick)}</text>')
        tick += step
    svg.append("</svg>")
    legend = "".join(f"<span>{_swatch(STATE_COLORS[s])}{s}</span>" for s in STATE_ORDER if s != "empty")
    shown = len(waves)
    note = (f'<p class="note">{shown} of {num(wt.waves_total)} traced waves (longest, median, '
            "shortest), each from its own begin; axis in shader cycles. Hover a block for its state "
            "and length.</p>")
    table_rows = []
    for w in waves:
        st = w.states or {}
        total = sum(v for v in st.values() if isinstance(v, (int, float))) or 1
        cells = "".join(f'<td class="num">{pct(100 * (st.get(s) or 0) / total)}</td>'
                        for s in STATE_ORDER if s != "empty")
        table_rows.append(f"<tr><td>{esc(w.role)}</td><td class=\"mono\">{esc(w.file)}</td>"
                          f"<td class=\"num\">{_n(w.cycles)}</td>{cells}</tr>")
    table = ('<table class="grid"><thead><tr><th>wave</th><th>file</th><th class="num">cycles</th>'
             + "".join(f'<th class="num">{s}</th>' for s in STATE_ORDER if s != "empty")
             + f'</tr></thead><tbody>{"".join(table_rows)}</tbody></table>')
    inner = note + "".join(svg) + f'<div class="legend">{legend}</div>' + table
    return _section(prefix, "timeline", "Wave timeline", inner)


def _nice_step(raw: float) -> int:
    """1, 2 or 5 times a power of ten, at least `raw` (axis ticks)."""
    if raw <= 1:
        return 1
    mag: int = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _more(a: DispatchAnalysis, prefix: str) -> str:
    """The secondary analyses, each as a table with named columns."""
    parts = []
    sections: tuple[tuple[str, str, str], ...] = (
        ("lgkm_breakdown", "lgkmcnt breakdown", _lgkm_table(a.lgkm_breakdown)),
        ("loops", "Loops", _loops_table(a.loops or [])),
        ("barriers", "Barriers", _barriers_table(a.barriers or [])),
        ("instruction_mix", "Instruction mix", _mix_table(a.instruction_mix)))
    for key, title, body in sections:
        if body:
            parts.append(f'<h3 data-part="{key}">{esc(title)}</h3><div class="wide">{body}</div>')
    if not parts:
        parts.append('<p class="note">Nothing more in this data.</p>')
    return _section(prefix, "more", "More analysis", "".join(parts))


def _cell(value: Scalar, cls: str = "") -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        cls = (cls + " num").strip()
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{esc(fmt_value(value))}</td>"


def _short_cell(text: str, keep_left: bool = False, width: int = 48) -> str:
    """Long text (a path, an ISA line) shortened to fit its column; the whole string in the tooltip."""
    full = _s(text)
    shown = shorten_left(full, width) if keep_left else shorten_middle(full, width)
    return f'<td class="mono" title="{esc(full)}">{esc(shown)}</td>'


def _table(heads: list[tuple[str, bool]], rows: list[str]) -> str:
    head = "".join(('<th class="num">' if n else "<th>") + f"{esc(h)}</th>" for h, n in heads)
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _share_cell(value: float | None) -> str:
    return f'<td class="num">{_share(value)}</td>'


def _lgkm_table(v: LgkmBreakdown | None) -> str:
    """"" when there is no breakdown (the section is left out)."""
    if v is None:
        return ""
    rows = [f"<tr>{_cell(c.producer_class)}{_cell(c.stall)}{_share_cell(c.share)}"
            f"<td>{_hbar(c.share or 0, _color(c.producer_class, '#888'))}</td></tr>"
            for c in v.classes if c.stall]
    note = (f'<p class="note">{num(v.lgkm_stall or 0)} cycles of lgkmcnt wait stall by what '
            f'the wait waited for; {num(v.no_producer_stall or 0)} with nothing outstanding.</p>')
    return note + _table([("producer", False), ("stall", True), ("share", True), ("", False)], rows)


def _loops_table(loops: list[Loop]) -> str:
    if not loops:
        return ""
    rows = []
    for lp in loops:
        hot = lp.hot_wait
        wait = f"#{hot.line_number} {_s(hot.isa)}" if hot else ""
        rows.append("<tr>" + _short_cell(lp.source_range or
                                         f"#{lp.first_line_number}-#{lp.last_line_number}",
                                         keep_left=True, width=40)
                    + _cell(lp.iterations) + _cell(lp.iterations_per_wave)
                    + _cell(lp.stall) + _share_cell(lp.share)
                    + _short_cell(wait, width=34) + _share_cell(hot.share_of_loop if hot else None)
                    + _short_cell((hot.top_producer_source or hot.top_producer if hot else "") or "",
                                  keep_left=True, width=34)
                    + "</tr>")
    return _table([("loop (source)", False), ("iterations", True), ("per wave", True),
                   ("stall", True), ("of kernel", True), ("hottest wait", False),
                   ("of loop", True), ("its load", False)], rows)


def _barriers_table(barriers: list[BarrierStat]) -> str:
    if not barriers:
        return ""
    rows = [("<tr>" + _cell(f"#{b.line_number}") + _short_cell(b.source, keep_left=True, width=40)
             + _cell(b.instances) + _cell(b.stall) + _cell(b.groups)
             + _cell(b.mean_waves_per_group) + _cell(b.median_spread_cycles)
             + _cell(b.max_spread_cycles) + "</tr>")
            for b in barriers]
    return _table([("barrier", False), ("source", False), ("executions", True), ("stall", True),
                   ("groups", True), ("waves / group", True), ("median spread (cyc)", True),
                   ("max spread (cyc)", True)], rows)


def _mix_table(items: list[MixEntry]) -> str:
    if not items:
        return ""
    total = sum(m.dynamic or 0 for m in items if isinstance(m.dynamic, (int, float)))
    rows = [("<tr>" + _cell(m.category) + _cell(m.static) + _cell(m.executed)
             + _cell(m.dynamic)
             + _share_cell((m.dynamic or 0) / total if total else None) + "</tr>")
            for m in items]
    return _table([("category", False), ("static", True), ("executed", True), ("dynamic", True),
                   ("of dynamic", True)], rows)


def _blamed_lines_table(lines: list[BlamedLine]) -> str:
    """Source lines whose loads the waits wait for: the line (path shortened from the left), its
    blamed stall and share, the load kinds, how many instructions and how far from their waits."""
    rows = []
    for b in lines:
        cats = b.categories or {}
        kinds = ", ".join(str(k) for k, _ in sorted(cats.items(), key=lambda kv: -(kv[1] or 0)))
        ins = b.instructions or []
        rows.append("<tr>" + _short_cell(b.label, keep_left=True, width=44)
                    + _cell(round(b.blamed_stall) if isinstance(b.blamed_stall, float)
                            else b.blamed_stall)
                    + _share_cell(b.share) + _cell(kinds) + _cell(len(ins))
                    + _cell(b.median_distance_cycles) + _cell(b.median_distance_instructions)
                    + "</tr>")
    return ('<div class="wide">' + _table([("load line", False), ("blamed stall", True), ("share", True),
                                           ("kind", False), ("loads", True), ("dist (cyc)", True),
                                           ("dist (instrs)", True)], rows) + "</div>")


# ------------------------------------------------------------------------------------ data blob

def _blob(view: ReportDispatch, prefix: str) -> Iterator[str]:
    """JSON for the script, safe inside <script>: <, > and & become \\u escapes. Written in pieces
    (the rows CHUNK_ROWS at a time): the same text as `script_safe_json` of the whole object
    {"prefix", "rows", "max", "colors", "waits", "src"}, since compact JSON is compositional."""
    a = view.analysis
    rows, _complete = _isa_rows(view)
    mx: list[int] | None = None  # column maxima (the first of equal values, as max() keeps)
    yield script_safe_json({"prefix": prefix})[:-1] + ',"rows":['
    for i in range(0, len(rows), CHUNK_ROWS):
        compact: list[list[Any]] = [[r.line_number, _s(r.isa), _s(r.category), r.hit or 0,
                    r.latency or 0, r.stall or 0, r.idle or 0,
                    _s(r.source)] for r in rows[i:i + CHUNK_ROWS]]
        part = [max(c[k] for c in compact) for k in (3, 4, 5, 6)]
        mx = part if mx is None else [max(m, p) for m, p in zip(mx, part)]
        yield ("," if i else "") + script_safe_json(compact)[1:-1]
    del rows
    if mx is None:
        mx = [0, 0, 0, 0]
    waits: dict[str, list[list[int | float | None]]] = {}
    for w in a.waits or []:
        if w.line_number is not None:
            waits[str(w.line_number)] = [[p.line_number, p.share or 0, p.blamed_stall or 0]
                                         for p in w.producers if p.line_number is not None]
    src: dict[str, int] = {}
    for k, s in enumerate(a.source_lines):
        src.setdefault(_loc(s.file, s.line), k)
    yield "]," + script_safe_json({"max": mx, "colors": CATEGORY_COLORS, "waits": waits,
                                   "src": src})[1:]


def script_safe_json(obj: object) -> str:
    text = orjson.dumps(obj).decode("utf-8")
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
