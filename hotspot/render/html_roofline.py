"""The report's roofline picture: an inline SVG (log-log: FLOP per byte against FLOP/s) of the
ceilings and the kernel's point computed by hotspot/att/kernel_roofline.py, with a caption that
says what the point is and where each ceiling comes from (docs/report.md). Light background,
labelled axes, ceiling labels kept apart: readable at 1280 px and in print."""

from __future__ import annotations

import math
from html import escape

from hotspot.att.kernel_roofline import GRID, Ceiling, CeilingKind, Roofline
from hotspot.kernel_names import short_kernel_name

WIDTH, HEIGHT = 860, 430          # SVG user units; the picture scales to the column
LEFT, RIGHT, TOP, BOTTOM = 84, 210, 18, 58
LABEL_GAP = 14                    # least vertical distance between two ceiling labels
DECADES_AROUND = 1                # free decades beyond the outermost ridge / point
POINT_R = 6
COLORS = {"MFMA": "#2f5fb3", "VALU": "#7d3c98", "HBM": "#b9770e"}
POINT_COLOR = "#c0392b"
COUNTER_COLOR = "#117a65"         # the counters' point (report --pmc): a square, not the trace's circle
GRID_COLOR = "#e3e6ea"
AXIS_COLOR = "#5d6470"
# a white outline under labels drawn over lines (the point's, the memory roof's): legible in print
HALO = 'paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'
SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def si(value: float, unit: str) -> str:
    """`9.01 TFLOP/s`, `31.3 GB/s`: three significant digits and an SI prefix."""
    for scale, prefix in SI:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _tick(value: float) -> str:
    if value >= 1:
        return si(value, "").strip()
    return f"{value:g}"


def _color(c: Ceiling) -> str:
    return COLORS[c.name.split(" ", 1)[0]]  # every ceiling is named for its unit: MFMA, VALU or HBM


def _spread(wanted: list[float], low: float, high: float) -> list[float]:
    """Label positions as near `wanted` (sorted ascending) as they can be, LABEL_GAP apart, in
    [low, high]."""
    out: list[float] = []
    for y in wanted:
        out.append(max(y, out[-1] + LABEL_GAP) if out else max(y, low))
    over = out[-1] - high if out else 0.0
    if over > 0:  # push the stack back up from the bottom
        out = [y - over for y in out]
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1] - LABEL_GAP)
    return out


def figure(r: Roofline) -> str:
    """The section's body: the picture and its caption, or what is missing instead of it."""
    if not r.available:
        return f'<p class="note roofline-missing">No roofline: {escape(r.reason)}.</p>'
    return f'<figure class="roofline">{svg(r)}<figcaption>{caption(r)}</figcaption></figure>'


def svg(r: Roofline) -> str:
    compute = sorted((c for c in r.ceilings if c.kind == CeilingKind.COMPUTE), key=lambda c: c.value)
    memory = [c for c in r.ceilings if c.kind == CeilingKind.MEMORY]
    ridges = [c.value / m.value for c in compute for m in memory]
    pmc = r.counters if r.counters is not None and r.counters.available else None
    xs = [r.intensity, *ridges, *([pmc.intensity, pmc.intensity_high] if pmc else [])]
    ys = [r.flops_per_s, *(c.value for c in compute), *([pmc.flops_per_s] if pmc else [])]
    lx0 = math.floor(math.log10(min(xs))) - DECADES_AROUND
    lx1 = math.ceil(math.log10(max(xs))) + DECADES_AROUND
    ly1 = math.ceil(math.log10(max(ys) * 1.5))
    ly0 = math.floor(math.log10(min(ys))) - DECADES_AROUND
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM

    def X(v: float) -> float:
        return x0 + (math.log10(v) - lx0) / (lx1 - lx0) * (x1 - x0)

    def Y(v: float) -> float:
        return y1 - (math.log10(v) - ly0) / (ly1 - ly0) * (y1 - y0)

    scope = "whole grid" if r.scope == GRID else "one CU"
    parts = [f'<svg class="roofline" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="roofline ({scope})" data-scope="{escape(r.scope)}" '
             f'data-plot="{x0} {y0} {x1} {y1}" xmlns="http://www.w3.org/2000/svg" '
             'font-family="system-ui,sans-serif" font-size="12">',
             f'<path d="M0 0H{WIDTH}V{HEIGHT}H0Z" fill="#fff"/>']
    for d in range(lx0, lx1 + 1):
        x = X(10.0 ** d)
        parts.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="{GRID_COLOR}"/>'
                     f'<text x="{x:.1f}" y="{y1 + 20}" text-anchor="middle" fill="{AXIS_COLOR}">'
                     f'{_tick(10.0 ** d)}</text>')
    for d in range(ly0, ly1 + 1):
        y = Y(10.0 ** d)
        parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="{GRID_COLOR}"/>'
                     f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{AXIS_COLOR}">'
                     f'{_tick(10.0 ** d)}</text>')
    parts.append(f'<path class="plot-area" d="M{x0} {y0}H{x1}V{y1}H{x0}Z" fill="none" stroke="{AXIS_COLOR}"/>')
    parts.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{HEIGHT - 14}" text-anchor="middle" fill="#1d1f23">'
                 "arithmetic intensity (FLOP per byte requested by VMEM loads and stores)</text>")
    parts.append(f'<text transform="translate(18 {(y0 + y1) / 2:.0f}) rotate(-90)" text-anchor="middle" '
                 f'fill="#1d1f23">FLOP/s ({scope})</text>')
    top = compute[-1].value if compute else max(ys)
    labels: list[tuple[float, str, str]] = []  # (wanted y, text, color)
    for m in memory:
        # the memory roof rises until the highest compute ceiling; below the plot it is clipped
        xa = max(10.0 ** lx0, 10.0 ** ly0 / m.value)
        xb = min(10.0 ** lx1, top / m.value)
        parts.append(f'<line class="ceiling" data-kind="memory" data-name="{escape(m.name)}" '
                     f'data-value="{m.value:.6g}" x1="{X(xa):.1f}" y1="{Y(m.value * xa):.1f}" '
                     f'x2="{X(xb):.1f}" y2="{Y(m.value * xb):.1f}" stroke="{_color(m)}" stroke-width="2.5"/>')
        # its label along the line, near the lower end
        t = 0.12
        lx = X(xa) + t * (X(xb) - X(xa))
        ly = Y(m.value * xa) + t * (Y(m.value * xb) - Y(m.value * xa))
        angle = math.degrees(math.atan2(Y(m.value * xb) - Y(m.value * xa), X(xb) - X(xa)))
        parts.append(f'<text class="ceiling-label" transform="translate({lx:.1f} {ly - 7:.1f}) '
                     f'rotate({angle:.1f})" fill="{_color(m)}" {HALO}>{escape(m.name)} {si(m.value, "B/s")}</text>')
    for c in compute:
        ridge = max((c.value / m.value for m in memory), default=10.0 ** lx0)
        y = Y(c.value)
        parts.append(f'<line class="ceiling" data-kind="compute" data-name="{escape(c.name)}" '
                     f'data-value="{c.value:.6g}" x1="{X(max(ridge, 10.0 ** lx0)):.1f}" y1="{y:.1f}" '
                     f'x2="{x1}" y2="{y:.1f}" stroke="{_color(c)}" stroke-width="2.5"/>')
        labels.append((y, f"{c.name} {si(c.value, 'FLOP/s')}", _color(c)))
    labels.sort()
    for (_, text, color), ly in zip(labels, _spread([w + 4 for w, _, _ in labels], y0 + 10, y1)):
        parts.append(f'<text class="ceiling-label" x="{x1 + 8}" y="{ly:.1f}" fill="{color}">'
                     f"{escape(text)}</text>")
    px, py = X(r.intensity), Y(r.flops_per_s)
    right = px < (x0 + x1) / 2
    parts.append(f'<circle class="roofline-point" cx="{px:.1f}" cy="{py:.1f}" r="{POINT_R}" '
                 f'fill="{POINT_COLOR}" stroke="#fff" stroke-width="1.5" data-intensity="{r.intensity:.6g}" '
                 f'data-flops-per-s="{r.flops_per_s:.6g}"/>')
    parts.append(f'<text x="{px + (10 if right else -10):.1f}" y="{py + 18:.1f}" '
                 f'text-anchor="{"start" if right else "end"}" fill="{POINT_COLOR}" font-weight="600" {HALO}>'
                 f'kernel: {si(r.flops_per_s, "FLOP/s")} at {r.intensity:.3g} FLOP/B</text>')
    if pmc is not None:
        cx, cy = X(pmc.intensity), Y(pmc.flops_per_s)
        if pmc.intensity_high > pmc.intensity * 1.001:  # the bytes are a range: so is the intensity
            parts.append(f'<line class="counter-range" x1="{cx:.1f}" y1="{cy:.1f}" x2="{X(pmc.intensity_high):.1f}" '
                         f'y2="{cy:.1f}" stroke="{COUNTER_COLOR}" stroke-width="2"/>')
        parts.append(f'<rect class="roofline-counter-point" x="{cx - POINT_R:.1f}" y="{cy - POINT_R:.1f}" '
                     f'width="{2 * POINT_R}" height="{2 * POINT_R}" fill="{COUNTER_COLOR}" stroke="#fff" '
                     f'stroke-width="1.5" data-intensity="{pmc.intensity:.6g}" '
                     f'data-flops-per-s="{pmc.flops_per_s:.6g}"/>')
        # its label above the square, on the other side from the kernel's (which sits below its circle)
        parts.append(f'<text class="counter-label" x="{cx + (-10 if right else 10):.1f}" y="{cy - 12:.1f}" '
                     f'text-anchor="{"end" if right else "start"}" fill="{COUNTER_COLOR}" font-weight="600" {HALO}>'
                     f'counters: {si(pmc.flops_per_s, "FLOP/s")} at {pmc.intensity:.3g} FLOP/B</text>')
    parts.append("</svg>")
    return "".join(parts)


def caption(r: Roofline) -> str:
    flops = ", ".join(f"{k} {si(v, 'FLOP')}" for k, v in sorted(r.flops_by_type.items()))
    ceilings = "".join(f"<li><b>{escape(c.name)}</b> {si(c.value, 'B/s' if c.kind == CeilingKind.MEMORY else 'FLOP/s')}: "
                       f"{escape(c.source)}</li>" for c in r.ceilings)
    lines = [f"<b>The point</b>: {escape(r.notes[0])}. "
             f"{si(r.flops, 'FLOP')} (the traced waves': {escape(flops)}) and {si(r.bytes, 'B')} "
             f"requested by VMEM instructions (ISA width × lanes; caches serve part of it, so the HBM "
             f"intensity is at least this) in {r.seconds * 1e6:,.3g} µs."]
    lines += [escape(n[:1].upper() + n[1:]) + "." for n in r.notes[1:]]
    return ("<p>" + " ".join(lines[:1]) + "</p>"
            + (f'<p class="note">{" ".join(lines[1:])}</p>' if lines[1:] else "")
            + _counters_caption(r)
            + f'<p><b>Ceilings</b>:</p><ul class="ceilings">{ceilings}</ul>')


def _counters_caption(r: Roofline) -> str:
    """What the counters' point is (report --pmc), or why the counters give none; nothing without
    counter files."""
    c = r.counters
    if c is None:
        return ""
    if not c.available:
        return f'<p class="counters-missing"><b>No point from the counters</b>: {escape(c.reason)}.</p>'
    span = ("" if c.bytes_low >= c.bytes * 0.999 else
            f" (a range down to {si(c.bytes_low, 'B')}: a counter is missing; the line spans the intensities)")
    return (f'<p class="counters"><b>The counters\' point</b> (square, {escape(short_kernel_name(c.kernel))}, '
            f"{c.dispatches:,} dispatch(es) in the counter files): the grid's {si(c.flops, 'FLOP')} from the "
            f"trace over {si(c.bytes, 'B')} read from L2 to the fabric by one dispatch{escape(span)}, in "
            f"{c.seconds * 1e6:,.3g} µs (the counters' median dispatch). Reads only: writes would lower the "
            "intensity; HBM, behind the Infinity Cache, may have moved fewer bytes.</p>")
