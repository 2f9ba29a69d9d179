"""Self-contained HTML view of an `analyze` / `report` Result (inline CSS and JS, no network).

Rendered from the plain JSON shape of the data (`Result.plain_data()`, i.e. what `--format json`
prints under `data`), so a saved JSON file renders the same. Every optional section (occupancy,
waits, blamed_lines, plan, listing, wave_timelines, ...) may be absent, None or empty.

Safety: every string from the inputs goes through `esc` (server-rendered parts) or into the embedded
JSON blob, where `<`, `>` and `&` are written as \\u escapes so no input can close the script
element; the script only ever assigns it with textContent. A Content-Security-Policy forbids every
fetch, so the file works offline from file:// and cannot leak data.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

import orjson

from hotspot._version import __version__
from hotspot.render.html_assets import SCRIPT, STYLE
from hotspot.render.tables import num, pct, shorten_left, shorten_middle
from hotspot.result import JsonValue, Result

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


def esc(value: JsonValue) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_html(result: Result) -> str:
    return render_page(result.plain_data(), list(result.warnings))


def render_page(data: JsonValue, warnings: list[str] | None = None) -> str:
    return "".join(page_chunks(data, warnings))


def page_chunks(data: JsonValue, warnings: list[str] | None = None) -> Iterator[str]:
    """The page of `render_page` in consecutive pieces, so that a writer never holds all of it:
    the source table and the data blob grow with the code rows (hotspot/export/report_file.py)."""
    if isinstance(data, dict) and isinstance(data.get("dispatches"), list):
        analyses = [a for a in data["dispatches"] if isinstance(a, dict)]
        ranking = data.get("ranking") or []
    else:
        analyses = [data] if isinstance(data, dict) else []
        ranking = []
    first = _get(analyses[0], "dispatch") if analyses else {}
    kernel = _s(_get(first, "kernel")) or "(no dispatch)"
    from hotspot.render.tables import short_kernel_name

    short = short_kernel_name(kernel)  # the heading; the full name is shown once, below it
    full = (f'<details class="meta" data-part="kernel-full"><summary>full kernel name</summary>'
            f'<span class="mono">{esc(kernel)}</span></details>' if short != kernel else "")
    nav = _nav("d0") if len(analyses) == 1 else ""
    meta = _page_meta(analyses[0]) if analyses else ""
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
    if ranking:
        yield _ranking(ranking)
    for i, a in enumerate(analyses):
        yield from _dispatch(a, f"d{i}", multi=len(analyses) > 1)
    yield ("</main>\n"
           f"<footer>Generated by hotspot {esc(__version__)} from one ATT dispatch. Self-contained: no "
           "network access; every number is on the page and in the embedded data.</footer>\n"
           f"<script>{SCRIPT}</script></body></html>\n")


# ------------------------------------------------------------------------------------------ helpers

def _get(obj: JsonValue, key: str, default: JsonValue = None) -> JsonValue:
    return obj.get(key, default) if isinstance(obj, dict) else default


def _s(value: JsonValue) -> str:
    return "" if value is None else str(value)


def _n(value: JsonValue) -> str:
    return num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else esc(value)


def _share(value: JsonValue) -> str:
    return pct(100 * value) if isinstance(value, (int, float)) else ""


def _color(category: JsonValue) -> str:
    return CATEGORY_COLORS.get(_s(category), UNKNOWN_COLOR)


def _swatch(color: str) -> str:
    return f'<span class="sw" style="background:{color}"></span>'


def _loc(file: JsonValue, line: JsonValue) -> str:
    return f"{_s(file)}:{line if line is not None else '?'}"


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def fmt_value(value: JsonValue) -> str:
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
        return "; ".join(f"{k}: {fmt_value(v)}" for k, v in value.items())
    return str(value)


def _section(prefix: str, name: str, title: str, inner: str, sub: str = "") -> str:
    sub_html = f' <span class="sub">{sub}</span>' if sub else ""
    return (f'<section class="part" id="{prefix}-{name}" data-section="{name}">'
            f"<h2>{esc(title)}{sub_html}</h2>{inner}</section>")


def _hbar(fraction: float, color: str, title: str = "") -> str:
    w = max(0.0, min(1.0, fraction)) * 100
    return (f'<div class="hbar" title="{esc(title)}"><span style="width:{w:.2f}%;'
            f'background:{color}"></span></div>')


def _generic_table(items: list[JsonValue]) -> str:
    """A table for a list of objects whose exact fields are not fixed (newer analysis sections)."""
    dicts = [i for i in items if isinstance(i, dict)]
    if not dicts:
        return "<p>" + esc(fmt_value(items)) + "</p>"
    keys: list[str] = []
    for d in dicts:
        for k in d:
            if k not in keys:
                keys.append(k)
    head = "".join(f"<th>{esc(k)}</th>" for k in keys)
    rows = []
    for d in dicts:
        cells = []
        for k in keys:
            v = d.get(k)
            cls = ' class="num"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            cells.append(f"<td{cls}>{esc(fmt_value(v))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _kv(pairs: list[tuple[str, str]]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


# ------------------------------------------------------------------------------------- page parts

def _page_meta(a: dict) -> str:
    d, arch = _get(a, "dispatch", {}), _get(a, "arch", {})
    bits = [_s(_get(arch, "gfx"))]
    if _get(arch, "product"):
        bits.append(_s(_get(arch, "product")))
    waves = _get(d, "waves")
    bits.append(f"{num(waves) if isinstance(waves, int) else '?'} waves traced")
    bits.append(_s(_get(d, "path")))
    return '<p class="meta">' + " · ".join(esc(b) for b in bits if b) + "</p>"


def _nav(prefix: str) -> str:
    links = [("summary", "Summary"), ("categories", "Stall by category"), ("source", "Source"),
             ("isa", "ISA"), ("loads", "Blamed loads"), ("timeline", "Wave timeline"),
             ("more", "More")]
    return '<nav class="toc">' + "".join(f'<a href="#{prefix}-{k}">{t}</a>' for k, t in links) + "</nav>"


def _ranking(ranking: list[JsonValue]) -> str:
    rows = []
    for i, r in enumerate(ranking):
        rows.append(f"<tr><td class=\"num\">{i + 1}</td><td class=\"mono\">{esc(_get(r, 'path'))}</td>"
                    f"<td>{esc(_get(r, 'kernel'))}</td><td class=\"num\">{_n(_get(r, 'waves'))}</td>"
                    f"<td class=\"num\">{_n(_get(r, 'executed_instructions'))}</td>"
                    f"<td>{esc(_get(r, 'status'))}</td></tr>")
    inner = ('<table class="grid"><thead><tr><th class="num">#</th><th>dir</th><th>kernel</th>'
             '<th class="num">waves</th><th class="num">executed</th><th>status</th></tr></thead>'
             f"<tbody>{''.join(rows)}</tbody></table>")
    return _section("all", "ranking", "Dispatch dirs", inner)


def _dispatch(a: dict, prefix: str, multi: bool) -> Iterator[str]:
    unit = "samples" if _get(a, "mode") == "pc-sampling" else "cycles"
    yield f'<section class="dispatch" id="{prefix}">'
    if multi:
        d = _get(a, "dispatch", {})
        yield (f'<h2 class="dispatch-title">{esc(_get(d, "kernel"))} '
               f'<span class="note mono">{esc(_get(d, "path"))}</span></h2>' + _nav(prefix))
    yield _summary(a, prefix, unit)
    yield _categories(a, prefix, unit)
    yield from _source(a, prefix, unit)
    yield _isa(a, prefix, unit)
    yield _loads(a, prefix)
    yield _timeline(a, prefix)
    yield _more(a, prefix)
    yield '<script type="application/json" class="hotspot-data">'
    yield from _blob(a, prefix)
    yield "</script></section>"


def _summary(a: dict, prefix: str, unit: str) -> str:
    d, arch, t = _get(a, "dispatch", {}), _get(a, "arch", {}), _get(a, "totals", {})
    pairs = [("kernel", esc(_get(d, "kernel")))]
    if _get(d, "symbol") and _get(d, "symbol") != _get(d, "kernel"):
        pairs.append(("symbol", f'<span class="mono">{esc(_get(d, "symbol"))}</span>'))
    arch_text = _s(_get(arch, "gfx")) + (f" ({_get(arch, 'product')})" if _get(arch, "product") else "")
    pairs.append(("arch", esc(arch_text) + f' <span class="note">from {esc(_get(arch, "source"))}</span>'))
    pairs.append(("dispatch dir", f'<span class="mono">{esc(_get(d, "path"))}</span>'))
    pairs.append(("waves traced", _n(_get(d, "waves"))))
    pairs.append(("instructions", f"{_n(_get(d, 'executed_instructions'))} executed of "
                                  f"{_n(_get(d, 'code_rows'))} rows; "
                                  f"{pct(_get(d, 'source_mapped_pct') or 0, 0)} source-mapped"))
    samples = _get(a, "samples")
    if unit == "samples" and isinstance(samples, dict):
        pairs.append(("samples", f"{_n(samples.get('total'))} ({_n(samples.get('issued'))} issued, "
                                 f"{_n(samples.get('stalled'))} stalled)"))
    else:
        lat, stall = _get(t, "latency") or 0, _get(t, "stall") or 0
        pairs.append(("latency (Σ cycles)", _n(lat)))
        pairs.append(("stall", f"{_n(stall)} ({pct(100 * stall / lat if lat else 0)} of latency)"))
        pairs.append(("issue / idle", f"{_n(_get(t, 'issue'))} / {_n(_get(t, 'idle'))}"))
    sel = _get(a, "selection")
    if isinstance(sel, dict) and sel.get("reason"):
        pairs.append(("chosen because", esc(sel["reason"])))
    cards = [f'<div class="card"><h3>Dispatch</h3>{_kv(pairs)}</div>']
    cards.append(f'<div class="card" data-part="occupancy"><h3>Occupancy</h3>{_occupancy(_get(a, "occupancy"))}'
                 f'{_state_summary(_get(a, "wave_states"))}</div>')
    inner = f'<div class="cards">{"".join(cards)}</div>'
    inner += "<h3>Findings</h3>" + _findings(_get(a, "findings"))
    inner += "<h3>Plan</h3>" + _plan(_get(a, "plan"))
    return _section(prefix, "summary", "Summary", inner)


def _occupancy(occ: JsonValue) -> str:
    if not isinstance(occ, dict) or not occ:
        return '<p class="note">Occupancy is not in this data (needs the occupancy analysis).</p>'
    theo = occ.get("waves_per_simd")
    achieved = occ.get("achieved") if isinstance(occ.get("achieved"), dict) else {}
    mean, peak = achieved.get("mean_waves_per_simd"), achieved.get("peak_waves_per_simd")
    scale = max([v for v in (theo, mean, peak) if isinstance(v, (int, float))] or [1]) or 1
    rows = []
    if isinstance(theo, (int, float)):
        rows.append(("theoretical", theo, f"limited by {_s(occ.get('limiter'))}"))
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
        out.append(f"<p>{esc(fmt_value(occ))}</p>")
    limits = occ.get("limits")
    if isinstance(limits, dict) and limits:
        out.append('<p class="note">waves/SIMD allowed by each resource: '
                   + esc(fmt_value(limits)) + "</p>")
    resources = occ.get("resources")
    if isinstance(resources, dict) and resources:
        out.append('<p class="note">resources: ' + esc(fmt_value(resources)) + "</p>")
    steps = occ.get("next_step")
    if isinstance(steps, dict):
        for name, step in steps.items():
            msg = step.get("message") if isinstance(step, dict) else step
            if msg:
                out.append(f'<p class="hint">next step ({esc(name)}): {esc(fmt_value(msg))}</p>')
    return "".join(out)


def _state_summary(ws: JsonValue) -> str:
    states = _get(ws, "states")
    if not isinstance(states, dict):
        return ""
    total = sum(v for v in states.values() if isinstance(v, (int, float))) or 0
    if not total:
        return ""
    spans, legend = [], []
    for name in [s for s in STATE_ORDER if s in states] + [s for s in states if s not in STATE_ORDER]:
        v = states.get(name)
        if not isinstance(v, (int, float)) or v <= 0:
            continue
        color = STATE_COLORS.get(name, UNKNOWN_COLOR)
        spans.append(f'<span style="width:{100 * v / total:.3f}%;background:{color}" '
                     f'title="{esc(name)} {num(v)} cycles"></span>')
        legend.append(f"<span>{_swatch(color)}{esc(name)} {pct(100 * v / total)}</span>")
    return (f'<h3>Wave states <span class="note">({_n(_get(ws, "waves_read"))} waves, '
            f'{_n(total)} cycles)</span></h3><div class="stack">{"".join(spans)}</div>'
            f'<div class="legend">{"".join(legend)}</div>')


def _findings(findings: JsonValue) -> str:
    if not findings:
        return '<p class="note">No findings.</p>'
    items = []
    for f in findings if isinstance(findings, list) else [findings]:
        if not isinstance(f, dict):
            items.append(f"<li>{esc(fmt_value(f))}</li>")
            continue
        sev = _s(f.get("severity")) or "info"
        hint = f'<div class="hint">next: {esc(f.get("hint"))}</div>' if f.get("hint") else ""
        items.append(f'<li><span class="sev {esc(sev)}">{esc(sev)}</span><b>{esc(f.get("id"))}</b>: '
                     f"{esc(f.get('message'))}{hint}</li>")
    return f'<ul class="findings">{"".join(items)}</ul>'


def _plan(plan: JsonValue) -> str:
    if not plan:
        return '<p class="note">No optimization plan in this data.</p>'
    items = []
    for p in plan if isinstance(plan, list) else [plan]:
        if not isinstance(p, dict):
            items.append(f"<li>{esc(fmt_value(p))}</li>")
            continue
        est = p.get("estimate")
        est_text = ""
        if isinstance(est, dict) and (est.get("low_pct") is not None or est.get("high_pct") is not None):
            est_text = (f" · estimated gain {esc(fmt_value(est.get('low_pct')))}–"
                        f"{esc(fmt_value(est.get('high_pct')))}%")
            if est.get("basis"):
                est_text += f' <span class="note">({esc(fmt_value(est.get("basis")))})</span>'
        prio = f'<span class="sev info">{esc(fmt_value(p.get("priority")))}</span>' \
            if p.get("priority") is not None else ""
        loc = f' <span class="mono">{esc(_plan_location(p.get("location")))}</span>' if p.get("location") else ""
        ev = f'<div class="note">evidence: {esc(_plan_evidence(p.get("evidence")))}</div>' if p.get("evidence") else ""
        cause = f'<div class="note">why: {esc(fmt_value(p.get("root_cause")))}</div>' if p.get("root_cause") else ""
        fix = f'<div class="hint">fix: {esc(fmt_value(p.get("fix")))}</div>' if p.get("fix") else ""
        items.append(f"<li>{prio}<b>{esc(p.get('title') or p.get('id'))}</b>{loc}{est_text}{ev}{cause}{fix}</li>")
    return f'<ol class="plan">{"".join(items)}</ol>'


def _plan_location(loc: JsonValue) -> str:
    """`file:line` and the instruction (`#ordinal isa`) of a plan item, when present."""
    if not isinstance(loc, dict):
        return fmt_value(loc)
    parts = []
    if loc.get("file"):
        parts.append(f"{loc['file']}:{loc.get('line') if loc.get('line') is not None else '?'}")
    if loc.get("line_number") is not None:
        parts.append(f"#{loc['line_number']} {loc.get('isa') or ''}".rstrip())
    return " ".join(parts) or fmt_value(loc)


def _plan_evidence(evidence: JsonValue) -> str:
    """`metric = value (threshold: cmp limit)` per evidence entry."""
    if not isinstance(evidence, list):
        return fmt_value(evidence)
    out = []
    for e in evidence:
        if not isinstance(e, dict):
            out.append(fmt_value(e))
            continue
        text = f"{e.get('metric')} = {fmt_value(e.get('value'))}"
        if e.get("threshold") is not None:
            text += f" (threshold {e.get('comparison') or ''} {fmt_value(e.get('threshold'))})"
        out.append(text)
    return "; ".join(out)


def _categories(a: dict, prefix: str, unit: str) -> str:
    cats = [c for c in (_get(a, "stall_by_category") or []) if isinstance(c, dict)
            and (c.get("stall") or c.get("latency"))]
    if not cats:
        return _section(prefix, "categories", "Stall by category", '<p class="note">No stall.</p>')
    rows = []
    for c in cats:
        color = _color(c.get("category"))
        share = c.get("share") or 0.0
        rows.append(f"<tr><td>{_swatch(color)}{esc(c.get('category'))}</td>"
                    f'<td class="barcol">{_hbar(share, color, _share(share))}</td>'
                    f'<td class="num">{_n(c.get("stall"))}</td><td class="num">{_share(share)}</td>'
                    f'<td class="num">{_n(c.get("hit"))}</td><td class="num">{_n(c.get("instructions"))}</td></tr>')
    inner = (f'<table class="cats grid"><thead><tr><th>category</th><th>share of stall</th>'
             f'<th class="num">stall ({unit})</th><th class="num">share</th><th class="num">hits</th>'
             f'<th class="num">instructions</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return _section(prefix, "categories", "Stall by category", inner,
                    "summed over waves; waits and barriers count every waiting wave")


def _instruction_index(a: dict) -> dict[int, dict]:
    """line_number -> instruction (from the full listing when present, else `instructions`)."""
    out: dict[int, dict] = {}
    for src in (_get(a, "instructions") or [], _get(a, "listing") or []):
        for i in src:
            if isinstance(i, dict) and isinstance(i.get("line_number"), int):
                out[i["line_number"]] = i
    return out


def _source(a: dict, prefix: str, unit: str) -> Iterator[str]:
    lines = [s for s in (_get(a, "source_lines") or []) if isinstance(s, dict)]
    if not lines:
        yield _section(prefix, "source", "Source lines",
                       '<p class="note">No source locations in this trace (the code carried no line '
                       "tables); the ISA view below is the reliable one.</p>")
        return
    by_line = _instruction_index(a)
    details = {(d.get("file"), d.get("line")): d for d in (_get(a, "detail") or []) if isinstance(d, dict)}
    max_stall = max((s.get("stall") or 0 for s in lines), default=0) or 1
    files = _files(_get(a, "files"))
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
        loc = _loc(s.get("file"), s.get("line"))
        color = _color(s.get("dominant_category"))
        insts = s.get("instructions") or []
        rows.append(
            f'<tr class="src-row" id="{prefix}-src-{k}" tabindex="0" aria-expanded="false" '
            f'data-instructions="{len(insts)}">'
            f'<td style="width:18%">{_hbar((s.get("stall") or 0) / max_stall, color, _share(s.get("share")))}</td>'
            f'<td class="loc mono" title="{esc(loc)}">{esc(_base(_s(s.get("file"))))}:'
            f'{esc(s.get("line") if s.get("line") is not None else "?")}</td>'
            f'<td class="num">{_n(s.get("stall"))}</td><td class="num">{_share(s.get("share"))}</td>'
            f'<td class="num">{_share(s.get("stall_rate"))}</td>'
            f'<td>{_swatch(color)}{esc(s.get("dominant_category"))}</td>'
            f'<td class="num">{len(insts)}</td></tr>')
        detail = details.get((s.get("file"), s.get("line")))
        rows.append(f'<tr class="src-detail" hidden><td colspan="7">'
                    f'{_source_detail(s, by_line, prefix, detail)}</td></tr>')
        size += len(rows[-2]) + len(rows[-1])
        if size >= CHUNK_CHARS:
            yield "".join(rows)
            rows, size = [], 0
    yield "".join(rows) + "</tbody></table>" + tail


def _sources_found(details: list[dict]) -> str:
    """Where the source text came from, per file: the capture's snapshot, a local checkout named
    by --source-map, or nowhere (with the option that fixes it)."""
    if not details:
        return ""
    where: dict[str, tuple[str, str]] = {}
    for d in details:
        f = _s(d.get("file"))
        if f and (f not in where or d.get("source_found")):
            where[f] = (_s(d.get("source_found")), _s(d.get("source_path")))
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


def _snippet(detail: dict | None) -> str:
    if not detail:
        return ""
    snippet = [x for x in (detail.get("snippet") or []) if isinstance(x, dict)]
    if not snippet:
        return ('<div class="note">source not available: no snapshot in the capture; pass '
                "--source-map OLD=NEW to read it from a local checkout</div>")
    how = detail.get("source_found")
    origin = ("from the capture's snapshot" if how == "snapshot" else
              f"from {_s(detail.get('source_path'))} (--source-map)")
    lines = "".join(f'<span class="{"hot" if x.get("hot") else "ctx"}">{esc(x.get("line"))!s:>6} | '
                    f'{esc(x.get("text"))}</span>\n' for x in snippet)
    return f'<div class="note">{esc(origin)}</div><pre class="snippet">{lines}</pre>'


def _source_detail(s: dict, by_line: dict[int, dict], prefix: str, detail: dict | None = None) -> str:
    full = _loc(s.get("file"), s.get("line"))
    head = f'<div class="mono note">{esc(full)}</div>'
    chains = s.get("chains") or []
    if chains:
        head += "".join(f'<div class="mono note">inlined: {esc(c)}</div>' for c in chains)
    head += _snippet(detail)
    rows = []
    for n in s.get("instructions") or []:
        i = by_line.get(n, {})
        color = _color(i.get("category"))
        rows.append(f'<tr><td class="num"><a href="#{prefix}-isa-{esc(n)}">#{esc(n)}</a></td>'
                    f'<td class="isa-text">{_swatch(color)}{esc(i.get("isa", ""))}</td>'
                    f'<td>{esc(i.get("category", ""))}</td><td class="num">{_n(i.get("hit"))}</td>'
                    f'<td class="num">{_n(i.get("stall"))}</td><td class="num">{_n(i.get("latency"))}</td></tr>')
    return (head + '<table class="insts"><thead><tr><th class="num">#</th><th>instruction</th>'
            '<th>category</th><th class="num">hits</th><th class="num">stall</th>'
            f'<th class="num">latency</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _files(files: JsonValue) -> str:
    files = [f for f in (files or []) if isinstance(f, dict)]
    if len(files) < 2:
        return ""
    rows = "".join(f'<tr><td class="mono">{esc(f.get("file"))}</td><td class="num">{_n(f.get("stall"))}</td>'
                   f'<td class="num">{_share(f.get("share"))}</td><td class="num">{_n(f.get("lines"))}</td></tr>'
                   for f in files)
    return ('<table class="grid files"><thead><tr><th>file</th><th class="num">stall</th>'
            f'<th class="num">share</th><th class="num">lines</th></tr></thead><tbody>{rows}</tbody></table>')


def _isa_rows(a: dict) -> tuple[list[dict], bool]:
    """The rows of the ISA view in program order, and whether they are the full listing."""
    listing = _get(a, "listing")
    if isinstance(listing, list) and listing:
        return [r for r in listing if isinstance(r, dict)], True
    insts = [i for i in (_get(a, "instructions") or []) if isinstance(i, dict)]
    return sorted(insts, key=lambda i: i.get("line_number") or 0), False


def _isa(a: dict, prefix: str, unit: str) -> str:
    rows, complete = _isa_rows(a)
    executed = sum(1 for r in rows if r.get("hit"))
    if complete:
        sub = f"{num(len(rows))} rows, {num(executed)} executed"
    else:
        sub = (f"{num(len(rows))} executed instructions (the full listing, with never-executed rows, "
               "is in hotspot report)")
    waits = _get(a, "waits")
    wait_note = ("Click a row: an <code>s_waitcnt</code> shows arrows from the loads it waits for "
                 "(share of its stall); a load shows arrows to its waits." if waits else
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


def _loads(a: dict, prefix: str) -> str:
    blamed = _get(a, "blamed_lines")
    waits = [w for w in (_get(a, "waits") or []) if isinstance(w, dict)]
    parts = []
    if isinstance(blamed, list) and blamed:
        parts.append(_blamed_lines_table(blamed) or _generic_table(blamed))
    elif waits:
        prods = []
        for w in waits:
            for p in w.get("producers") or []:
                if isinstance(p, dict):
                    prods.append((w, p))
        prods.sort(key=lambda wp: (-(wp[1].get("blamed_stall") or 0), wp[1].get("line_number") or 0,
                                   wp[0].get("line_number") or 0))
        rows = []
        for w, p in prods[:TOP_PRODUCERS]:
            first = (f'<a href="#{prefix}-isa-{esc(p.get("line_number"))}">#{esc(p.get("line_number"))}</a>'
                     if p.get("line_number") is not None else "")
            rows.append(
                f'<tr><td class="num">{first}</td><td class="isa-text">'
                f'{_swatch(_color(p.get("category")))}{esc(p.get("isa"))}</td>'
                f'<td class="num">{_n(p.get("blamed_stall"))}</td><td class="num">{_share(p.get("share"))}</td>'
                f'<td class="num"><a href="#{prefix}-isa-{esc(w.get("line_number"))}">'
                f'#{esc(w.get("line_number"))}</a> <span class="mono">{esc(w.get("isa"))}</span></td>'
                f'<td class="num">{_n(p.get("median_distance_cycles"))}</td>'
                f'<td class="num">{_n(p.get("median_distance_instructions"))}</td>'
                f'<td class="mono" title="{esc(p.get("source"))}">{esc(_base(_s(p.get("source"))))}</td></tr>')
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
            links = " ".join(_producer_link(prefix, p)
                             for p in (w.get("producers") or []) if isinstance(p, dict))
            rows.append(f'<tr><td class="num"><a href="#{prefix}-isa-{esc(w.get("line_number"))}">'
                        f'#{esc(w.get("line_number"))}</a></td><td class="isa-text">{esc(w.get("isa"))}</td>'
                        f'<td class="num">{_n(w.get("stall"))}</td><td class="prods">{links}</td></tr>')
        parts.append('<h3>Waits and what they wait for</h3><table class="grid waits"><thead><tr>'
                     '<th class="num">#</th><th>wait</th><th class="num">stall</th><th>producers (share)'
                     f'</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return _section(prefix, "loads", "Top blamed loads", "".join(parts))


def _producer_link(prefix: str, p: dict) -> str:
    """One producer of a wait: a link to its instruction, or plain text when the wait had nothing
    outstanding (no producer instruction to point at)."""
    if p.get("line_number") is None:
        what = esc(p.get("isa")) if p.get("isa") else "nothing outstanding"
        return f'<span class="note">{what} {_share(p.get("share"))}</span>'
    return (f'<a href="#{prefix}-isa-{esc(p.get("line_number"))}" title="{esc(p.get("isa"))}">'
            f'#{esc(p.get("line_number"))} {_share(p.get("share"))}</a>')


def _timeline(a: dict, prefix: str) -> str:
    wt = _get(a, "wave_timelines")
    waves = [w for w in (_get(wt, "waves") or []) if isinstance(w, dict)]
    if not waves:
        inner = ('<p class="note">Per-wave timelines are not in this data (hotspot report DIR reads '
                 "them from the wave files).</p>") + _state_summary(_get(a, "wave_states"))
        return _section(prefix, "timeline", "Wave timeline", inner)
    span = max((w.get("cycles") or 0 for w in waves), default=0) or 1
    scale = TIMELINE_WIDTH / span
    row_h = TIMELINE_ROW + TIMELINE_GAP
    height = row_h * len(waves) + 24
    svg = [f'<svg class="timeline" viewBox="0 0 {TIMELINE_WIDTH} {height}" '
           f'preserveAspectRatio="none" role="img" aria-label="wave state timelines">']
    for k, w in enumerate(waves):
        y = k * row_h + 14
        label = (f"{_s(w.get('role'))}: SE{_s(w.get('se'))} SIMD{_s(w.get('simd'))} slot "
                 f"{_s(w.get('slot'))} wave {_s(w.get('wave'))} · {num(w.get('cycles'))} cycles · "
                 f"{num(w.get('instructions'))} instructions · begins at cycle {num(w.get('begin'))}"
                 + (" · merged to the chart's resolution" if w.get("downsampled") else ""))
        svg.append(f'<text x="0" y="{y - 3}">{esc(label)}</text>')
        rects = []
        for seg in w.get("segments") or []:
            if not isinstance(seg, list) or len(seg) < 3:
                continue
            state, start, cycles = seg[0], seg[1], seg[2]
            x = TIMELINE_LEFT + start * scale
            rects.append(f'<rect x="{x:.2f}" y="{y}" width="{max(cycles * scale, 0.05):.2f}" '
                         f'height="{TIMELINE_ROW}" fill="{STATE_COLORS.get(_s(state), UNKNOWN_COLOR)}">'
                         f"<title>{esc(state)} {num(cycles)} cycles at +{num(start)}</title></rect>")
        svg.append(f'<g class="wave" data-role="{esc(w.get("role"))}">{"".join(rects)}</g>')
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
    note = (f'<p class="note">{shown} of {num(_get(wt, "waves_total"))} traced waves (longest, median, '
            "shortest), each from its own begin; axis in shader cycles. Hover a block for its state "
            "and length.</p>")
    table_rows = []
    for w in waves:
        st = w.get("states") or {}
        total = sum(v for v in st.values() if isinstance(v, (int, float))) or 1
        cells = "".join(f'<td class="num">{pct(100 * (st.get(s) or 0) / total)}</td>'
                        for s in STATE_ORDER if s != "empty")
        table_rows.append(f"<tr><td>{esc(w.get('role'))}</td><td class=\"mono\">{esc(w.get('file'))}</td>"
                          f"<td class=\"num\">{_n(w.get('cycles'))}</td>{cells}</tr>")
    table = ('<table class="grid"><thead><tr><th>wave</th><th>file</th><th class="num">cycles</th>'
             + "".join(f'<th class="num">{s}</th>' for s in STATE_ORDER if s != "empty")
             + f'</tr></thead><tbody>{"".join(table_rows)}</tbody></table>')
    inner = note + "".join(svg) + f'<div class="legend">{legend}</div>' + table
    return _section(prefix, "timeline", "Wave timeline", inner)


def _nice_step(raw: float) -> int:
    """1, 2 or 5 times a power of ten, at least `raw` (axis ticks)."""
    if raw <= 1:
        return 1
    mag = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _more(a: dict, prefix: str) -> str:
    """The secondary analyses, each as a table with named columns (a section whose shape this page
    does not know falls back to a generic table)."""
    parts = []
    for key, title in (("lgkm_breakdown", "lgkmcnt breakdown"), ("loops", "Loops"),
                       ("barriers", "Barriers"), ("instruction_mix", "Instruction mix")):
        v = _get(a, key)
        if not v:
            continue
        known = _MORE_TABLES.get(key)
        body = known(v) if known is not None else None
        if body is None:
            body = _generic_table(v) if isinstance(v, list) else f"<p>{esc(fmt_value(v))}</p>"
        parts.append(f'<h3 data-part="{key}">{esc(title)}</h3><div class="wide">{body}</div>')
    if not parts:
        parts.append('<p class="note">Nothing more in this data.</p>')
    return _section(prefix, "more", "More analysis", "".join(parts))


def _cell(value: JsonValue, cls: str = "") -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        cls = (cls + " num").strip()
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{esc(fmt_value(value))}</td>"


def _short_cell(text: JsonValue, keep_left: bool = False, width: int = 48) -> str:
    """Long text (a path, an ISA line) shortened to fit its column; the whole string in the tooltip."""
    full = _s(text)
    shown = shorten_left(full, width) if keep_left else shorten_middle(full, width)
    return f'<td class="mono" title="{esc(full)}">{esc(shown)}</td>'


def _table(heads: list[tuple[str, bool]], rows: list[str]) -> str:
    head = "".join(('<th class="num">' if n else "<th>") + f"{esc(h)}</th>" for h, n in heads)
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _share_cell(value: JsonValue) -> str:
    return f'<td class="num">{_share(value)}</td>'


def _lgkm_table(v: JsonValue) -> str | None:
    if not isinstance(v, dict) or not isinstance(v.get("classes"), list):
        return None
    rows = [f"<tr>{_cell(c.get('producer_class'))}{_cell(c.get('stall'))}{_share_cell(c.get('share'))}"
            f"<td>{_hbar(c.get('share') or 0, CATEGORY_COLORS.get(_s(c.get('producer_class')), '#888'))}</td></tr>"
            for c in v["classes"] if isinstance(c, dict) and c.get("stall")]
    note = (f'<p class="note">{num(v.get("lgkm_stall") or 0)} cycles of lgkmcnt wait stall by what '
            f'the wait waited for; {num(v.get("no_producer_stall") or 0)} with nothing outstanding.</p>')
    return note + _table([("producer", False), ("stall", True), ("share", True), ("", False)], rows)


def _objects(v: JsonValue, key: str) -> list[dict] | None:
    """The objects of a list whose objects carry `key` (the shape a dedicated table is for), else
    None (the generic table takes it)."""
    if not isinstance(v, list) or not any(isinstance(x, dict) and key in x for x in v):
        return None
    return [x for x in v if isinstance(x, dict)]


def _loops_table(v: JsonValue) -> str | None:
    loops = _objects(v, "iterations")
    if loops is None:
        return None
    rows = []
    for lp in loops:
        hot = lp.get("hot_wait") if isinstance(lp.get("hot_wait"), dict) else {}
        wait = f"#{hot.get('line_number')} {_s(hot.get('isa'))}" if hot else ""
        rows.append("<tr>" + _short_cell(lp.get("source_range") or
                                         f"#{lp.get('first_line_number')}-#{lp.get('last_line_number')}",
                                         keep_left=True, width=40)
                    + _cell(lp.get("iterations")) + _cell(lp.get("iterations_per_wave"))
                    + _cell(lp.get("stall")) + _share_cell(lp.get("share"))
                    + _short_cell(wait, width=34) + _share_cell(hot.get("share_of_loop"))
                    + _short_cell(hot.get("top_producer_source") or hot.get("top_producer") or "",
                                  keep_left=True, width=34)
                    + "</tr>")
    return _table([("loop (source)", False), ("iterations", True), ("per wave", True),
                   ("stall", True), ("of kernel", True), ("hottest wait", False),
                   ("of loop", True), ("its load", False)], rows)


def _barriers_table(v: JsonValue) -> str | None:
    barriers = _objects(v, "instances")
    if barriers is None:
        return None
    rows = [("<tr>" + _cell(f"#{b.get('line_number')}") + _short_cell(b.get("source"), keep_left=True,
                                                                     width=40)
             + _cell(b.get("instances")) + _cell(b.get("stall")) + _cell(b.get("groups"))
             + _cell(b.get("mean_waves_per_group")) + _cell(b.get("median_spread_cycles"))
             + _cell(b.get("max_spread_cycles")) + "</tr>")
            for b in barriers]
    return _table([("barrier", False), ("source", False), ("executions", True), ("stall", True),
                   ("groups", True), ("waves / group", True), ("median spread (cyc)", True),
                   ("max spread (cyc)", True)], rows)


def _mix_table(v: JsonValue) -> str | None:
    items = _objects(v, "dynamic")
    if items is None:
        return None
    total = sum(m.get("dynamic") or 0 for m in items if isinstance(m.get("dynamic"), (int, float)))
    rows = [("<tr>" + _cell(m.get("category")) + _cell(m.get("static")) + _cell(m.get("executed"))
             + _cell(m.get("dynamic"))
             + _share_cell((m.get("dynamic") or 0) / total if total else None) + "</tr>")
            for m in items]
    return _table([("category", False), ("static", True), ("executed", True), ("dynamic", True),
                   ("of dynamic", True)], rows)


def _blamed_lines_table(v: JsonValue) -> str | None:
    """Source lines whose loads the waits wait for: the line (path shortened from the left), its
    blamed stall and share, the load kinds, how many instructions and how far from their waits."""
    lines = _objects(v, "blamed_stall")
    if lines is None:
        return None
    rows = []
    for b in lines:
        cats = b.get("categories") if isinstance(b.get("categories"), dict) else {}
        kinds = ", ".join(str(k) for k, _ in sorted(cats.items(), key=lambda kv: -(kv[1] or 0)))
        ins = b.get("instructions") if isinstance(b.get("instructions"), list) else []
        rows.append("<tr>" + _short_cell(b.get("label"), keep_left=True, width=44)
                    + _cell(round(b["blamed_stall"]) if isinstance(b.get("blamed_stall"), float)
                            else b.get("blamed_stall"))
                    + _share_cell(b.get("share")) + _cell(kinds) + _cell(len(ins))
                    + _cell(b.get("median_distance_cycles")) + _cell(b.get("median_distance_instructions"))
                    + "</tr>")
    return ('<div class="wide">' + _table([("load line", False), ("blamed stall", True), ("share", True),
                                           ("kind", False), ("loads", True), ("dist (cyc)", True),
                                           ("dist (instrs)", True)], rows) + "</div>")


_MORE_TABLES = {"lgkm_breakdown": _lgkm_table, "loops": _loops_table, "barriers": _barriers_table,
                "instruction_mix": _mix_table}


# ------------------------------------------------------------------------------------ data blob

def _blob(a: dict, prefix: str) -> Iterator[str]:
    """JSON for the script, safe inside <script>: <, > and & become \\u escapes. Written in pieces
    (the rows CHUNK_ROWS at a time): the same text as `script_safe_json` of the whole object
    {"prefix", "rows", "max", "colors", "waits", "src"}, since compact JSON is compositional."""
    rows, _complete = _isa_rows(a)
    mx: list[JsonValue] | None = None  # column maxima (the first of equal values, as max() keeps)
    yield script_safe_json({"prefix": prefix})[:-1] + ',"rows":['
    for i in range(0, len(rows), CHUNK_ROWS):
        compact = [[r.get("line_number"), _s(r.get("isa")), _s(r.get("category")), r.get("hit") or 0,
                    r.get("latency") or 0, r.get("stall") or 0, r.get("idle") or 0,
                    _s(r.get("source"))] for r in rows[i:i + CHUNK_ROWS]]
        part = [max(c[k] for c in compact) for k in (3, 4, 5, 6)]
        mx = part if mx is None else [max(m, p) for m, p in zip(mx, part)]
        yield ("," if i else "") + script_safe_json(compact)[1:-1]
    del rows
    if mx is None:
        mx = [0, 0, 0, 0]
    waits: dict[str, list[list[JsonValue]]] = {}
    for w in _get(a, "waits") or []:
        if isinstance(w, dict) and w.get("line_number") is not None:
            waits[str(w["line_number"])] = [
                [p.get("line_number"), p.get("share") or 0, p.get("blamed_stall") or 0]
                for p in (w.get("producers") or [])
                if isinstance(p, dict) and p.get("line_number") is not None]
    src = {}
    for k, s in enumerate(_get(a, "source_lines") or []):
        if isinstance(s, dict):
            src.setdefault(_loc(s.get("file"), s.get("line")), k)
    yield "]," + script_safe_json({"max": mx, "colors": CATEGORY_COLORS, "waits": waits,
                                   "src": src})[1:]


def script_safe_json(obj: JsonValue) -> str:
    text = orjson.dumps(obj).decode("utf-8")
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
