"""Text and markdown views of a `diff` Result (formatting only)."""

from __future__ import annotations

from typing import Any

from hotspot.render.tables import heading, num, shorten, shorten_left, table
from hotspot.result import Result

LABEL_WIDTH = 64
ROWS_PER_KIND = 15  # text view; JSON has every row
KIND_TITLES = {"total": "Totals", "category": "Stall by category", "line": "Stall by source line",
               "load": "Blamed stall by load (what the waits wait for)"}


def render_text(result: Result) -> str:
    return _render(result.data, markdown=False)


def render_markdown(result: Result) -> str:
    return _render(result.data, markdown=True)


def _delta(r: Any) -> tuple[str, str]:
    if not r.significant:
        return "within noise", ""
    pct = f"{r.delta_pct:+.1f}%" if r.delta_pct is not None else "new"
    return f"{r.delta:+,.0f}", pct


def _render(d: Any, markdown: bool) -> str:
    out = []
    from hotspot.render.tables import short_kernel_name

    title = f"hotspot diff: {short_kernel_name(d.before.kernel)}"
    if d.before.kernel != d.after.kernel:
        title += f" vs {short_kernel_name(d.after.kernel)}"
    out.append(f"# {title}" if markdown else title)
    info = [["before", d.before.path, f"{len(d.before.dispatches)} dispatch(es)", num(d.before.waves),
             num(round(d.before.total_stall))],
            ["after", d.after.path, f"{len(d.after.dispatches)} dispatch(es)", num(d.after.waves),
             num(round(d.after.total_stall))]]
    out.append(table(info, ["", "input", "", "waves", "total stall"], markdown))
    scale = ("\nrows: cycles per traced wave (the sides traced different numbers of waves)"
             if d.normalization == "per-wave" else "")
    out.append(f"verdict: {d.summary.verdict}\nnoise: {d.noise.note}{scale}")
    for kind, title_text in KIND_TITLES.items():
        rows = [r for r in d.rows if r.kind == kind]
        if not rows:
            continue
        shown = rows if kind in ("total", "category") else rows[:ROWS_PER_KIND]
        body = []
        for r in shown:
            delta, pct = _delta(r)
            label = (shorten_left(r.label.rsplit("/", 1)[-1], LABEL_WIDTH) if kind in ("line", "load")
                     else shorten(r.label, LABEL_WIDTH))
            if r.matched_by == "mnemonics":
                label += " (moved)"
            body.append([label, num(round(r.before)), num(round(r.after)), delta, pct])
        more = f"\n(+{len(rows) - len(shown)} more rows in --format json)" if len(shown) < len(rows) else ""
        out.append(heading(title_text, markdown) + "\n"
                   + table(body, ["", "before", "after", f"delta ({d.unit})", "delta %"], markdown)
                   + more)
    return "\n\n".join(out)
