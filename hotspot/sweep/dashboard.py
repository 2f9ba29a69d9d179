"""`hotspot sweep report --html`: one self-contained page comparing every entry of a sweep.

A table rendered on the server (so it reads without JavaScript), made sortable by a few lines of
inline script; each row links to the entry's own `hotspot report` page, relative to where the
dashboard is written so the folder can be copied as a whole. No external request of any kind.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from hotspot.render.sweep import duration_text
from hotspot.sweep_records import EntryRow, EntryStatus, ReportData, ReportRow, Summary

# An entry without a plan: every column of its summary blank.
NO_SUMMARY = Summary(None, None, None, None, None, None, None, None, None, None, None, None, None, False, None, None)

COLUMNS = (  # (key, header, numeric)
    ("name", "entry", False), ("state", "state", False), ("kernel", "kernel", False), ("arch", "arch", False),
    ("duration_ns", "avg ns", True), ("occ", "occupancy", True),
    ("limiter", "limiter", False), ("stall", "top stall", True), ("line", "hottest line", False),
    ("collapse", "collapse", False), ("plan", "top plan item", False),
    ("headroom", "headroom", True), ("slurm", "Slurm task", False))

# No word is ever broken inside (no `overflow-wrap: anywhere`/`break-word`, no `word-break`): cells
# wrap between words only, and every word is its own inline box (`.w`) no wider than its cell, shown
# with an ellipsis when longer (a path, a mangled kernel name), its cell's title holding the whole
# text on hover.
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.4em; } .counts span { margin-right: 1em; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: left; vertical-align: top;
         overflow-wrap: normal; word-break: normal; overflow: hidden; }
.w { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
     vertical-align: top; }
col.w-name { width: 8%; } col.w-state { width: 12%; } col.w-kernel { width: 10%; } col.w-arch { width: 5%; }
col.w-dur { width: 7%; } col.w-occ { width: 7.5%; } col.w-limiter { width: 6%; } col.w-stall { width: 7%; }
col.w-line { width: 8%; } col.w-collapse { width: 6%; } col.w-plan { width: 9%; } col.w-head { width: 6.5%; }
col.w-slurm { width: 8%; }
th { font-size: 13px; cursor: pointer; background: #f3f3f6; position: sticky; top: 0; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25B2"; } th[aria-sort=descending]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.state-failed td, tr.state-timed-out td { background: #fff0f0; } tr.state-empty td { background: #fffbe6; }
.muted { color: #777; } .reason { font-size: 12px; }
"""

SCRIPT = """
(function () {
  var table = document.getElementById('entries');
  var heads = table.querySelectorAll('th');
  heads.forEach(function (th, col) {
    th.addEventListener('click', function () {
      var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
      heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', dir);
      var numeric = th.dataset.numeric === '1';
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
        var c;
        if (numeric) {
          var fx = x === '' ? -Infinity : parseFloat(x), fy = y === '' ? -Infinity : parseFloat(y);
          c = fx - fy;
        } else { c = x.localeCompare(y); }
        return dir === 'ascending' ? c : -c;
      });
      rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
    });
  });
  document.body.setAttribute('data-ready', '1');
})();
"""


# Column widths (fixed layout): a long reason or kernel name wraps inside its cell instead of
# widening the table past the window.
COLGROUP = "<colgroup>" + "".join(
    f'<col class="w-{w}">' for w in ("name", "state", "kernel", "arch", "dur", "occ", "limiter", "stall", "line",
                                     "collapse", "plan", "head", "slurm")) + "</colgroup>"


def _words(text: str) -> str:
    """`text` escaped, each word an inline box of its own (`.w`): lines break between words only, and
    a word wider than its cell ends in an ellipsis instead of breaking (the cell's title has it)."""
    return " ".join(f'<span class="w">{escape(w)}</span>' for w in text.split())


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def _cells(row: EntryRow, base: Path) -> list[tuple[str, str, str, str]]:
    """(sort value, html, css class, full text for the title) per column."""
    from hotspot.render.tables import short_kernel_name

    s = row.summary or NO_SUMMARY
    name = _words(row.name)
    if row.report_html:
        href = escape(Path(os.path.relpath(row.report_html, base)).as_posix(), quote=True)
        name = f'<a href="{href}">{name}</a>'
    occ_t, occ_a = s.occupancy_theoretical, s.occupancy_achieved
    occ = "" if occ_t is None and occ_a is None else f"{occ_t if occ_t is not None else '?'} / " + \
        (f"{occ_a:.2f}" if occ_a is not None else "?")
    stall = s.top_stall_category
    line, top, head = s.hottest_line, s.top_plan_item, s.headroom_pct
    plan = ""
    if top:
        est = ""
        if top.estimate_low_pct is not None:
            est = f" ({top.estimate_low_pct:.0f}–{top.estimate_high_pct:.0f}%)"
        plan = f"{top.priority or ''} {top.title or top.id}{est}".strip()
    reason = row.reason or ""
    log_link = (f' <a class="log" href="{escape(Path(os.path.relpath(row.log, base)).as_posix(), quote=True)}">'
                '<span class="w">job.log</span></a>' if row.log else "")
    where = ""
    if row.host and row.state != EntryStatus.PENDING:
        gpu = row.device if row.device is not None else str(row.gpu)  # the physical device
        where = f"{row.host} GPU {gpu}"
    state = _words(row.state) + log_link + (f'<div class="muted">{_words(where)}</div>' if where else "") + \
        (f'<div class="reason muted">{_words(reason)}</div>' if reason else "")
    state_title = " · ".join(t for t in (row.state, where, reason) if t)
    task = row.slurm if isinstance(row, ReportRow) else None
    slurm_txt = f"{task.job_id} {task.state}" + (f" on {task.node}" if task.node else "") if task else ""
    line_txt = f"{line.file}:{line.line} ({_pct(line.share)})" if line else ""
    kernel = s.kernel or ""
    stall_txt = f"{stall} {_pct(s.top_stall_share)}" if stall else ""
    head_txt = "" if head is None else f"{head:.0f}%"
    return [
        (row.name, name, "", row.name),
        (row.state, state, "", state_title),
        # the short form shown (template arguments and parameters elided), the whole name on hover
        (kernel, _words(short_kernel_name(kernel) if kernel else ""), "kernel", kernel),
        (s.arch or "", _words(s.arch or ""), "", s.arch or ""),
        (str(s.duration_ns if s.duration_ns is not None else s.traced_dispatch_ns or ""),
         _words(duration_text(s)), "num", duration_text(s)),
        ("" if occ_a is None else str(occ_a), _words(occ), "num", occ),
        (s.occupancy_limiter or "", _words(s.occupancy_limiter or ""), "", s.occupancy_limiter or ""),
        ("" if s.top_stall_share is None else str(s.top_stall_share), _words(stall_txt), "num", stall_txt),
        (line_txt, _words(line_txt), "", line_txt),
        ("yes" if s.source_collapse else "", _words("yes" if s.source_collapse else ""), "", ""),
        (plan, _words(plan), "", plan),
        ("" if head is None else str(head), _words(head_txt), "num", head_txt),
        (slurm_txt, _words(slurm_txt), "", slurm_txt),
    ]


def render_dashboard(data: ReportData, base: Path) -> str:
    c = data.counts
    title = f"hotspot sweep: {Path(data.recipes.path or data.sweep_dir).name}"
    counts = "".join(f"<span>{escape(k)}: <b>{v}</b></span>" for k, v in c.items() if v)
    head = "".join(f'<th data-key="{k}" data-numeric="{1 if num else 0}" title="{escape(h, quote=True)}">'
                   f"{_words(h)}</th>" for k, h, num in COLUMNS)
    body = []
    for row in data.entries:
        tds = "".join(f'<td data-sort="{escape(v, quote=True)}"{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}'
                      + (f' title="{escape(title, quote=True)}"' if title else "") + f">{h}</td>"
                      for v, h, cls, title in _cells(row, base))
        body.append(f'<tr class="state-{escape(row.state)}" data-name="{escape(row.name, quote=True)}">{tds}</tr>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            f'script-src \'unsafe-inline\'; img-src data:">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"counts\">{counts}</p>"
            f"<p class=\"muted\">{escape(data.sweep_dir)} · sorted by estimated headroom (the top plan "
            f"item's upper estimate); occupancy is theoretical / achieved waves per SIMD; click a header to sort (ascending first), an entry to open its report, job.log for its log.</p>"
            f'<table id="entries">{COLGROUP}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f"<script>{SCRIPT}</script></body></html>\n")
