"""Text and markdown views of a `diff` Result (formatting only)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hotspot.render.tables import fit_text, heading, num, shorten, shorten_left, table
from hotspot.result import Result

ROWS_PER_KIND = 15  # text view; JSON has every row
CODE_CHANGES_SHOWN = 10
KIND_TITLES = {"total": "Totals per wave (latency: the time; stall, issue, idle: its parts)",
               "category": "Stall by category",
               "loop": "Stall by loop", "line": "Stall by source line",
               "load": "Blamed stall by load (what the waits wait for)"}

# How a signed percentage and an interval are written: the tables here and the verdict line
# (hotspot/diff/api.py) alike, so a row reads the same wherever it is printed.
MINUS = "\u2212"
# Joins "(q)" to the verdict word before it, so a narrow table never leaves it alone on a line
# (the words themselves keep plain spaces: `grep "within noise"` still finds them)
NO_BREAK = "\u00a0"


def signed(value: float, digits: int) -> str:
    return f"{value:+.{digits}f}".replace("-", MINUS)


def readable(value: float, digits: int) -> str:
    """`value` signed to `digits` decimals, or to as many more as it takes not to read as 0 when
    it is not (its first significant digit): a change of −0.04% prints "−0.04", not "−0.0"; an
    interval end of +0.3 prints "+0.3", not "+0", and one of +0.002 "+0.002" (an interval that
    excludes 0 never shows an end at 0)."""
    if value and math.isfinite(value):
        more = digits
        while round(value, more) == 0:
            more += 1
        return signed(value, more)
    return signed(value, digits)


def change_pct(value: float) -> str:
    """A per-wave change in percent: `−9.6%`."""
    return readable(value, 1) + "%"


def interval(ci: Sequence[float] | None) -> str:
    """`[−14, −5]` (whole percent, see `readable`); "" without one."""
    if ci is None:
        return ""
    return f"[{readable(ci[0], 0)}, {readable(ci[1], 0)}]"


def render_text(result: Result[Any]) -> str:
    return _render(result.data, markdown=False)


def render_markdown(result: Result[Any]) -> str:
    return _render(result.data, markdown=True)


def change_text(r: Any) -> str:
    """`-9.6% [−14, −5]`: the change of cycles per wave and its interval (`readable`: an end that
    would round to 0 gets a decimal)."""
    if r.change_pct is None or r.ci_pct is None:
        return ""
    return f"{change_pct(r.change_pct)} {interval(r.ci_pct)}"


def _verdict_cell(r: Any, level: float, markdown: bool = False) -> str:
    words = _verdict_words(r, level)
    return words if markdown else words.replace(" (q)", NO_BREAK + "(q)")


def _verdict_words(r: Any, level: float) -> str:
    if not r.tested:
        return "not tested"
    if r.varies_run_to_run:
        return "varies run to run"
    if r.significant:
        return "beyond noise"
    # the interval excludes 0, but not after the false-discovery correction over every tested row
    return "within noise (q)" if r.p is not None and r.p < 1 - level else "within noise"


def _q(r: Any, level: float) -> str:
    if r.q is None:
        return ""
    return "<0.001" if r.q < 0.001 else q_text(r.q, 1 - level)


def q_text(q: float, threshold: float) -> str:
    """A q-value to 2 significant digits, or as many more as it takes to read on its side of the
    threshold (q ≤ threshold: significant): 0.0504 prints "0.0504", not "0.050"."""
    for digits in range(2, 17):
        text = f"{q:.{digits}g}"
        shown = float(text)
        if (shown <= threshold) == (q <= threshold) and (shown != threshold or q == threshold):
            return text if "e" not in text else f"{q:.{digits}f}"
    return repr(q)


def _label(r: Any, kind: str) -> str:
    if kind == "loop":  # "#471-#1910 /long/path/k.py:650-960" -> "#471-#1910 k.py:650-960"
        rows_range, _, where = r.label.partition(" ")
        label = f"{rows_range} {where.rsplit('/', 1)[-1]}".strip()
    elif kind in ("line", "load"):
        label = r.label.rsplit("/", 1)[-1]
    else:
        label = r.label  # the table fits it to its column (a `#row` it starts with kept)
    return label + {"mnemonics": " (moved)", "structure": " (bounds moved)"}.get(str(r.matched_by), "")


def _runs(r: Any) -> str:
    """Executions per wave of the row's instructions (a loop: iterations), `a → b` when they
    changed: a per-wave change made of fewer runs, not of cheaper ones, shows here."""
    if r.executions_before is None and r.executions_after is None:
        return ""
    b, a = r.executions_before or 0.0, r.executions_after or 0.0
    fb, fa = _count(b), _count(a)
    return fb if fb == fa else f"{fb} \u2192 {fa}"


def _count(v: float) -> str:
    return num(round(v)) if v >= 10 else f"{v:.1f}".rstrip("0").rstrip(".")


def _code_section(code: Any, markdown: bool) -> str:
    if markdown:
        return "\n".join([f"code: {code.summary}", *(f"- {line.strip()}" for line in
                                                     _code_section(code, False).splitlines()[1:])])
    lines = [f"code: {code.summary}"]
    for c in code.changes[:CODE_CHANGES_SHOWN]:
        where = ", ".join(shorten_left(s.rsplit("/", 1)[-1], 40) for s in c.sources[:3]) or "no source"
        isa = (c.after_isa or c.before_isa)[:1]
        lines.append(f"  {c.kind} {max(c.before, c.after)} instruction(s) at {where}"
                     + (f": {shorten(isa[0], 60)}" if isa else ""))
    if len(code.changes) > CODE_CHANGES_SHOWN:
        lines.append(f"  (+{len(code.changes) - CODE_CHANGES_SHOWN} more regions in --format json)")
    return "\n".join(lines)


def _render(d: Any, markdown: bool) -> str:
    out = []
    from hotspot.kernel_names import short_kernel_name

    title = f"hotspot diff: {short_kernel_name(d.before.kernel)}"
    if d.before.kernel != d.after.kernel:
        title += f" vs {short_kernel_name(d.after.kernel)}"
    out.append(f"# {title}" if markdown else title)
    info = [[side, s.path, f"{len(s.dispatches)} dispatch(es)", num(s.waves)]
            for side, s in (("before", d.before), ("after", d.after))]
    out.append(table(info, ["", "input", "", "waves"], markdown))
    out.append(_code_section(d.code, markdown))
    head = [f"verdict: {d.summary.verdict}"]
    if d.summary.advice:
        head.append(f"advice: {d.summary.advice}")
    head.append(f"noise: {d.noise.note}")
    head.append(f"test: {d.noise.test}; seed {d.noise.seed}")
    head.append("before/after: cycles per traced wave; change: after vs before per wave, with its "
                "{:.0%} interval; runs: executions per wave; q: false discovery rate"
                .format(d.noise.level))
    out.append("\n".join(f"- {h}" for h in head) if markdown else fit_text("\n".join(head)))
    for title, rows in (("Beyond capture-to-capture noise", [r for r in d.rows if r.significant]),
                        ("Varies run to run (same code, issue cycles unchanged)",
                         [r for r in d.rows if r.varies_run_to_run])):
        if rows:
            out.append(heading(title, markdown) + "\n" + _flagged_table(rows, markdown, d.noise.level))
    for kind, title_text in KIND_TITLES.items():
        rows = [r for r in d.rows if r.kind == kind]
        if not rows:
            continue
        shown = rows if kind in ("total", "category") else rows[:ROWS_PER_KIND]
        body = []
        for r in shown:
            label = _label(r, kind)
            body.append([label, num(round(r.before)), num(round(r.after)), change_text(r),
                         _runs(r) if kind != "total" else "", _q(r, d.noise.level),
                         _verdict_cell(r, d.noise.level, markdown)])
        more = f"\n(+{len(rows) - len(shown)} more rows in --format json)" if len(shown) < len(rows) else ""
        out.append(heading(title_text, markdown) + "\n"
                   + table(body, ["", "before", "after", "change [95% CI]", "runs", "q", "verdict"],
                           markdown)
                   + more)
    return "\n\n".join(out)


def _flagged_table(rows: list[Any], markdown: bool, level: float) -> str:
    """The first rows of a flagged list (moved, or varying run to run) and how many more JSON has."""
    body = [[_label(r, r.kind), r.kind, num(round(r.before)), num(round(r.after)), change_text(r),
             _runs(r) if r.kind != "total" else "", _q(r, level)] for r in rows[:ROWS_PER_KIND]]
    more = f"\n(+{len(rows) - len(body)} more in --format json)" if len(body) < len(rows) else ""
    return table(body, ["", "row", "before", "after", "change [95% CI]", "runs", "q"], markdown) + more
