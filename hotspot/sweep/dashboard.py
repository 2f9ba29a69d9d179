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


# Column widths (fixed layout, so a long reason wraps inside its cell instead of widening the page),
# from what the columns hold, in characters: each column at least its longest header word plus the
# sort arrow, at most WORD_CAP for its longest word (a longer one is ellipsized), prose columns at
# least PROSE_MIN, each plus PADDING. When that adds up to more than BUDGET (what 1238 px of table in
# a 1280 px window holds at 8-9 px a character of 14 px text; measured in Chromium by
# tests/test_sweep_browser.py) the longest columns are brought down to a common width first, never
# below their header: short columns (numbers, arch) stay whole.
WORD_CAP = 24
PROSE_MIN = 14
PROSE = ("state", "plan")
PADDING = 1.5  # 6 px each side
ARROW = 2
BUDGET = 142


def _widths(columns: list[tuple[str, str, bool]], rows: list[list[tuple[str, str, str, str]]]) -> list[float]:
    """Per column, its width in % of the table."""
    import html
    import re

    floors, needs = [], []
    for i, (key, header, _) in enumerate(columns):
        floor = max(len(w) for w in header.split()) + ARROW + PADDING
        words = [len(w) for r in rows for w in html.unescape(re.sub(r"<[^>]+>", " ", r[i][1])).split()]
        need = max([floor, min(WORD_CAP, max(words, default=0)) + PADDING] +
                   ([PROSE_MIN + PADDING] if key in PROSE else []))
        floors.append(floor)
        needs.append(need)

    def capped(cap: float) -> list[float]:
        return [max(f, min(n, cap)) for f, n in zip(floors, needs)]

    if sum(needs) > BUDGET:  # the largest cap that fits (bisection: the total grows with the cap)
        lo, hi = 0.0, max(needs)
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if sum(capped(mid)) <= BUDGET else (lo, mid)
        needs = capped(lo)
    total = sum(needs)
    return [100 * n / total for n in needs]


def _words(text: str) -> str:
    """`text` escaped, each word an inline box of its own (`.w`): lines break between words only, and
    a word wider than its cell ends in an ellipsis instead of breaking (the cell's title has it)."""
    return " ".join(f'<span class="w">{escape(w)}</span>' for w in text.split())


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def _cells(row: EntryRow, base: Path, kernel_shown: str) -> list[tuple[str, str, str, str]]:
    """(sort value, html, css class, full text for the title) per column; `kernel_shown` the
    kernel's short form in the column (names.column: it tells the row from the others)."""
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
        # the short form shown (as much as tells the rows apart), the whole name on hover
        (kernel, _words(kernel_shown), "kernel", kernel),
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
    # the Slurm column only for a sweep that was submitted
    shown = [i for i, col in enumerate(COLUMNS) if col[0] != "slurm" or data.slurm_tasks is not None]
    columns = [COLUMNS[i] for i in shown]
    from hotspot.kernel_names import column

    kernels = column([(row.summary or NO_SUMMARY).kernel or "" for row in data.entries])
    cells = [[row_cells[i] for i in shown]
             for row_cells in (_cells(row, base, k) for row, k in zip(data.entries, kernels))]
    colgroup = "<colgroup>" + "".join(f'<col style="width: {w:.2f}%">' for w in _widths(columns, cells)) + "</colgroup>"
    head = "".join(f'<th data-key="{k}" data-numeric="{1 if num else 0}" title="{escape(h, quote=True)}">'
                   f"{_words(h)}</th>" for k, h, num in columns)
    body = []
    for row, row_cells in zip(data.entries, cells):
        tds = "".join(f'<td data-sort="{escape(v, quote=True)}"{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}'
                      + (f' title="{escape(title, quote=True)}"' if title else "") + f">{h}</td>"
                      for v, h, cls, title in row_cells)
        body.append(f'<tr class="state-{escape(row.state)}" data-name="{escape(row.name, quote=True)}">{tds}</tr>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            f'script-src \'unsafe-inline\'; img-src data:">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"counts\">{counts}</p>"
            f"<p class=\"muted\">{escape(data.sweep_dir)} · sorted by estimated headroom (the top plan "
            f"item's upper estimate); occupancy is theoretical / achieved waves per SIMD; click a header to sort (ascending first), an entry to open its report, job.log for its log.</p>"
            f'<table id="entries">{colgroup}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f"<script>{SCRIPT}</script></body></html>\n")
